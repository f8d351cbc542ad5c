"""A throwaway self-signed certificate for TLS windows, and the settings that use it.

Contract: `make_certificate(folder)` runs openssl once (RSA 2048, CN=localhost, valid one day) and
returns `TlsFiles`; `server_settings(files)` are the `Cluster` settings for `ssl = on`;
`pgbouncer_client_tls(files)` are PgBouncer's client-side TLS settings; `client_conninfo(...)` is the
connection string pgbench and psql take for `sslmode=require`.

Traps:
- The key must be mode 600 and owned by the server's user: PostgreSQL refuses a key others can read
  ("private key file ... has group or world access") and PgBouncer, running as postgres, must read it.
- `Cluster.create()` empties the cluster's folder first, so the certificate goes beside it (a folder of
  its own), not inside it; the caller removes that folder with the run.
- `-nodes`: no passphrase, or the server would stop at start waiting for one.
- pgbench's -h/-p flags cannot carry sslmode; it takes a connection string as its database argument (or
  PGSSLMODE in its environment), and with -C every transaction pays a new TLS handshake.
- Nothing here verifies the certificate (`require` encrypts, it does not authenticate the server): right
  for measuring the handshake's cost on loopback, wrong for anything else.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from connlab.contract import tls as pure
from connlab.contract.names import SERVER_USER
from connlab.errors import LabError
from connlab.lab.host import chown_to_server_user

CERT_NAME = pure.CERT_NAME
KEY_NAME = pure.KEY_NAME
OPENSSL_TIMEOUT_S = 60


@dataclass(frozen=True)
class TlsFiles:
    cert: Path
    key: Path


def openssl_command(folder: Path) -> list[str]:
    openssl = shutil.which("openssl")
    if openssl is None:
        raise LabError("openssl: not available on this machine; install it (package openssl) for TLS windows")
    return [openssl, *pure.openssl_arguments(folder)]


def make_certificate(folder: Path) -> TlsFiles:
    """A fresh self-signed pair in `folder` (created if needed), key 600, both owned by postgres."""
    folder.mkdir(parents=True, exist_ok=True)
    chown_to_server_user(folder)
    result = subprocess.run(
        openssl_command(folder), capture_output=True, text=True, timeout=OPENSSL_TIMEOUT_S
    )
    if result.returncode != 0:
        detail = result.stderr.strip().splitlines()
        raise LabError(f"openssl could not make a certificate: {detail[-1] if detail else result.returncode}")
    files = TlsFiles(cert=folder / CERT_NAME, key=folder / KEY_NAME)
    files.key.chmod(0o600)
    files.cert.chmod(0o644)
    for path in (files.key, files.cert):
        chown_to_server_user(path)
    return files


def server_settings(files: TlsFiles) -> dict[str, object]:
    """postgresql.conf settings: TLS on, with this pair (clients still choose it with sslmode)."""
    return pure.server_settings(files.cert.parent)


def pgbouncer_client_tls(files: TlsFiles, sslmode: str = pure.SSLMODE_TLS) -> dict[str, object]:
    """PgBouncer settings for TLS between clients and the pooler (`require` refuses plain clients)."""
    return pure.pgbouncer_client_tls(files.cert.parent, sslmode)


def client_conninfo(port: int, dbname: str, user: str = SERVER_USER, sslmode: str = "require") -> str:
    """The connection string for pgbench/psql over TCP loopback with TLS."""
    return f"host=127.0.0.1 port={port} user={user} dbname={dbname} sslmode={sslmode}"
