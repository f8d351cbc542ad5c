"""A PostgreSQL on the far side of a real TCP hop, for the tests of `connlab run --server`: Debian's
PostgreSQL, run as the postgres user inside a network namespace joined to this host by a veth pair.

The server listens only on the namespace's address (10.213.N.2); this host reaches it from 10.213.N.1 over
the veth pair, as a client host reaches a database server. Its unix socket is in a folder of the test's, so
the test itself administers it as postgres (trust), the way its owner would. Names are unique per test
process (its PID), and everything is removed on leaving, whatever happened.

pg_hba.conf: SCRAM over the network for every role; role `tls_only` only over TLS (the server has a
self-signed certificate), so that a client without TLS is refused for it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

PORT = 5432
# Low on purpose: the tests see the plan fitted to it.
MAX_CONNECTIONS = 20
# pg_dump writes a random key into each dump (\restrict, since 15.14); a fixed one makes dumps comparable.
RESTRICT_KEY = ["--restrict-key=connlabtest"]
ROLES = {"tester": "LOGIN CREATEDB", "nocreate": "LOGIN", "tls_only": "LOGIN CREATEDB"}


def _run(*command: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: {result.stderr.strip() or result.stdout.strip()}")


def _bindir() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    assert found, "Debian's PostgreSQL server binaries are not installed"
    return found[-1].parent


@dataclass
class NamespacedServer:
    folder: Path
    namespace: str
    host_link: str
    host_ip: str
    server_ip: str
    bindir: Path
    passwords: dict[str, str] = field(default_factory=dict)

    @property
    def data_dir(self) -> Path:
        return self.folder / "data"

    @property
    def socket_dir(self) -> Path:
        return self.folder / "sock"

    def url(self, user: str = "tester", with_password: bool = False, port: int = PORT) -> str:
        secret = f":{self.passwords[user]}" if with_password else ""
        return f"postgresql://{user}{secret}@{self.server_ip}:{port}/postgres"

    def admin(self, dbname: str = "postgres") -> psycopg.Connection:
        """The server's owner, over its unix socket (trust)."""
        return psycopg.connect(
            host=str(self.socket_dir), port=PORT, user="postgres", dbname=dbname, autocommit=True
        )

    def execute(self, sql: str, dbname: str = "postgres") -> list[tuple]:
        with self.admin(dbname) as conn:
            cursor = conn.execute(sql)  # type: ignore[arg-type]
            return cursor.fetchall() if cursor.description else []

    def databases(self) -> set[str]:
        return {row[0] for row in self.execute("SELECT datname FROM pg_database")}

    def dump(self) -> dict[str, bytes]:
        """Every database but the harness's, and the roles, as pg_dump and pg_dumpall write them."""
        dumps = {}
        common = ["-h", str(self.socket_dir), "-p", str(PORT), "-U", "postgres", *RESTRICT_KEY]
        for name in sorted(self.databases() - {"template0", "bench"}):
            dumps[name] = subprocess.run(
                [str(self.bindir / "pg_dump"), *common, "-d", name], check=True, capture_output=True
            ).stdout
        dumps["roles"] = subprocess.run(
            [str(self.bindir / "pg_dumpall"), *common, "--roles-only"], check=True, capture_output=True
        ).stdout
        return dumps


def _quietly(*command: str) -> None:
    """A teardown step: it runs whatever happened before, and its failure hides nothing."""
    subprocess.run(command, capture_output=True, timeout=60, check=False)


def _as_postgres(*command: str | Path) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *map(str, command)]


def _in_namespace(namespace: str, *command: str) -> list[str]:
    return ["ip", "netns", "exec", namespace, *command]


def _owned_by_postgres(*paths: Path) -> None:
    for path in paths:
        shutil.chown(path, "postgres", "postgres")


def _certificate(folder: Path) -> None:
    key, certificate = folder / "server.key", folder / "server.crt"
    _run(
        "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=connlab-test", "-days", "1",
        "-keyout", str(key), "-out", str(certificate),
    )  # fmt: skip
    key.chmod(0o600)
    _owned_by_postgres(key, certificate)


