"""The contract every pooler adapter keeps, so that adding a pooler is adding its folder (connlab/poolers/).

Inputs. An adapter is built from a `PoolerSetup` (below): where the server listens, the databases to expose,
the pool size and mode, the users with their server-side SCRAM verifiers (and, for poolers that must log in
with a password of their own, the run's generated password, kept in memory only), pg_hba-style lines per
role, a port and a folder of its own, and the CPU budget it runs on (its own cgroup, on the server's cores).

Outputs.
- `config_files()` is pure: file name -> text. The harness writes exactly these files, and the site's
  "check it yourself" snippet prints the same text, so the two cannot drift apart.
- Started (`with adapter:`), it runs as the postgres user in the foreground (its process is ours to watch)
  and `__enter__` returns only once it accepts a connection, within `START_TIMEOUT_S`.
- `client_args()` are pgbench/psql connection flags; `processes()` is its whole process tree (RSS, PSS and
  CPU are measured over it); `counters()` its own statistics where it has any (empty dict where not);
  `support(feature)` says "ok" or why not ("not supported by this version", with the version).
- `version()` is what the binary prints of itself, read without starting it; `facts()` what else machine.yaml
  records of how it runs (pgcat: its allocator), for the kinds whose declaration names such facts.
- `of_build(build)` is the same adapter running a build `make poolers` staged (a spec's `build:`) instead of
  the machine's own program; `measured_version()` the dotted version a window's row records.

`PoolerSetup` and `PoolerUser` live in connlab.contract.poolers (the site's snippet builds the same
setup) and are re-exported here.

Errors. A missing binary raises `PoolerUnavailable` whose message reads "<name>: not available on this
machine; ..." (the row is then reported as such, never faked). A pooler that exits or does not accept in
time raises `LabError` with the tail of its log. Stopping never raises and always leaves no process behind,
on error and on Ctrl-C alike.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import ClassVar, Self

import psutil
import psycopg

from connlab.contract.names import BENCH_DB, SERVER_USER
from connlab.contract.poolers.features import parse_version, version_label
from connlab.contract.poolers.setup import PoolerConfig, PoolerSetup, PoolerUser
from connlab.errors import LabError
from connlab.interrupts import hold_interrupts, hold_signals
from connlab.lab.host import as_server_user, chown_to_server_user
from connlab.lab.pooler_memory import TreeMemory, snapshot
from connlab.paths import built_pooler_bin, staged_pooler_bin_dir

__all__ = [
    "FeatureUnsupported",
    "PoolerProcess",
    "PoolerSetup",
    "PoolerUnavailable",
    "PoolerUser",
    "find_binary",
]

START_TIMEOUT_S = 15
VERSION_TIMEOUT_S = 10
START_SETTLE_S = 1.0
STOP_WAIT_S = 5
SUPPORTED = "ok"


class PoolerUnavailable(LabError):
    """The pooler's binary is not on this machine: reported as a result, not a crash."""


class FeatureUnsupported(PoolerUnavailable):
    """The pooler is here, but its version lacks a feature the experiment asks of it (e.g. PgBouncer 1.18 and
    prepared statements in transaction mode): each of its windows is a row that says so, not a measurement."""


def find_binary(name: str, env_var: str, *fallbacks: str) -> str:
    """The binary named by `env_var`, else on PATH, else at a known path; PoolerUnavailable otherwise."""
    named = os.environ.get(env_var)
    if named:
        if Path(named).is_file() and os.access(named, os.X_OK):
            return named
        raise PoolerUnavailable(f"{name}: {env_var}={named} is not an executable file")
    found = shutil.which(name) or next((path for path in fallbacks if Path(path).is_file()), None)
    if found is None:
        raise PoolerUnavailable(
            f"{name}: not available on this machine; install it or set {env_var} to its binary"
        )
    return found


def logging_to(log_path: Path, command: list[str]) -> list[str]:
    """The command with its stdout and stderr appended to `log_path`, for poolers that log only to the
    terminal (pgcat) or do so most simply (PgPool-II with log_destination 'stderr'); `exec` keeps the
    pooler in the place of the shell, so the process tree is the same."""
    return ["sh", "-c", 'exec "$@" >>"$0" 2>&1', str(log_path), *command]


def logs_in(conninfo: str) -> bool:
    """Whether a login at conninfo completes right now: a pooler's readiness."""
    with contextlib.suppress(psycopg.Error):
        psycopg.connect(conninfo, autocommit=True, connect_timeout=2).close()
        return True
    return False


# The usual install folders: Debian puts PgBouncer and PgPool-II in /usr/sbin, a hand-built pooler lands in
# /usr/local/bin.
INSTALL_DIRS = ("/usr/local/bin", "/usr/bin", "/usr/sbin")


