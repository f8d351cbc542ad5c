"""What the harness observes around a measurement window, without disturbing it.

Everything here is read once before and once after a window (counters, not samplers), so the probes cost
nothing while pgbench runs: the observer effect is checked by scripts/bench/observer_effect.py.
"""

from __future__ import annotations

import contextlib
import re
import resource
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import psycopg

from connlab.lab.cluster import Cluster
from connlab.lab.cpu_budget import CpuBudget

PROC_STAT = Path("/proc/stat")
CPU_PRESSURE = Path("/proc/pressure/cpu")
# pgbench counts as saturated when it used this share of the cores it was given.
CLIENT_SATURATION_SHARE = 0.90


@dataclass(frozen=True)
class Snapshot:
    monotonic_s: float
    server_cpu_s: float
    steal_ticks: int
    total_ticks: int
    pressure_us: int | None
    checkpoints: int
    autovacuums: int


def _proc_stat_ticks() -> tuple[int, int]:
    fields = PROC_STAT.read_text().splitlines()[0].split()[1:]
    ticks = [int(value) for value in fields[:8]]  # user nice system idle iowait irq softirq steal
    return ticks[7], sum(ticks)


def _cpu_pressure_us() -> int | None:
    """Total microseconds some task waited for a CPU; None on kernels without PSI."""
    try:
        first = CPU_PRESSURE.read_text().splitlines()[0]
    except OSError:
        return None
    return int(first.rsplit("total=", 1)[1])


def server_cpu_seconds(cluster: Cluster, budget: CpuBudget | None) -> float:
    """The server's CPU time: the cgroup's counter, or the postmaster tree where only affinity is set.

    The postmaster's children_* times include backends it already reaped, so exited connections count.
    """
    if budget is not None:
        from_cgroup = budget.server_cpu_seconds()
        if from_cgroup is not None:
            return from_cgroup
    postmaster = psutil.Process(cluster.postmaster_pid)
    times = postmaster.cpu_times()
    total = times.user + times.system + times.children_user + times.children_system
    for child in postmaster.children():
        try:
            child_times = child.cpu_times()
        except psutil.Error:
            continue  # it exited between listing and reading; the postmaster's counters have it
        total += child_times.user + child_times.system
    return total


_ACTIVITY_SQL = """
SELECT (SELECT {checkpoints} FROM {checkpoint_view}),
       (SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0) FROM pg_stat_user_tables)
"""


def activity_sql(server_version: str) -> str:
    """PostgreSQL 17 moved the checkpoint counters from pg_stat_bgwriter to pg_stat_checkpointer."""
    major = re.match(r"[0-9]+", server_version)
    if major and int(major.group()) >= 17:
        return _ACTIVITY_SQL.format(
            checkpoints="num_timed + num_requested", checkpoint_view="pg_stat_checkpointer"
        )
    return _ACTIVITY_SQL.format(
        checkpoints="checkpoints_timed + checkpoints_req", checkpoint_view="pg_stat_bgwriter"
    )


def take_snapshot(cluster: Cluster, budget: CpuBudget | None, dbname: str) -> Snapshot:
    """dbname: the benchmark's database (pg_stat_user_tables only sees the current database)."""
    checkpoints, autovacuums = cluster.execute(activity_sql(cluster.version), dbname=dbname)[0]
    steal, total = _proc_stat_ticks()
    return Snapshot(
        monotonic_s=time.monotonic(),
        server_cpu_s=server_cpu_seconds(cluster, budget),
        steal_ticks=steal,
        total_ticks=total,
        pressure_us=_cpu_pressure_us(),
        checkpoints=int(checkpoints),
        autovacuums=int(autovacuums),
    )


TCP_TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
TIME_WAIT_STATE = "06"


def time_wait_sockets() -> int:
    """Sockets in TIME_WAIT on this machine (the `st` column of /proc/net/tcp)."""
    count = 0
    for table in TCP_TABLES:
        try:
            lines = table.read_text().splitlines()[1:]
        except OSError:
            continue
        count += sum(1 for line in lines if line.split()[3] == TIME_WAIT_STATE)
    return count


