"""Memory of server processes, counted four ways.

The sum of RSS counts shared_buffers and the binary once per process, so it overstates what connections
cost; PSS divides shared pages among their sharers; anonymous RSS leaves shared pages out; the cgroup's
usage is what the kernel actually charged. The honest per-connection cost is a difference of cgroup usage.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from connlab.lab.cpu_budget import CpuBudget

KIB = 1024


@dataclass(frozen=True)
class ProcessMemory:
    rss_bytes: int
    pss_bytes: int
    anon_rss_bytes: int


def kib_field(text: str, name: str) -> int:
    """A `Name:   123 kB` line of /proc/PID/smaps_rollup or /proc/PID/status, in bytes; 0 if absent."""
    for line in text.splitlines():
        if line.startswith(f"{name}:"):
            return int(line.split()[1]) * KIB
    return 0


def parse_process_memory(smaps_rollup: str, status: str) -> ProcessMemory:
    """Rss and Pss from smaps_rollup, RssAnon from status."""
    return ProcessMemory(
        kib_field(smaps_rollup, "Rss"), kib_field(smaps_rollup, "Pss"), kib_field(status, "RssAnon")
    )


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