@contextlib.contextmanager
def namespaced_server(
    max_connections: int = MAX_CONNECTIONS, second: bool = False
) -> Iterator[NamespacedServer]:
    """second: a second server beside the first in the same test process (names and subnet of its own).
    Each thing made is undone on leaving, in reverse order, whatever happened: the server stopped, the veth
    pair and the namespace deleted, the folder removed."""
    pid = os.getpid() * 2 + int(second)
    number = pid % 250 + 1
    namespace, host_link, far_link = f"clns{pid}", f"clv{pid}h", f"clv{pid}n"
    host_ip, server_ip = f"10.213.{number}.1", f"10.213.{number}.2"
    with contextlib.ExitStack() as undo:
        folder = Path(tempfile.mkdtemp(prefix="clns-", dir="/tmp"))
        undo.callback(shutil.rmtree, folder, ignore_errors=True)
        folder.chmod(0o755)
        server = NamespacedServer(folder, namespace, host_link, host_ip, server_ip, _bindir())
        _run("ip", "netns", "add", namespace)
        undo.callback(_quietly, "ip", "netns", "del", namespace)
        _run("ip", "link", "add", host_link, "type", "veth", "peer", "name", far_link)
        undo.callback(_quietly, "ip", "link", "del", host_link)
        _run("ip", "link", "set", far_link, "netns", namespace)
        _run("ip", "addr", "add", f"{host_ip}/24", "dev", host_link)
        _run("ip", "link", "set", host_link, "up")
        _run(*_in_namespace(namespace, "ip", "addr", "add", f"{server_ip}/24", "dev", far_link))
        _run(*_in_namespace(namespace, "ip", "link", "set", far_link, "up"))
        _run(*_in_namespace(namespace, "ip", "link", "set", "lo", "up"))
        for sub in (server.data_dir, server.socket_dir):
            sub.mkdir()
        _certificate(folder)
        (folder / "server.log").touch()
        _owned_by_postgres(server.data_dir, server.socket_dir, folder / "server.log")
        _run(
            *_as_postgres(
                server.bindir / "initdb", "-D", server.data_dir, "-U", "postgres", "--auth-local=trust",
                "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync",
            )
        )  # fmt: skip
        settings = {
            "listen_addresses": f"'{server_ip}'",
            "port": PORT,
            "unix_socket_directories": f"'{server.socket_dir}'",
            "max_connections": max_connections,
            "password_encryption": "'scram-sha-256'",
            "ssl": "on",
            "ssl_cert_file": f"'{folder / 'server.crt'}'",
            "ssl_key_file": f"'{folder / 'server.key'}'",
            "fsync": "off",
            "shared_buffers": "'64MB'",
        }
        with (server.data_dir / "postgresql.conf").open("a") as conf:
            conf.write("".join(f"{key} = {value}\n" for key, value in settings.items()))
        (server.data_dir / "pg_hba.conf").write_text(
            "local all all trust\n"
            f"hostssl all tls_only {host_ip}/32 scram-sha-256\n"
            f"host all tls_only {host_ip}/32 reject\n"
            f"host all all {host_ip}/32 scram-sha-256\n"
        )
        pg_ctl = [server.bindir / "pg_ctl", "-D", server.data_dir]
        _run(*_in_namespace(namespace, *_as_postgres(*pg_ctl, "-l", folder / "server.log", "-w", "start")))
        undo.callback(_quietly, *_as_postgres(*pg_ctl, "-m", "immediate", "-w", "stop"))
        for role, options in ROLES.items():
            server.passwords[role] = secrets.token_urlsafe(18)
            server.execute(f"CREATE ROLE {role} {options} PASSWORD '{server.passwords[role]}'")
        # What the harness must never touch: another database, and another schema of the one it connects to.
        server.execute("CREATE DATABASE other")
        server.execute(
            "CREATE TABLE accounts (id int PRIMARY KEY, note text); "
            "INSERT INTO accounts SELECT g, md5(g::text) FROM generate_series(1, 100) g",
            "other",
        )
        server.execute(
            "CREATE SCHEMA app; CREATE TABLE app.orders (id int, total numeric); "
            "INSERT INTO app.orders VALUES (1, 9.5), (2, 12)"
        )
        yield server
