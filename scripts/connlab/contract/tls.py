"""TLS for a window, pure: the throwaway certificate's file names and openssl arguments, the server's ssl
settings and PgBouncer's client-side TLS settings, for paths given as text. The harness (connlab.lab.tls)
and the check-it-yourself block build the same settings from these, with a folder or a shell variable.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

CERT_NAME = "server.crt"
KEY_NAME = "server.key"
SUBJECT = "/CN=localhost"
# TLS workloads' clients; every other window of a TLS experiment says disable, or libpq's default
# (prefer) would take TLS wherever the server offers it.
SSLMODE_TLS = "require"
SSLMODE_PLAIN = "disable"


def openssl_arguments(folder: Path | str) -> list[str]:
    """`openssl` arguments for an RSA 2048 self-signed pair for localhost, valid a day, no passphrase."""
    return ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", SUBJECT, "-days", "1",
            "-keyout", f"{folder}/{KEY_NAME}", "-out", f"{folder}/{CERT_NAME}"]  # fmt: skip


def server_settings(folder: Path | str) -> dict[str, object]:
    """postgresql.conf settings: TLS on, with the pair in `folder` (clients still choose it by sslmode)."""
    return {"ssl": True, "ssl_cert_file": f"{folder}/{CERT_NAME}", "ssl_key_file": f"{folder}/{KEY_NAME}"}


def pgbouncer_client_tls(folder: Path | str, sslmode: str = SSLMODE_TLS) -> dict[str, object]:
    """PgBouncer settings for TLS between clients and the pooler (`require` refuses plain TCP clients)."""
    return {
        "client_tls_sslmode": sslmode,
        "client_tls_key_file": f"{folder}/{KEY_NAME}",
        "client_tls_cert_file": f"{folder}/{CERT_NAME}",
    }


# A pooler in an experiment with TLS serves TLS and plain windows alike, so it allows TLS instead of
# requiring it; each window's clients choose by their sslmode (require or disable).
POOLER_SSLMODE = "allow"
# Poolers whose client-side TLS settings are known: kind -> those settings for a certificate folder.
POOLER_CLIENT_TLS: dict[str, Callable[[Path | str], dict[str, object]]] = {
    "pgbouncer": partial(pgbouncer_client_tls, sslmode=POOLER_SSLMODE),
}
