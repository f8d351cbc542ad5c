"""A pooler's memory, whatever the pooler: summed RSS and PSS of its whole process tree and its process
count, in one reading from /proc.

Contract: `snapshot(processes())` is one reading of the processes an adapter's `processes()` returns. The
adapters take one after the start, before the first query (`PoolerProcess.start_memory`); the
pooler_memory probe (connlab/probes/pooler_memory/sampler.py) samples them while a window runs, and the
memory probe reads the server's backends with the same parser (`parse_rollup`, `kib_field`) into the same
figures (`RssAndPss`).

Traps:
- The tree, not the parent: PgPool-II's work and memory are in its forked children (the seed's 104
  processes and a gigabyte before the first query); runuser and `sh` in front count as the tiny
  processes they are, and are in every pooler's tree alike.
- RSS counts shared pages once per process, so a forking pooler's summed RSS overstates what it costs;
  PSS divides shared pages among their sharers. Both are reported, PSS is the honest sum.
- Children come and go between the listing and the read: a process gone meanwhile counts as nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import psutil

KIB = 1024


@dataclass(frozen=True)
class RssAndPss:
    """Resident and proportional set sizes in bytes, of one process or summed over several."""

    rss_bytes: int
    pss_bytes: int


@dataclass(frozen=True)
class TreeMemory(RssAndPss):
    processes: int


def kib_field(text: str, name: str) -> int:
    """A `Name:   123 kB` line of /proc/PID/smaps_rollup or /proc/PID/status, in bytes; 0 if absent."""
    for line in text.splitlines():
        if line.startswith(f"{name}:"):
            return int(line.split()[1]) * KIB
    return 0


def parse_rollup(text: str) -> tuple[int, int]:
    """(Rss, Pss) in bytes from the text of /proc/PID/smaps_rollup."""
    return kib_field(text, "Rss"), kib_field(text, "Pss")


def read_rollup(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:  # gone, or a kernel thread without an address space
        return None


def snapshot(
    processes: Iterable[psutil.Process], read: Callable[[int], str | None] = read_rollup
) -> TreeMemory:
    """One reading of the tree: summed RSS and PSS of the processes still there, and how many they are."""
    rss = pss = count = 0
    for process in processes:
        text = read(process.pid)
        if text is None:
            continue
        process_rss, process_pss = parse_rollup(text)
        rss, pss, count = rss + process_rss, pss + process_pss, count + 1
    return TreeMemory(rss, pss, count)
