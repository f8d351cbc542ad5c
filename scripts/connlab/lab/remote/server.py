"""A PostgreSQL server the user names, reached over TCP from this host (its URL parsed before, by
connlab.lab.remote.target): its facts over SQL, the round trip to it, and the one database the harness may
touch there.

The harness never runs initdb, never places the server in a cgroup and never creates a role there: it
creates a database of its own (`bench`, marked with a comment that says so), works only inside it, and drops
it at the end. A database of that name without the mark is someone else's: the run is refused. The URL's
dbname is the database it connects to for that (`postgres` when the URL names none).

`RemoteServer` answers what the harness asks of a throwaway cluster (connlab.lab.cluster.Cluster): its
connections, `execute`, pgbench's flags, health and readiness; starting and pausing are no-ops.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import psycopg
import psycopg.sql
from psycopg.conninfo import make_conninfo

from connlab.contract.names import BENCH_DB
from connlab.contract.remote import OWN_DATABASE_MARK
from connlab.contract.tls import SSLMODE_PLAIN
from connlab.errors import LabError
from connlab.interrupts import hold_signals
from connlab.lab.remote.target import DEFAULT_DBNAME, ServerUrl

# The harness's own connections: an unreachable or frozen server must fail them, not hang the run.
CONNECT_TIMEOUT_S = 10
# Round trips timed before each window; their median is the window's server_rtt_ms.
RTT_SAMPLES = 15
# Connections the harness itself holds while a window runs (its probe and its counters): a window's clients
# get what max_connections leaves after these.
HARNESS_CONNECTIONS = 3
SETTINGS = (
    "max_connections", "shared_buffers", "ssl", "password_encryption", "superuser_reserved_connections",
    "reserved_connections",
)  # fmt: skip


def connect_problem(url: ServerUrl, error: BaseException) -> str:
    """One line saying why the server refused or could not be reached, in terms of what to do."""
    text = str(error).strip()
    first = text.splitlines()[0] if text else type(error).__name__
    lowered = text.lower()
    if "password authentication failed" in lowered:
        return (
            f"{url.shown}: wrong password for user {url.user} "
            f"(the server says: password authentication failed)"
        )
    if "no password supplied" in lowered:
        return f"{url.shown}: no password for user {url.user}: give it in the URL, PGPASSWORD or ~/.pgpass"
    # "no pg_hba.conf entry ..." where only hostssl lines match, "pg_hba.conf rejects ..." where a line says
    # reject without TLS; "no encryption" (or "SSL off" before PostgreSQL 14) says TLS is what was missing.
    refused = "no pg_hba.conf entry" in lowered or "pg_hba.conf rejects" in lowered
    if refused and ("no encryption" in lowered or "ssl off" in lowered):
        return (
            f"{url.shown}: the server requires TLS for user {url.user}, and the harness measures a named "
            f"server without it (sslmode=disable): allow this client a non-TLS connection (a `host` line in "
            f"pg_hba.conf) to measure it"
        )
    if "no pg_hba.conf entry" in lowered:
        return f"{url.shown}: the server's pg_hba.conf lets no connection in from here for user {url.user}"
    return f"cannot reach {url.shown}: {first.removeprefix('connection failed: ')}"


@dataclass(frozen=True)
class ServerFacts:
    """What SQL tells of the server."""

    version: str
    settings: dict[str, str]
    superuser: bool
    may_checkpoint: bool
    other_connections: int  # client backends of anyone at the time it was asked, the harness's own left out

    @property
    def max_connections(self) -> int:
        return int(self.settings["max_connections"])

    @property
    def connection_room(self) -> int:
        """Connections a window's clients may open: max_connections less the reserved ones, those others
        hold now, and the harness's own."""
        reserved = int(self.settings.get("superuser_reserved_connections", "0"))
        reserved += int(self.settings.get("reserved_connections", "0"))
        return self.max_connections - reserved - self.other_connections - HARNESS_CONNECTIONS


