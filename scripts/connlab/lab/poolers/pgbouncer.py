"""PgBouncer in front of a throwaway cluster: its own folder, config, port; run as the postgres user.

PgBouncer refuses to run as root, so as root it runs through runuser like the server does. It is always
stopped when the context ends, on error and on Ctrl-C alike.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import psycopg

from connlab.contract.names import pool_alias
from connlab.errors import LabError
from connlab.lab.cluster import (
    SERVER_USER,
    Cluster,
    as_server_user,
    chown_to_server_user,
    free_port,
    hold_signals,
)
from connlab.lab.cpu_budget import CpuBudget

START_TIMEOUT_S = 15


def find_pgbouncer() -> str:
    found = shutil.which("pgbouncer") or (
        "/usr/sbin/pgbouncer" if Path("/usr/sbin/pgbouncer").exists() else None
    )
    if not found:
        raise LabError("pgbouncer: not available on this machine; run `make setup` (installs pgbouncer)")
    return found


@dataclass
class PgBouncer:
    """Transaction pooling by default; auth_type and the users' secrets come from the caller."""

    cluster: Cluster
    pool_size: int = 20
    pool_mode: str = "transaction"
    auth_type: str = "trust"
    users: dict[str, str] = field(default_factory=lambda: {SERVER_USER: ""})
    max_client_conn: int = 2000
    extra: dict[str, object] = field(default_factory=dict)
    hba_lines: list[str] = field(default_factory=list)  # with auth_type = hba: per-role methods
    budget: CpuBudget | None = None  # the pooler runs on the server's CPU budget, like a sidecar
    # Extra aliases of the benchmark database, each with a pool of its own size (queue-depth).
    pool_sizes: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.root = self.cluster.root / "pgbouncer"
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def config_path(self) -> Path:
        return self.root / "pgbouncer.ini"

    def _config(self) -> str:
        server = f"host={self.cluster.socket_dir} port={self.cluster.port}"
        databases = "\n".join(
            [f"{name} = {server} dbname={name}" for name in ("bench", "postgres")]
            + [f"{pool_alias(size)} = {server} dbname=bench pool_size={size}" for size in self.pool_sizes]
        )
        settings = {
            "listen_addr": "127.0.0.1",
            "listen_port": self.port,
            "unix_socket_dir": str(self.root),
            "auth_type": self.auth_type,
            "auth_file": str(self.root / "userlist.txt"),
            **({"auth_hba_file": str(self.root / "pgbouncer_hba.conf")} if self.hba_lines else {}),
            "pool_mode": self.pool_mode,
            "default_pool_size": self.pool_size,
            "max_client_conn": self.max_client_conn,
            "admin_users": SERVER_USER,
            "stats_users": SERVER_USER,
            "logfile": str(self.root / "pgbouncer.log"),
            "pidfile": str(self.root / "pgbouncer.pid"),
            "server_login_retry": 1,
            **self.extra,
        }
        lines = "\n".join(f"{key} = {value}" for key, value in settings.items())
        return f"[databases]\n{databases}\n\n[pgbouncer]\n{lines}\n"

    def __enter__(self) -> PgBouncer:
        binary = find_pgbouncer()
        self.root.mkdir(parents=True, exist_ok=True)
        chown_to_server_user(self.root)
        self.config_path.write_text(self._config())
        userlist = "\n".join(f'"{user}" "{secret}"' for user, secret in self.users.items()) + "\n"
        (self.root / "userlist.txt").write_text(userlist)
        for path in (self.config_path, self.root / "userlist.txt"):
            chown_to_server_user(path)
        # Foreground mode (no -d): the process is ours to watch and to stop.
        if self.hba_lines:
            (self.root / "pgbouncer_hba.conf").write_text("\n".join(self.hba_lines) + "\n")
            chown_to_server_user(self.root / "pgbouncer_hba.conf")
        self.process = subprocess.Popen(
            as_server_user([binary, str(self.config_path)]), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True,
            preexec_fn=self.budget.enter if self.budget else None,
        )  # fmt: skip
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self._stop()
                raise LabError(f"pgbouncer exited at start: {self.log_tail()}")
            with contextlib.suppress(psycopg.Error):
                psycopg.connect(self.conninfo("pgbouncer"), autocommit=True).close()
                return self
            time.sleep(0.1)
        self._stop()
        raise LabError(f"pgbouncer did not accept connections within {START_TIMEOUT_S} s: {self.log_tail()}")

    def __exit__(self, *exc: object) -> None:
        with hold_signals():
            self._stop()

    def _stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        # SIGINT is PgBouncer's "safe shutdown"; SIGKILL if it does not go within seconds.
        for sig, wait_s in ((signal.SIGINT, 5), (signal.SIGKILL, 5)):
            with contextlib.suppress(ProcessLookupError):
                for process in self._processes():
                    process.send_signal(sig)
            try:
                self.process.wait(wait_s)
                return
            except subprocess.TimeoutExpired:
                continue

    def running(self) -> bool:
        """Whether PgBouncer still runs (runuser in front of it exits when it does)."""
        return self.process is not None and self.process.poll() is None

    def _processes(self) -> list[psutil.Process]:
        """runuser and the pgbouncer it started."""
        if self.process is None:
            return []
        try:
            parent = psutil.Process(self.process.pid)
            return [*parent.children(recursive=True), parent]
        except psutil.Error:
            return []

    def cpu_seconds(self) -> float:
        total = 0.0
        for process in self._processes():
            with contextlib.suppress(psutil.Error):
                times = process.cpu_times()
                total += times.user + times.system
        return total

    def log_tail(self) -> str:
        try:
            lines = (self.root / "pgbouncer.log").read_text().strip().splitlines()
        except OSError:
            return "(no log)"
        return " | ".join(lines[-2:]) or "(empty log)"

    def conninfo(self, dbname: str = "bench", user: str = SERVER_USER) -> str:
        return f"host=127.0.0.1 port={self.port} user={user} dbname={dbname}"

    def client_args(self, transport: str = "tcp", user: str = SERVER_USER) -> list[str]:
        host = "127.0.0.1" if transport == "tcp" else str(self.root)
        return ["-h", host, "-p", str(self.port), "-U", user]

    def close_server_connections(self) -> None:
        """RECONNECT: idle server connections close now, busy ones when released. Each window then
        starts from an empty pool, and the backends it counts are its own."""
        with psycopg.connect(
            self.conninfo("pgbouncer"), autocommit=True, cursor_factory=psycopg.ClientCursor
        ) as conn:
            conn.execute("RECONNECT")


