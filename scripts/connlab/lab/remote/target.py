"""What `connlab run --server URL --server-cores N [--keep]` was told, parsed once into the value the rest
of the remote run reads (`RemoteTarget`): the URL (`ServerUrl`: host, port, user, dbname; the password, if it
names one, in memory only), the server's cores as the user states them, and whether to keep the harness's
database at the end.

A URL may name nothing that would not reach pgbench and the poolers: anything else is refused, in one line,
rather than silently dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import psycopg
from psycopg.conninfo import conninfo_to_dict

from connlab.contract.tls import SSLMODE_PLAIN
from connlab.errors import LabError

DEFAULT_PORT = 5432
DEFAULT_DBNAME = "postgres"
# What a URL may say besides host, port, user, password and dbname: nothing else reaches pgbench or the
# poolers, so anything more is refused rather than silently dropped.
URL_KEYS = frozenset({"host", "port", "user", "password", "dbname", "sslmode", "connect_timeout"})
# libpq's sslmodes that can do without TLS: the harness's windows say sslmode=disable.
PLAIN_SSLMODES = frozenset({"disable", "allow", "prefer"})


@dataclass(frozen=True)
class ServerUrl:
    """A server URL, parsed. `password` is kept in memory only; `shown` is how messages and files name it."""

    host: str
    port: int
    user: str
    dbname: str
    password: str | None = field(default=None, repr=False)

    @property
    def shown(self) -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{self.dbname}"

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


def parse_server_url(url: str) -> ServerUrl:
    """The URL as a ServerUrl; LabError naming what is wrong (never repeating a password)."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.ProgrammingError as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else "cannot be parsed"
        raise LabError(
            f"--server: not a PostgreSQL URL ({reason}); e.g. postgresql://user@host:5432/postgres"
        ) from None
    unknown = sorted(set(parts) - URL_KEYS)
    if unknown:
        raise LabError(
            f"--server: {', '.join(unknown)}: not supported in a server URL (host, port, user, dbname)"
        )
    host, user = str(parts.get("host") or ""), str(parts.get("user") or "")
    if not host or host.startswith("/") or "," in host:
        raise LabError(
            "--server: name one server host reached over TCP, e.g. postgresql://user@db.example:5432/"
        )
    if not user:
        raise LabError("--server: name the user, e.g. postgresql://user@host:5432/postgres")
    sslmode = str(parts.get("sslmode") or SSLMODE_PLAIN)
    if sslmode not in PLAIN_SSLMODES:
        raise LabError(
            f"--server: sslmode={sslmode}: the harness measures a named server without TLS "
            f"(sslmode=disable); TLS to a named server is not set up"
        )
    port_text = str(parts.get("port") or DEFAULT_PORT)
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise LabError(f"--server: port {port_text!r} is not a TCP port")
    password = parts.get("password")
    return ServerUrl(host, int(port_text), user, str(parts.get("dbname") or DEFAULT_DBNAME),
                     str(password) if password else None)  # fmt: skip


@dataclass(frozen=True)
class RemoteTarget:
    """What `connlab run --server` was told."""

    url: ServerUrl
    stated_cores: float
    keep: bool = False
    say: Callable[[str], None] = print


def parse_target(
    server_url: str, stated_cores: float | None, keep: bool, say: Callable[[str], None]
) -> RemoteTarget:
    """The options as one value, the URL checked first; LabError where one is missing or wrong."""
    url = parse_server_url(server_url)
    if stated_cores is None or stated_cores <= 0:
        raise LabError("--server needs --server-cores N: the server's cores, which SQL cannot see")
    return RemoteTarget(url, stated_cores, keep, say)
