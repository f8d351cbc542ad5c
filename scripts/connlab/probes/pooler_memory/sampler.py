"""pooler_memory: the pooler's whole process tree (connlab.lab.pooler_memory) every 500 ms while the window
runs: peak RSS, PSS and process count, RSS every 10 s (the sustained-load series), and the reading its
adapter took once after the start, before any window (memory before the first query)."""

from __future__ import annotations

from typing import Any

from connlab.lab.pooler_memory import PoolerMemorySampler
from connlab.lab.samplers.base import ThreadedProbe
from connlab.probes.pooler_memory.probe import POOLER_SERIES_STEP_S, encode_series


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
