"""memory_loaded: the memory probe's figures, read once halfway through a window whose clients are all
connected and running queries: a backend under load, whose RSS holds the shared buffers it has touched
(seed 002)."""

from __future__ import annotations

import time
from typing import Any

from connlab.probes.memory.sampler import IdleMemoryProbe


class LoadedMemoryProbe(IdleMemoryProbe):
    name = "memory_loaded"

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        # Halfway through the window the backends have run for a while: their RSS holds the shared buffers
        # they touched, which is what the seed read (one backend during a 100-client run).
        self.halfway = time.monotonic() + self.context.duration_s / 2

    def _ready(self, rows: list[tuple[int, str]]) -> bool:
        """Every client connected, whatever it is doing, once half the window has passed."""
        return time.monotonic() >= self.halfway and len(rows) == self.context.clients


SAMPLER = LoadedMemoryProbe
