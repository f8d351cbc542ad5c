"""Memory of server processes, counted four ways.

The sum of RSS counts shared_buffers and the binary once per process, so it overstates what connections
cost; PSS divides shared pages among their sharers; anonymous RSS leaves shared pages out; the cgroup's
usage is what the kernel actually charged. The honest per-connection cost is a difference of cgroup usage.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import psutil

KIB = 1024


@dataclass(frozen=True)
class ProcessMemory:
    rss_bytes: int
    pss_bytes: int
    anon_rss_bytes: int


def _kib_field(text: str, name: str) -> int:
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
    return ProcessMemory(_kib_field(rollup, "Rss"), _kib_field(rollup, "Pss"), _kib_field(status, "RssAnon"))


def sum_memory(pids: list[int]) -> ProcessMemory:
    rss = pss = anon = 0
    for pid in pids:
        memory = process_memory(pid)
        if memory:
            rss, pss, anon = rss + memory.rss_bytes, pss + memory.pss_bytes, anon + memory.anon_rss_bytes
    return ProcessMemory(rss, pss, anon)


def process_tree(pid: int) -> list[int]:
    """A process and all its descendants (a pooler's workers, a postmaster's backends)."""
    with contextlib.suppress(psutil.Error):
        parent = psutil.Process(pid)
        return [parent.pid, *(child.pid for child in parent.children(recursive=True))]
    return []