class BackendSampler:
    """Counts the server's client backends on the benchmark database once a second, from its own
    connection in a thread, while a window runs: how many connections the server really saw."""

    INTERVAL_S = 1.0
    SQL = "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND datname = %s"

    def __init__(self, conninfo: str, dbname: str) -> None:
        self.conninfo = conninfo
        self.dbname = dbname
        self.max_backends = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with contextlib.suppress(psycopg.Error), psycopg.connect(self.conninfo, autocommit=True) as conn:
            while not self._stop.wait(self.INTERVAL_S):
                count = conn.execute(self.SQL, (self.dbname,)).fetchone()[0]
                self.max_backends = max(self.max_backends, int(count))

    def __enter__(self) -> BackendSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def client_cpu_seconds(rusage: resource.struct_rusage) -> float:
    return rusage.ru_utime + rusage.ru_stime


def window_metrics(before: Snapshot, after: Snapshot, client_cpu_s: float, client_cores: float) -> dict:
    """Per-window figures for the CSV row: CPU in cores used, steal and pressure as a percentage."""
    wall = max(after.monotonic_s - before.monotonic_s, 1e-9)
    total_ticks = max(after.total_ticks - before.total_ticks, 1)
    client_cores_used = client_cpu_s / wall
    pressure = None
    if before.pressure_us is not None and after.pressure_us is not None:
        pressure = round(100 * (after.pressure_us - before.pressure_us) / (wall * 1e6), 2)
    return {
        "server_cpu_cores": round((after.server_cpu_s - before.server_cpu_s) / wall, 3),
        "client_cpu_cores": round(client_cores_used, 3),
        "client_saturated": client_cores_used >= CLIENT_SATURATION_SHARE * client_cores,
        "steal_pct": round(100 * (after.steal_ticks - before.steal_ticks) / total_ticks, 2),
        "cpu_pressure_pct": pressure,
        "checkpoints": after.checkpoints - before.checkpoints,
        "autovacuums": after.autovacuums - before.autovacuums,
    }


class WaitEventSampler:
    """Polls pg_stat_activity every 100 ms from its own connection while a window runs: for each active
    client backend, whether it was running or which wait event it was waiting on.

    The poll is one cheap catalog-free query; its backend runs on the server's budget like any other."""

    INTERVAL_S = 0.1
    SQL = """
SELECT coalesce(wait_event_type || ':' || wait_event, 'running'), count(*)
FROM pg_stat_activity
WHERE backend_type = 'client backend' AND state = 'active' AND datname = %s AND pid <> pg_backend_pid()
GROUP BY 1
"""

    def __init__(self, conninfo: str, dbname: str) -> None:
        self.conninfo = conninfo
        self.dbname = dbname
        self.polls = 0
        self.counts: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with contextlib.suppress(psycopg.Error), psycopg.connect(self.conninfo, autocommit=True) as conn:
            # Prepared once: the poll must not cost a parse and plan every 100 ms.
            while not self._stop.wait(self.INTERVAL_S):
                for state, count in conn.execute(self.SQL, (self.dbname,), prepare=True).fetchall():
                    self.counts[state] = self.counts.get(state, 0) + int(count)
                self.polls += 1

    def encoded(self) -> str | None:
        """The CSV cell: running=N;Type:Event=N;..., most frequent first. Empty when every poll found no
        active backend (a window of short transactions can fall between polls): zero samples, which
        wait_samples tells apart from a window that was not sampled (wait_samples empty too)."""
        return encode_wait_events(self.counts)

    def __enter__(self) -> WaitEventSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def encode_wait_events(counts: dict[str, int]) -> str | None:
    if not counts:
        return None
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ";".join(f"{state}={count}" for state, count in ordered)


def decode_wait_events(cell: str | None) -> dict[str, int]:
    """The inverse of encode_wait_events; an empty cell is no samples."""
    if not cell:
        return {}
    return {state: int(count) for state, count in (pair.rsplit("=", 1) for pair in cell.split(";"))}
