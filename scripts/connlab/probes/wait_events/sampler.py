"""wait_events: pg_stat_activity every 100 ms; for each active client backend, whether it was running or
which wait event it waited on. The poll is one cheap catalog-free query, prepared once; its backend runs
on the server's budget like any other."""

from __future__ import annotations

from typing import Any

from connlab.lab.samplers.base import ThreadedProbe
from connlab.probes.wait_events.probe import encode_wait_events


class WaitEventSampler(ThreadedProbe):
    name = "wait_events"

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.polls = 0
        self.counts: dict[str, int] = {}

    def poll(self, session: Any) -> bool:
        for state, count in session.execute(self.probe.query, prepare=True).fetchall():
            self.counts[state] = self.counts.get(state, 0) + int(count)
        self.polls += 1
        return True

    def figures(self) -> dict[str, object]:
        """wait_events is empty when every poll found no active backend (a window of short transactions
        can fall between polls): zero samples, which wait_samples tells apart from a window that was not
        sampled (wait_samples empty too)."""
        return {"wait_samples": self.polls, "wait_events": encode_wait_events(self.counts)}


SAMPLER = WaitEventSampler
