"""How long a run takes, from the experiments' specs: the progress line's estimate (connlab.lab.overall), the
Contributing page's durations and `connlab estimate`, so that no page states a duration of its own.

A window is its duration plus a fixed overhead; an experiment adds a fixed set-up and its calibration. Every
pooler is counted as present (a machine without one measures less).
"""

from __future__ import annotations

from dataclasses import dataclass

from connlab.contract.experiment import Plan, experiment_names, load_experiment, make_plan

# A checkpoint, the probes' start and stop and pgbench's connect around each window, in seconds.
WINDOW_OVERHEAD_S = 1.5
# initdb, pgbench -i, prewarm and the server's start per experiment, before its calibration.
SETUP_S = 20.0


def window_estimate_s(plan: Plan) -> float:
    return plan.profile.duration_s + WINDOW_OVERHEAD_S


def setup_estimate_s(plan: Plan) -> float:
    return SETUP_S + plan.profile.calibration_s


@dataclass(frozen=True)
class RunEstimate:
    """Every experiment of a profile on a machine of `machine_cores` cores."""

    profile: str
    machine_cores: int
    experiments: int
    windows: int  # the grids' windows
    seconds: float  # the grids' and the refinement's, at most
    refinement_windows: int = 0  # the most windows refinement adds (connlab.lab.refine)

    @property
    def minutes(self) -> int:
        return round(self.seconds / 60)

    @property
    def hours(self) -> float:
        return round(self.seconds / 3600, 1)


def plans_for(profile: str, machine_cores: int, names: list[str] | None = None) -> list[Plan]:
    """Each experiment's plan for a machine of this many cores (its server budget as the spec sets it)."""
    return [
        make_plan(name, profile, server_cores=load_experiment(name).server.cores(machine_cores))
        for name in names or experiment_names()
    ]


def plan_estimate_s(plan: Plan) -> float:
    """One experiment from its set-up to its last window, with as many refinement windows as its budget
    allows (connlab.lab.refine: a run measures at most that many, often fewer)."""
    windows = len(plan.windows()) + plan.refinement_windows()
    return setup_estimate_s(plan) + windows * window_estimate_s(plan)


def run_estimate(profile: str, machine_cores: int, names: list[str] | None = None) -> RunEstimate:
    plans = plans_for(profile, machine_cores, names)
    windows = sum(len(plan.windows()) for plan in plans)
    refining = sum(plan.refinement_windows() for plan in plans)
    seconds = sum(map(plan_estimate_s, plans))
    return RunEstimate(profile, machine_cores, len(plans), windows, seconds, refining)
