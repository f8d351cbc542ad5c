"""What the harness reads around every measurement window, without disturbing it.

Everything here is read once before and once after a window (counters, not samplers), so it costs nothing
while pgbench runs: the observer effect is checked by scripts/bench/observer_effect.py. The in-window
probes an experiment lists are in connlab.lab.samplers.registry. Parsers take the text of the /proc file
they read.
"""

from __future__ import annotations

import contextlib
import re
import resource
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from connlab.contract.names import CLIENT_SATURATION_SHARE
from connlab.contract.remote import REMOTE_CPU_METHOD
from connlab.lab.cluster import Cluster
from connlab.lab.cpu_budget import CpuBudget

PROC_STAT = Path("/proc/stat")
CPU_PRESSURE = Path("/proc/pressure/cpu")


@dataclass(frozen=True)
class Snapshot:
    monotonic_s: float
    server_cpu_s: float | None  # None: a remote server, whose host this is not
    steal_ticks: int
    total_ticks: int
    pressure_us: int | None
    checkpoints: int
    autovacuums: int


def parse_proc_stat(text: str) -> tuple[int, int]:
    """/proc/stat's first line: (steal ticks, all ticks) of the whole machine."""
    fields = text.splitlines()[0].split()[1:]
    ticks = [int(value) for value in fields[:8]]  # user nice system idle iowait irq softirq steal
    return ticks[7], sum(ticks)


def parse_pressure_total_us(text: str) -> int:
    """/proc/pressure/cpu's `some` line: total microseconds some task waited for a CPU."""
    return int(text.splitlines()[0].rsplit("total=", 1)[1])


def _cpu_pressure_us() -> int | None:
    """None on kernels without PSI."""
    try:
        return parse_pressure_total_us(CPU_PRESSURE.read_text())
    except OSError:
        return None


def server_cpu_seconds(cluster: Cluster, budget: CpuBudget | None) -> float | None:
    """The server's CPU time: the cgroup's counter, or the postmaster tree where only affinity is set;
    None for a remote server, whose processes are on another host.

    The postmaster's children_* times include backends it already reaped, so exited connections count.
    """
    if budget is not None and budget.method == REMOTE_CPU_METHOD:
        return None
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
    steal, total = parse_proc_stat(PROC_STAT.read_text())
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


def count_time_wait(table: str) -> int:
    """Sockets in TIME_WAIT in one /proc/net/tcp or tcp6 table (its `st` column)."""
    return sum(1 for line in table.splitlines()[1:] if line.split()[3] == TIME_WAIT_STATE)


def time_wait_sockets() -> int:
    """Sockets in TIME_WAIT on this machine, IPv4 and IPv6."""
    count = 0
    for table in TCP_TABLES:
        with contextlib.suppress(OSError):
            count += count_time_wait(table.read_text())
    return count


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
    server_cpu = None
    if before.server_cpu_s is not None and after.server_cpu_s is not None:
        server_cpu = round((after.server_cpu_s - before.server_cpu_s) / wall, 3)
    return {
        "server_cpu_cores": server_cpu,
        "client_cpu_cores": round(client_cores_used, 3),
        "client_saturated": client_cores_used >= CLIENT_SATURATION_SHARE * client_cores,
        "steal_pct": round(100 * (after.steal_ticks - before.steal_ticks) / total_ticks, 2),
        "cpu_pressure_pct": pressure,
        "checkpoints": after.checkpoints - before.checkpoints,
        "autovacuums": after.autovacuums - before.autovacuums,
    }
