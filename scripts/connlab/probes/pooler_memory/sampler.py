"""pooler_memory: the pooler's whole process tree (connlab.lab.pooler_memory) every 500 ms while the window
runs: peak RSS, PSS and process count, RSS every 10 s (the sustained-load series), and the reading its
adapter took once after the start, before any window (memory before the first query).

Contract: `PoolerMemorySampler(processes)` takes a function that returns the pooler's processes now (an
adapter's `processes()`), samples every `interval_s` while the `with` block runs, and `figures()` gives the
CSV columns (`POOLER_MEMORY_COLUMNS`); `samples` keeps every (seconds, RSS, PSS, processes) for the
sustained-load experiment.

Trap: one sample is taken at once on entry and one on exit, so a window shorter than the interval still
has a peak, and a pooler killed mid-window keeps the peak it had.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any, Self

import psutil

from connlab.lab.pooler_memory import TreeMemory, snapshot
from connlab.lab.samplers.base import ThreadedProbe
from connlab.probes.pooler_memory.probe import POOLER_SERIES_STEP_S, PROBE, encode_series

SAMPLE_INTERVAL_S = PROBE.interval_s
# The window's peaks (the start reading's columns come from the adapter's `start_memory`).
POOLER_MEMORY_COLUMNS = (
    "pooler_rss_peak_bytes", "pooler_pss_peak_bytes", "pooler_processes_peak", "pooler_memory_samples",
)  # fmt: skip


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


class PoolerMemoryProbe(ThreadedProbe):
    name = "pooler_memory"

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        pooler = self.context.pooler
        self.sampler = PoolerMemorySampler(pooler.processes, self.probe.interval_s) if pooler else None

    def __enter__(self) -> PoolerMemoryProbe:
        if self.sampler is not None:
            self.sampler.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.sampler is not None:
            self.sampler.__exit__(*exc)

    def figures(self) -> dict[str, object]:
        figures: dict[str, object] = dict.fromkeys(self.probe.column_names)
        if self.sampler is None:
            return figures
        figures.update(self.sampler.figures())
        figures["pooler_rss_series_kib"] = encode_series(self.sampler.series_kib(POOLER_SERIES_STEP_S))
        start = self.context.pooler.start_memory if self.context.pooler else None
        if start is not None:
            figures.update(pooler_start_rss_bytes=start.rss_bytes, pooler_start_pss_bytes=start.pss_bytes,
                           pooler_start_processes=start.processes)  # fmt: skip
        return figures


SAMPLER = PoolerMemoryProbe