class RemoteServer:
    """The named server, as the harness's bench uses a cluster. `root` is the run's private folder on this
    host (mode 700): the poolers' files and the windows' transaction logs."""

    def __init__(self, url: ServerUrl, root: Path, bindir: Path) -> None:
        self.url = url
        self.name = url.address
        self.root = root
        self.socket_dir = root  # no socket of the server here: the poolers reach it over TCP
        self.bindir = bindir
        self.host, self.port = url.host, url.port
        self.version = ""
        self.budget: object | None = None
        # Statements this role may not run on the server, and why: the run goes on without them.
        self.skipped: dict[str, str] = {}

    # -- connections ----------------------------------------------------------------------------------
    def conninfo(self, dbname: str | None = None, user: str | None = None) -> str:
        """The URL's user whatever user is asked for: a named server has no roles of the harness's. The
        password is not in it: libpq finds it in the run's password file (PGPASSFILE)."""
        return make_conninfo(
            host=self.host, port=self.port, user=self.url.user, dbname=self._database(dbname),
            sslmode=SSLMODE_PLAIN, connect_timeout=CONNECT_TIMEOUT_S,
        )  # fmt: skip

    def _database(self, dbname: str | None) -> str:
        # The harness's maintenance database is `postgres` on its own clusters; here it is the URL's.
        return self.url.dbname if dbname in (None, DEFAULT_DBNAME) else str(dbname)

    def connect(self, dbname: str | None = None, autocommit: bool = True) -> psycopg.Connection:
        return psycopg.connect(self.conninfo(dbname), autocommit=autocommit)

    def execute(
        self, sql: str, params: Sequence[object] | None = None, dbname: str | None = None
    ) -> list[tuple]:
        if sql in self.skipped:
            return []
        with self.connect(dbname) as conn, conn.cursor() as cur:
            cur.execute(sql, params)  # type: ignore[arg-type]
            return cur.fetchall() if cur.description else []

    def client_args(self, transport: str = "tcp", user: str | None = None) -> list[str]:
        """pgbench's flags: always TCP to the server, as the URL's user."""
        return ["-h", self.host, "-p", str(self.port), "-U", self.url.user]

    # -- what a cluster does, for a server that is not ours -----------------------------------------------
    def start(self) -> None:
        """A named server is running already; the harness never starts or stops it."""

    def pause(self) -> None:
        """As start: never the harness's to stop."""

    def log_tail(self) -> str:
        return "(a remote server: its log is on its own host)"

    def health_problem(self) -> str | None:
        try:
            self.execute("SELECT 1")
        except psycopg.Error as error:
            return f"the server at {self.url.address} stopped answering: {_first_line(error)}"
        return None

    def wait_ready(self, timeout_s: float = 60) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.execute("SELECT 1")
                return
            except psycopg.OperationalError as error:
                if time.monotonic() > deadline:
                    raise LabError(
                        f"the server at {self.url.address} did not accept connections within "
                        f"{timeout_s:.0f} s: {_first_line(error)}"
                    ) from error
                time.sleep(0.5)

    # -- facts and the network ---------------------------------------------------------------------------
    def facts(self) -> ServerFacts:
        with self.connect() as conn:
            rows = conn.execute(
                "SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY(%s)",
                (list(SETTINGS),),
            ).fetchall()
            superuser, checkpoint = conn.execute(
                "SELECT rolsuper, rolsuper OR coalesce((SELECT pg_has_role(current_user, oid, 'MEMBER') "
                "FROM pg_roles WHERE rolname = 'pg_checkpoint'), false) "
                "FROM pg_roles WHERE rolname = current_user"
            ).fetchone()
            # Another role's sessions show no backend_type to a role without pg_read_all_stats; their
            # database they do show, which only client backends (and autovacuum workers) have.
            others = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname IS NOT NULL "
                "AND coalesce(backend_type, 'client backend') = 'client backend' AND pid <> pg_backend_pid()"
            ).fetchone()[0]
            self.version = conn.execute("SHOW server_version").fetchone()[0]
        return ServerFacts(self.version, dict(rows), bool(superuser), bool(checkpoint), int(others))

    def round_trip_ms(self, samples: int = RTT_SAMPLES) -> float:
        """Median of `samples` round trips of SELECT 1 over a fresh connection, in ms: the network and the
        server's simplest answer, without the connection's set-up."""
        with self.connect() as conn:
            conn.execute("SELECT 1")  # the first statement pays for catalog caches; not a round trip
            times = []
            for _ in range(samples):
                started = time.perf_counter()
                conn.execute("SELECT 1").fetchone()
                times.append((time.perf_counter() - started) * 1000)
        return round(statistics.median(times), 3)

    # -- the harness's own database ----------------------------------------------------------------------
    def own_database_state(self) -> str:
        """'absent', 'ours' (it carries the harness's mark) or 'foreign'."""
        rows = self.execute(
            "SELECT coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database WHERE datname = %s",
            (BENCH_DB,),
        )
        if not rows:
            return "absent"
        return "ours" if str(rows[0][0]).startswith(OWN_DATABASE_MARK) else "foreign"

    def create_own_database(self, note: str) -> None:
        """Create and mark the database the run works in. One the harness left (kept, or a run killed
        outright) is dropped first; one it did not create stops the run, untouched."""
        state = self.own_database_state()
        if state == "foreign":
            raise LabError(
                f"{self.url.shown}: a database named {BENCH_DB} exists and was not created by connlab "
                f"(it lacks the comment '{OWN_DATABASE_MARK}'); the harness works only in a database of "
                f"its own: rename or drop that one, or measure another server"
            )
        if state == "ours":
            self.drop_own_database()
        # Created and marked at once: a database of that name left unmarked would refuse every later run.
        with hold_signals():
            try:
                self.execute(f"CREATE DATABASE {BENCH_DB}")
            except psycopg.errors.InsufficientPrivilege as error:
                raise LabError(
                    f"{self.url.shown}: role {self.url.user} may not create a database "
                    f"({_first_line(error)}); the harness works only in a database it creates: grant "
                    f"CREATEDB or use a role that has it"
                ) from error
            comment = psycopg.sql.SQL("COMMENT ON DATABASE {} IS {}").format(
                psycopg.sql.Identifier(BENCH_DB), psycopg.sql.Literal(f"{OWN_DATABASE_MARK}; {note}")
            )
            with self.connect() as conn:
                conn.execute(comment)

    def drop_own_database(self) -> bool:
        """Drop the harness's database if it is there and is the harness's; True when one was dropped."""
        with hold_signals():
            if self.own_database_state() != "ours":
                return False
            self.execute(f"DROP DATABASE {BENCH_DB} WITH (FORCE)")
            return True

    def allow_what_the_role_may(self, facts: ServerFacts, prewarm: list[str]) -> None:
        """pg_prewarm (an extension created in the run's own database) and CHECKPOINT before each window,
        where this role may; where it may not, the windows go without them and machine.yaml says so."""
        if not facts.may_checkpoint:
            self.skipped["CHECKPOINT"] = (
                "CHECKPOINT before each window: the role is not superuser nor in pg_checkpoint"
            )
        if not prewarm:
            return
        try:
            self.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm", dbname=BENCH_DB)
        except psycopg.Error as error:
            self.skipped["SELECT pg_prewarm(%s)"] = f"pg_prewarm before each window: {_first_line(error)}"


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
