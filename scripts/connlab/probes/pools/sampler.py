"""pools: the window's pooler polled every 250 ms (PgBouncer: SHOW POOLS) for the clients waiting for a
server connection in the window's pool, and how long the oldest of them waited."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from connlab.lab.samplers.base import ThreadedProbe


class PoolSampler(ThreadedProbe):
    name = "pools"

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.polls = 0
        self.waiting_total = 0
        self.waiting_max = 0
        self.maxwait_ms = 0.0

    @contextlib.contextmanager
    def session(self) -> Iterator[Any]:
        pooler = self.context.pooler
        if pooler is None:
            yield None
            return
        with pooler.pool_watch(self.context.database) as read:
            yield read

    def poll(self, session: Callable[[], tuple[int, float]]) -> bool:
        waiting, longest_ms = session()
        self.polls += 1
        self.waiting_total += waiting
        self.waiting_max = max(self.waiting_max, waiting)
        self.maxwait_ms = max(self.maxwait_ms, longest_ms)
        return True

    def figures(self) -> dict[str, object]:
        return {
            "pool_samples": self.polls,
            "pool_cl_waiting_avg": round(self.waiting_total / self.polls, 3) if self.polls else None,
            "pool_cl_waiting_max": self.waiting_max if self.polls else None,
            "pool_maxwait_ms_max": round(self.maxwait_ms, 3) if self.polls else None,
        }


SAMPLER = PoolSampler
