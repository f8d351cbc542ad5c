"""The throwaway certificate and the TLS settings: the pair openssl makes (key 600, owned by postgres),
and, on a throwaway cluster, TLS sessions to the server and to PgBouncer with client_tls."""

from __future__ import annotations

import subprocess
from pathlib import Path

import psycopg
import pytest

from connlab.contract.poolers.setup import PoolerSetup
from connlab.errors import LabError
from connlab.lab import cluster as cluster_module
from connlab.lab import tls
from connlab.lab.cluster import Cluster
from connlab.lab.host import free_port
from connlab.poolers.pgbouncer.adapter import PgBouncer

SSL_OF_THIS_SESSION = "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()"


def test_settings_name_the_pair() -> None:
    files = tls.TlsFiles(cert=Path("/x/server.crt"), key=Path("/x/server.key"))
    assert tls.server_settings(files) == {
        "ssl": True, "ssl_cert_file": "/x/server.crt", "ssl_key_file": "/x/server.key",
    }  # fmt: skip
    assert tls.pgbouncer_client_tls(files) == {
        "client_tls_sslmode": "require", "client_tls_key_file": "/x/server.key",
        "client_tls_cert_file": "/x/server.crt",
    }  # fmt: skip
    assert tls.client_conninfo(6432, "bench") == (
        "host=127.0.0.1 port=6432 user=postgres dbname=bench sslmode=require"
    )


def test_missing_openssl_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(tls.shutil, "which", lambda name: None)
    with pytest.raises(LabError, match=r"^openssl: not available on this machine"):
        tls.make_certificate(tmp_path)


@pytest.mark.process
@pytest.mark.usefixtures("require_root")
def test_certificate_is_self_signed_for_localhost_with_a_private_key(shared_tmp: Path) -> None:
    files = tls.make_certificate(shared_tmp / "tls")
    assert files.key.stat().st_mode & 0o777 == 0o600
    assert files.key.owner() == files.cert.owner() == "postgres"
    shown = subprocess.run(
        ["openssl", "x509", "-in", str(files.cert), "-noout", "-subject", "-issuer"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "subject=CN = localhost" in shown and "issuer=CN = localhost" in shown


@pytest.mark.e2e
@pytest.mark.usefixtures("require_root", "require_postgres")
def test_server_and_pgbouncer_speak_tls(shared_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster_module, "LAB_DIR", shared_tmp / "lab")
    files = tls.make_certificate(shared_tmp / "tls")  # beside the cluster: create() empties its folder
    with Cluster("e2e-tls", tls.server_settings(files)) as cluster:
        assert cluster.port is not None
        with psycopg.connect(tls.client_conninfo(cluster.port, "postgres"), connect_timeout=10) as conn:
            assert conn.execute(SSL_OF_THIS_SESSION).fetchone() == (True,)
        setup = PoolerSetup(
            root=cluster.root / "pgbouncer", port=free_port(), server_host=str(cluster.socket_dir),
            server_port=cluster.port, databases=["postgres"], settings=tls.pgbouncer_client_tls(files),
        )  # fmt: skip
        with PgBouncer(setup) as pooler:
            with psycopg.connect(tls.client_conninfo(pooler.port, "postgres"), connect_timeout=10) as conn:
                assert conn.pgconn.ssl_in_use
            plain = f"host=127.0.0.1 port={pooler.port} user=postgres dbname=postgres sslmode=disable"
            with pytest.raises(psycopg.OperationalError):
                psycopg.connect(plain, connect_timeout=10).close()
