"""memory: waits until the window's clients are all connected and idle, lets them settle, then measures the
server's memory once: the cgroup's counters and the backends' own figures (connlab.lab.memory)."""

from __future__ import annotations

import time
from typing import Any

from connlab.contract.remote import REMOTE_CPU_METHOD
from connlab.lab.memory import measure
from connlab.lab.samplers.base import ThreadedProbe


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
