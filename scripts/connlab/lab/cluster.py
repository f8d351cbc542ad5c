"""A throwaway PostgreSQL cluster under build/lab/: created, started, and always stopped and removed.

The server runs as the postgres user when the harness runs as root (PostgreSQL refuses root), listens on
127.0.0.1 and on a unix socket inside its own folder only, on a free port, with the experiment's settings.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import psycopg

from connlab.contract.names import LOOPBACK_HOST, SERVER_USER
from connlab.errors import LabError
from connlab.interrupts import hold_signals, run_in_group
from connlab.lab.cpu_budget import CpuBudget
from connlab.lab.host import (
    as_server_user,
    chown_to_server_user,
    ensure_port_free,
    find_bindir,
    free_port,
)
from connlab.lab.leftovers import (
    kill_orphans,
    kill_postmaster,
    mark_owner,
    resume_stopped,
    stop_stale_clusters,
)
from connlab.paths import LAB_DIR

START_TIMEOUT_S = 120
# initdb and pg_ctl finish in seconds; past this something is wrong and the run stops saying so.
TOOL_TIMEOUT_S = START_TIMEOUT_S + 30
# The harness's own connections: a frozen or vanished server must fail them, not hang the run.
CONNECT_TIMEOUT_S = 10


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
        mark_owner(self.root, self.budget.name if self.budget else None)
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
            "listen_addresses": LOOPBACK_HOST,
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
        host = str(self.socket_dir) if transport == "unix" else LOOPBACK_HOST
        return ["-h", host, "-p", str(self.port), "-U", user]

    @property
    def postmaster_pid(self) -> int:
        return int((self.data_dir / "postmaster.pid").read_text().splitlines()[0])
