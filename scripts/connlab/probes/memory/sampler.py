"""memory: waits until the window's clients are all connected and idle, lets them settle, then measures the
server's memory once: the cgroup's counters and the backends' own figures.

Memory of server processes, counted four ways. The sum of RSS counts shared_buffers and the binary once per
process, so it overstates what connections cost; PSS divides shared pages among their sharers; anonymous RSS
leaves shared pages out; the cgroup's usage is what the kernel actually charged. The honest per-connection
cost is a difference of cgroup usage.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from connlab.contract.remote import REMOTE_CPU_METHOD
from connlab.lab.cpu_budget import CpuBudget
from connlab.lab.pooler_memory import RssAndPss, kib_field, parse_rollup
from connlab.lab.samplers.base import ThreadedProbe


@dataclass(frozen=True)
class ProcessMemory(RssAndPss):
    anon_rss_bytes: int


def parse_process_memory(smaps_rollup: str, status: str) -> ProcessMemory:
    """Rss and Pss from smaps_rollup, RssAnon from status."""
    return ProcessMemory(*parse_rollup(smaps_rollup), kib_field(status, "RssAnon"))


def process_memory(pid: int) -> ProcessMemory | None:
    """A live process's memory; None if the process is gone."""
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    return parse_process_memory(rollup, status)


def sum_memory(pids: list[int]) -> ProcessMemory:
    rss = pss = anon = 0
    for pid in pids:
        memory = process_memory(pid)
        if memory:
            rss, pss, anon = rss + memory.rss_bytes, pss + memory.pss_bytes, anon + memory.anon_rss_bytes
    return ProcessMemory(rss, pss, anon)


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


class IdleMemoryProbe(ThreadedProbe):
    name = "memory"
    SETTLE_S = 1.0

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.result: dict[str, int | None] = dict.fromkeys(self.probe.column_names)
        self.deadline = time.monotonic() + self.context.duration_s

    def _ready(self, rows: list[tuple[int, str]]) -> bool:
        """Whether the backends are in the state the probe measures: every client connected and idle."""
        return len(rows) == self.context.clients and all(state == "idle" for _, state in rows)

    def _idle_pids(self, conn: Any) -> list[int] | None:
        rows = conn.execute(self.probe.query).fetchall()
        return [pid for pid, _ in rows] if self._ready(rows) else None

    def poll(self, session: Any) -> bool:
        # A remote server's backends are processes of another host: their memory cannot be read here.
        if time.monotonic() >= self.deadline or self.context.budget.method == REMOTE_CPU_METHOD:
            return False
        if self._idle_pids(session) is None:
            return True
        # Freshly forked backends are still touching pages; measure a settled state.
        if self.stopped(self.SETTLE_S):
            return False
        pids = self._idle_pids(session)
        if pids is not None:
            self.result = measure(pids, self.context.budget)
        return False

    def figures(self) -> dict[str, object]:
        return dict(self.result)


SAMPLER = IdleMemoryProbe
