"""memory_loaded: the memory probe's figures (the same columns), read once halfway through the window while
every one of its connections is connected and running queries: backends under load (seed 002)."""

from __future__ import annotations

from connlab.contract.probes.declaration import Probe
from connlab.probes.memory.probe import COLUMNS, IDLE_BACKENDS_SQL

PROBE = Probe(
    "memory_loaded",
    0.1,
    COLUMNS,
    "the same memory figures, read once halfway through the window while every one of its "
    "connections is connected and running queries (backends under load, not idle ones)",
    after="wait_events",
    query=IDLE_BACKENDS_SQL,
)
