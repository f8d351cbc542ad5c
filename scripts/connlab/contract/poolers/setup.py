"""The inputs of every pooler (`PoolerSetup`), and what a pooler's pure configuration declares
(`PoolerConfig`: connlab/poolers/<folder>/config.py ends with one)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from connlab.contract.names import SERVER_USER

# The one setting every pooler's config reads from `PoolerSetup.settings` and maps to its own key: turn its
# prepared-statement support on (PgBouncer max_prepared_statements, Odyssey pool_reserve_prepared_statement,
# pgcat prepared_statements_cache_size; PgPool-II needs nothing).
PREPARED_STATEMENTS_SETTING = "prepared_statements"


def server_tcp_host(server_host: str) -> str:
    """Odyssey and pgcat reach the server over TCP; a socket folder means the same server on loopback."""
    return "127.0.0.1" if server_host.startswith("/") or server_host.startswith("$") else server_host


class Budget(Protocol):
    """The CPU budget a pooler runs on (the harness's PoolerBudget): enter() moves the calling process in."""

    def enter(self) -> None: ...


@dataclass(frozen=True)
class PoolerUser:
    name: str
    verifier: str = ""  # the server's stored SCRAM verifier; empty for a trust role
    password: str | None = None  # this run's generated password, for poolers that need it (memory only)


@dataclass
class PoolerSetup:
    """What the harness asks of any pooler; each adapter maps it onto its own settings.

    Ports are numbers in the harness; the check-it-yourself block passes shell variables ("$PORT") in their
    place, which is why they may be text."""

    root: Path  # the adapter's own folder: config, logs, pid file, sockets
    port: int | str
    server_host: str  # the server's socket folder or 127.0.0.1
    server_port: int | str
    databases: list[str]
    pool_size: int = 20
    pool_mode: str = "transaction"
    max_client_conn: int = 2000
    users: list[PoolerUser] = field(default_factory=lambda: [PoolerUser(SERVER_USER)])
    hba_lines: list[str] = field(default_factory=list)  # pg_hba-style, per role (trust or scram-sha-256)
    settings: dict[str, object] = field(default_factory=dict)  # adapter-specific, from experiment.yaml
    budget: Budget | None = None
    # Extra pools: each a database alias (names.pool_alias) of the first database, with a pool of that size.
    pool_sizes: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class PoolerConfig:
    """A pooler's declaration and configuration, pure: shared by its harness adapter, the machine schema,
    the Machines page and the site's snippet."""

    kind: str  # what experiment.yaml's `poolers: [{kind: ...}]` names
    label: str  # how the pages name it, e.g. "PgBouncer"
    binary: str  # the program the snippet starts: a machine without it says so instead
    config_files: Callable[[PoolerSetup], dict[str, str]]  # file name -> text
    # The shell line that starts it in the background in the snippet, reading its files under `root`.
    snippet_start: Callable[[str], str]
    pid_file: str  # under root, for the snippet's clean-up; a glob pattern where there are several
    # The signal that stops it at once with clients still connected (PgPool-II's SIGTERM waits for them).
    stop_signal: str = "TERM"
    # The database of its admin console (PgBouncer's SHOW commands), or None where it has none.
    admin_database: str | None = None
    # Shell lines the snippet runs before the start line (PgPool-II: its key file and pg_enc), if any.
    snippet_prepare: Callable[[str, PoolerSetup], list[str]] | None = None
    # What makes `binary` print its version (machine.yaml's `<kind>_version`, a Machines page column); None
    # for a kind with no program of its own (pgbouncer-pair runs PgBouncer's, whose version is recorded).
    version_args: tuple[str, ...] | None = ("--version",)
    # What else machine.yaml records of how it ran beside its version, `<kind>_<fact>` each, as its harness
    # adapter's `facts()` says (pgcat: "allocator", the malloc its process ran with); only with a version.
    facts: tuple[str, ...] = ()
    # Whether the harness can run it in front of a named server (connlab run --server): it then logs in to
    # that server as the URL's user (connlab.lab.remote.bench). False: its windows there are left out, said.
    remote: bool = False
    # Facts of its own (an article's <slug>.facts.sql names them) that a page shows for every machine at
    # once: kept whole in the article's facts file, like connlab.contract.facts_files.ACROSS_MACHINE_FACTS,
    # which adds them. The main tables such facts read come from its folder's facts.py
    # (connlab.data.main_tables).
    across_machine_facts: tuple[str, ...] = ()

    @property
    def version_field(self) -> str | None:
        """Its field in machine.yaml, e.g. pgbouncer_version; None where it records no version."""
        return None if self.version_args is None else f"{self.kind}_version"

    def fact_field(self, fact: str) -> str:
        """A fact's field in machine.yaml, e.g. pgcat_allocator."""
        return f"{self.kind}_{fact}"
