"""A pooler's memory, whatever the pooler: peak RSS and PSS of its whole process tree and its process count,
sampled by a background thread while a window runs.

Contract: `PoolerMemorySampler(processes)` takes a function that returns the pooler's processes now (an
adapter's `processes()`), samples every `interval_s` while the `with` block runs, and `figures()` gives the
CSV columns (`POOLER_MEMORY_COLUMNS`); `samples` keeps every (seconds, RSS, PSS, processes) for the
sustained-load experiment. `snapshot(processes())` is one reading, e.g. before the first query.

Traps:
- The tree, not the parent: PgPool-II's work and memory are in its forked children (the seed's 104
  processes and a gigabyte before the first query); runuser and `sh` in front count as the tiny
  processes they are, and are in every pooler's tree alike.
- RSS counts shared pages once per process, so a forking pooler's summed RSS overstates what it costs;
  PSS divides shared pages among their sharers. Both are reported, PSS is the honest sum.
- Children come and go between the listing and the read: a process gone meanwhile counts as nothing.
- One sample is taken at once on entry and one on exit, so a window shorter than the interval still has
  a peak, and a pooler killed mid-window keeps the peak it had.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Self

import psutil

from connlab.lab.memory import kib_field
from connlab.probes.pooler_memory.probe import PROBE

SAMPLE_INTERVAL_S = PROBE.interval_s
# The window's peaks (the start reading's columns come from the adapter's `start_memory`).
POOLER_MEMORY_COLUMNS = (
    "pooler_rss_peak_bytes", "pooler_pss_peak_bytes", "pooler_processes_peak", "pooler_memory_samples",
)  # fmt: skip


@dataclass(frozen=True)
class TreeMemory:
    rss_bytes: int
    pss_bytes: int
    processes: int


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


class PoolerMemorySampler:
    """Peak RSS, PSS and process count of a pooler's tree over a window, sampled in a thread."""

    def __init__(
        self, processes: Callable[[], list[psutil.Process]], interval_s: float = SAMPLE_INTERVAL_S
    ) -> None:
        self.processes = processes
        self.interval_s = interval_s
        self.samples: list[tuple[float, TreeMemory]] = []
        self._started = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._lock = threading.Lock()

    def sample(self) -> None:
        with contextlib.suppress(psutil.Error):
            reading = snapshot(self.processes())
            if reading.processes:
                with self._lock:
                    self.samples.append((time.monotonic() - self._started, reading))

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def __enter__(self) -> Self:
        self._started = time.monotonic()
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sample()

    def series_kib(self, step_s: float) -> list[int]:
        """RSS in KiB at each multiple of `step_s` from the start: the first reading at or after each mark."""
        with self._lock:
            samples = list(self.samples)
        series, mark = [], 0.0
        for seconds, reading in samples:
            if seconds >= mark:
                series.append(reading.rss_bytes // 1024)
                mark = (int(seconds // step_s) + 1) * step_s
        return series

    def figures(self) -> dict[str, int | None]:
        with self._lock:
            readings = [reading for _, reading in self.samples]
        if not readings:
            return dict.fromkeys(POOLER_MEMORY_COLUMNS) | {"pooler_memory_samples": 0}
        return {
            "pooler_rss_peak_bytes": max(reading.rss_bytes for reading in readings),
            "pooler_pss_peak_bytes": max(reading.pss_bytes for reading in readings),
            "pooler_processes_peak": max(reading.processes for reading in readings),
            "pooler_memory_samples": len(readings),
        }
