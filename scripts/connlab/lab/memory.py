"""Memory of server processes, counted four ways.

The sum of RSS counts shared_buffers and the binary once per process, so it overstates what connections
cost; PSS divides shared pages among their sharers; anonymous RSS leaves shared pages out; the cgroup's
usage is what the kernel actually charged. The honest per-connection cost is a difference of cgroup usage.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg

from connlab.lab.cpu_budget import CpuBudget

KIB = 1024


@dataclass(frozen=True)
class ProcessMemory:
    rss_bytes: int
    pss_bytes: int
    anon_rss_bytes: int


def kib_field(text: str, name: str) -> int:
    """A "Name:   123 kB" field of /proc/PID/smaps_rollup or status, in bytes; 0 when absent."""
    for line in text.splitlines():
        if line.startswith(f"{name}:"):
            return int(line.split()[1]) * KIB
    return 0


def process_memory(pid: int) -> ProcessMemory | None:
    """Rss and Pss from smaps_rollup, RssAnon from status; None if the process is gone."""
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    return ProcessMemory(kib_field(rollup, "Rss"), kib_field(rollup, "Pss"), kib_field(status, "RssAnon"))


def sum_memory(pids: list[int]) -> ProcessMemory:
    rss = pss = anon = 0
    for pid in pids:
        memory = process_memory(pid)
        if memory:
            rss, pss, anon = rss + memory.rss_bytes, pss + memory.pss_bytes, anon + memory.anon_rss_bytes
    return ProcessMemory(rss, pss, anon)


class IdleMemoryProbe:
    """Waits, in a thread, until the window's clients are all connected and idle, lets them settle, then
    measures the server's memory once: the cgroup's counters and the backends' own figures."""

    POLL_S = 0.1
    SETTLE_S = 1.0
    IDLE_SQL = """
SELECT pid, state FROM pg_stat_activity
WHERE backend_type = 'client backend' AND datname = %s AND pid <> pg_backend_pid()
"""

    def __init__(self, conninfo: str, dbname: str, clients: int, budget: CpuBudget, timeout_s: float) -> None:
        self.conninfo = conninfo
        self.dbname = dbname
        self.clients = clients
        self.budget = budget
        self.timeout_s = timeout_s
        self.figures: dict[str, int | None] = dict.fromkeys(MEMORY_COLUMNS)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _idle_pids(self, conn: psycopg.Connection) -> list[int] | None:
        rows = conn.execute(self.IDLE_SQL, (self.dbname,)).fetchall()
        if len(rows) == self.clients and all(state == "idle" for _, state in rows):
            return [pid for pid, _ in rows]
        return None

    def _run(self) -> None:
        deadline = time.monotonic() + self.timeout_s
        with contextlib.suppress(psycopg.Error), psycopg.connect(self.conninfo, autocommit=True) as conn:
            while not self._stop.wait(self.POLL_S) and time.monotonic() < deadline:
                if self._idle_pids(conn) is None:
                    continue
                # Freshly forked backends are still touching pages; measure a settled state.
                if self._stop.wait(self.SETTLE_S):
                    return
                pids = self._idle_pids(conn)
                if pids is not None:
                    self.figures = measure(pids, self.budget)
                return

    def __enter__(self) -> IdleMemoryProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


MEMORY_COLUMNS = (
    "mem_backends", "mem_cgroup_usage_bytes", "mem_cgroup_rss_bytes", "mem_cgroup_cache_bytes",
    "mem_rss_sum_bytes", "mem_pss_sum_bytes", "mem_anon_rss_sum_bytes",
)  # fmt: skip


def measure(pids: list[int], budget: CpuBudget) -> dict[str, int | None]:
    """The CSV figures for these backends and the server's cgroup (None where there is no memory cgroup)."""
    counters = budget.memory_stat()
    summed = sum_memory(pids)
    return {
        "mem_backends": len(pids),
        "mem_cgroup_usage_bytes": counters.get("usage_in_bytes"),
        # total_* include child cgroups; the server's cgroup has none, but total_ is the documented sum.
        "mem_cgroup_rss_bytes": counters.get("total_rss"),
        "mem_cgroup_cache_bytes": counters.get("total_cache"),
        "mem_rss_sum_bytes": summed.rss_bytes,
        "mem_pss_sum_bytes": summed.pss_bytes,
        "mem_anon_rss_sum_bytes": summed.anon_rss_bytes,
    }