class PoolSampler:
    """Polls SHOW POOLS on PgBouncer's admin console every 250 ms while a window runs: how many clients
    wait for a server connection, and how long the oldest of them has waited."""

    INTERVAL_S = 0.25

    def __init__(self, pooler: PgBouncer, database: str) -> None:
        self.pooler = pooler
        self.database = database
        self.polls = 0
        self.waiting_total = 0
        self.waiting_max = 0
        self.maxwait_ms = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        # The admin console speaks only the simple query protocol: ClientCursor, no server-side prepare.
        with (
            contextlib.suppress(psycopg.Error),
            psycopg.connect(
                self.pooler.conninfo("pgbouncer"), autocommit=True, cursor_factory=psycopg.ClientCursor
            ) as conn,
        ):
            while not self._stop.wait(self.INTERVAL_S):
                cursor = conn.execute("SHOW POOLS")
                names = [column.name for column in cursor.description or []]
                waiting = 0
                for row in cursor.fetchall():
                    pool = dict(zip(names, row, strict=True))
                    if pool["database"] != self.database:
                        continue
                    waiting += int(pool["cl_waiting"])
                    wait_ms = int(pool["maxwait"]) * 1000 + int(pool.get("maxwait_us") or 0) / 1000
                    self.maxwait_ms = max(self.maxwait_ms, wait_ms)
                self.polls += 1
                self.waiting_total += waiting
                self.waiting_max = max(self.waiting_max, waiting)

    def figures(self) -> dict[str, object]:
        return {
            "pool_samples": self.polls,
            "pool_cl_waiting_avg": round(self.waiting_total / self.polls, 3) if self.polls else None,
            "pool_cl_waiting_max": self.waiting_max if self.polls else None,
            "pool_maxwait_ms_max": round(self.maxwait_ms, 3) if self.polls else None,
        }

    def __enter__(self) -> PoolSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
