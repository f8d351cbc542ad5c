"""Progress across several experiments (`connlab run-all`, which `make all` calls): one ETA for them all.

Each experiment's bar counts its own windows; this counts estimated seconds over every experiment still to
run, so the reader of a half-hour `make all` sees one figure for the whole. The estimate per window is its
duration plus a fixed overhead, and per experiment a fixed set-up (connlab.contract.estimate, which the
Contributing page's durations also come from); the ETA then scales what is left by how
fast the estimated seconds have actually gone by, so a slow machine's overheads correct themselves.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from connlab.contract.estimate import setup_estimate_s, window_estimate_s
from connlab.contract.experiment import Plan

__all__ = ["Overall", "setup_estimate_s", "window_estimate_s"]


@dataclass
class Overall:
    total_s: float
    experiments: int
    started: float = field(default_factory=time.monotonic)
    done_s: float = 0.0
    experiment_no: int = 0

    @classmethod
    def of(cls, pending: list[tuple[Plan, int]]) -> Overall:
        """From each plan and the number of its windows still to run."""
        total = sum(setup_estimate_s(plan) + count * window_estimate_s(plan) for plan, count in pending)
        return cls(total_s=total, experiments=len(pending))

    def advance(self, seconds: float) -> None:
        self.done_s = min(self.total_s, self.done_s + seconds)

    def eta_s(self) -> float | None:
        if self.done_s <= 0:
            return None
        return (time.monotonic() - self.started) / self.done_s * (self.total_s - self.done_s)

    def line(self) -> str:
        """'experiment 3 of 19, 14% of all, ETA 41 min'."""
        eta = self.eta_s()
        eta_text = "unknown" if eta is None else f"{eta / 60:.0f} min"
        share = self.done_s / self.total_s if self.total_s else 1.0
        return f"experiment {self.experiment_no} of {self.experiments}, {share:.0%} of all, ETA {eta_text}"