def install_places(program: str) -> tuple[str, ...]:
    """Where a pooler's program is looked for after its variable and PATH: the usual install folders, then
    the build `make poolers` leaves in build/ for the poolers Debian packages none of."""
    return (*(f"{folder}/{program}" for folder in INSTALL_DIRS), str(built_pooler_bin(program)))


class PoolerProcess:
    """Shared start/stop/watch for poolers that run as one foreground process (which may fork).

    A subclass sets `declaration` (its folder's CONFIG, which gives it `name`, `label`, `binary_name` and
    `known_paths`) and `env_var`, implements `config_files()` and `command()`, and may override `version()`
    (default: what `--version` prints), `stop_signal`, `extra_environment()`, `reset_server_connections()`,
    `counters()` and `support()`.
    """

    # The pooler's declaration (connlab/poolers/<kind>/config.py's CONFIG): a class that sets it takes its
    # name (the kind), label and binary_name (the program's file name) from it, when the class is made.
    declaration: ClassVar[PoolerConfig]
    name: ClassVar[str]
    label: ClassVar[str]
    env_var: ClassVar[str]
    binary_name: ClassVar[str]
    # Where the program is looked for after env_var and PATH (install_places).
    known_paths: ClassVar[tuple[str, ...]] = ()
    log_file: ClassVar[str] = "pooler.log"
    stop_signal: ClassVar[signal.Signals] = signal.SIGINT
    # The staged build this class runs (of_build), or None for the machine's own program.
    build: ClassVar[str | None] = None

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        declaration = cls.__dict__.get("declaration")
        if declaration is not None:
            cls.name, cls.label, cls.binary_name = declaration.kind, declaration.label, declaration.binary
            cls.known_paths = install_places(declaration.binary)

    def __init__(self, setup: PoolerSetup) -> None:
        self.setup = setup
        self.process: subprocess.Popen[bytes] | None = None
        # The tree once it accepts, before any window: what it costs before the first query.
        self.start_memory: TreeMemory | None = None

    # --- what each adapter provides ---------------------------------------------------------------
    @classmethod
    def binary(cls) -> str:
        """The binary named by `env_var`, else `binary_name` on PATH, else one of `known_paths`; for a
        staged build, that build's."""
        if cls.build is not None:
            return cls.staged_program(cls.binary_name)
        return find_binary(cls.binary_name, cls.env_var, *cls.known_paths)

    @classmethod
    def of_build(cls, build: str | None) -> type[Self]:
        """This adapter running the build `make poolers` staged as build/<program>-<build>/ (a spec's
        `build:`); itself where no build is named. Every classmethod that finds a program (`binary()`, and
        so `version()` and `support()`) then finds the build's, and nothing falls back to another one."""
        if build is None:
            return cls
        return type(f"{cls.__name__}Build", (cls,), {"build": build})

    @classmethod
    def staged_program(cls, program: str) -> str:
        """A program of this class's staged build (PgPool-II's pg_enc beside its pgpool);
        PoolerUnavailable, saying how to get it, where this machine has none."""
        assert cls.build is not None, "only a staged build has staged programs"
        path = staged_pooler_bin_dir(cls.binary_name, cls.build) / program
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise PoolerUnavailable(
                f"{cls.binary_name} {cls.build}: not available on this machine (make poolers installs it "
                f"from a tools folder)"
            )
        return str(path)

    @classmethod
    def measured_version(cls) -> str | None:
        """The dotted version the binary prints of itself (e.g. 1.25.2), as a window's row records it; None
        where there is no binary or it prints none."""
        try:
            version = parse_version(cls.version())
        except (PoolerUnavailable, OSError, subprocess.SubprocessError):
            return None
        return version_label(version) if version else None

    def config_files(self) -> dict[str, str]:
        raise NotImplementedError

    def command(self, binary: str) -> list[str]:
        raise NotImplementedError

    @classmethod
    def version(cls) -> str:
        """What `<binary> --version` prints, on either stream (PgPool-II writes it to stderr)."""
        result = subprocess.run(
            [cls.binary(), "--version"],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT_S,
            check=False,
        )
        return (result.stdout + result.stderr).strip()

    @classmethod
    def facts(cls) -> dict[str, str]:
        """How the binary the runs use runs, beside its version: each fact its declaration names
        (`PoolerConfig.facts`, machine.yaml's `<kind>_<fact>`); PoolerUnavailable where there is no binary."""
        return {}

    def extra_environment(self) -> dict[str, str]:
        return {}

    def prepare(self) -> None:
        """Anything beyond writing config files (e.g. encrypting passwords); runs before start."""

    def reset_server_connections(self) -> None:
        """Close the pooler's idle server connections so each window starts from an empty pool."""

    def closes_server_connections(self) -> bool:
        """Whether reset_server_connections() does anything: an adapter that overrides it does."""
        return type(self).reset_server_connections is not PoolerProcess.reset_server_connections

    def counters(self) -> dict[str, float]:
        return {}

    def support(self, feature: str) -> str:
        return SUPPORTED

    @contextlib.contextmanager
    def pool_watch(self, database: str) -> Iterator[Callable[[], tuple[int, float]] | None]:
        """A reader, valid inside the block, of the clients waiting for a server connection in the pool
        of `database` and how long the oldest has waited (ms); None where the pooler does not tell (the
        pools probe then records nothing)."""
        yield None

    # --- shared behaviour -------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self.setup.port

    def client_args(self, transport: str = "tcp", user: str = SERVER_USER) -> list[str]:
        host = "127.0.0.1" if transport == "tcp" else str(self.setup.root)
        return ["-h", host, "-p", str(self.port), "-U", user]

    def conninfo(self, dbname: str = BENCH_DB, user: str = SERVER_USER) -> str:
        return f"host=127.0.0.1 port={self.port} user={user} dbname={dbname}"

    def write_config(self) -> None:
        self.setup.root.mkdir(parents=True, exist_ok=True)
        chown_to_server_user(self.setup.root)
        for file_name, text in self.config_files().items():
            path = self.setup.root / file_name
            path.write_text(text)
            path.chmod(0o600)
            chown_to_server_user(path)

    def __enter__(self) -> Self:
        binary = self.binary()
        self.write_config()
        self.prepare()
        budget = self.setup.budget
        # Ctrl-C held while Popen waits for the exec: raised there, it would leave the pooler running with
        # no process object to stop it by.
        release = hold_interrupts()
        try:
            self.process = subprocess.Popen(
                as_server_user(self.command(binary)), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, preexec_fn=budget.enter if budget else None,
                env={**os.environ, **self.extra_environment()},
            )  # fmt: skip
        except BaseException:
            release()
            raise
        try:
            release()
            self.wait_until_ready(self.process)
        except BaseException:
            # A `with` whose __enter__ raised never calls __exit__: a start that failed, or a Ctrl-C while it
            # waited (the pooler is in a session of its own, so the signal did not reach it), stops it here.
            with hold_signals():
                self.stop()
            raise
        return self

    def wait_until_ready(self, process: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise LabError(f"{self.name} exited at start: {self.log_tail()}")
            if self.accepts():
                time.sleep(START_SETTLE_S)  # children forked at start, still touching their pages
                self.start_memory = snapshot(self.processes())
                return
            time.sleep(0.1)
        raise LabError(
            f"{self.name} did not accept connections within {START_TIMEOUT_S} s: {self.log_tail()}"
        )

    def accepts(self) -> bool:
        """Whether the pooler completes a login (the server's own user, trust) right now."""
        return logs_in(self.conninfo(self.setup.databases[0]))

    def __exit__(self, *exc: object) -> None:
        with hold_signals():
            self.stop()

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        # The whole tree as it was: once the parent has exited, its children are no longer found through
        # it, yet they may still be on their way out (PgPool-II's children exit after their parent).
        tree = self.processes()
        for sig in (self.stop_signal, signal.SIGKILL):
            for process in self.processes():
                with contextlib.suppress(psutil.Error, ProcessLookupError):
                    process.send_signal(sig)
            try:
                self.process.wait(STOP_WAIT_S)
                break
            except subprocess.TimeoutExpired:
                continue
        # Every process of the tree gone before stop() returns: those still exiting are waited for, any
        # left after that is killed.
        _, alive = psutil.wait_procs(tree, timeout=STOP_WAIT_S)
        for process in alive:
            with contextlib.suppress(psutil.Error):
                process.kill()
        psutil.wait_procs(alive, timeout=STOP_WAIT_S)

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def processes(self) -> list[psutil.Process]:
        """runuser, the pooler it started and every process the pooler forked."""
        if self.process is None:
            return []
        try:
            parent = psutil.Process(self.process.pid)
            return [*parent.children(recursive=True), parent]
        except psutil.Error:
            return []

    def cpu_seconds(self) -> float:
        total = 0.0
        for process in self.processes():
            with contextlib.suppress(psutil.Error):
                times = process.cpu_times()
                total += times.user + times.system
        return total

    def log_tail(self) -> str:
        try:
            lines = (self.setup.root / self.log_file).read_text(errors="replace").strip().splitlines()
        except OSError:
            return "(no log)"
        return " | ".join(lines[-2:]) or "(empty log)"
