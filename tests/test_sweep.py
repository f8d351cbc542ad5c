"""The sweep's pooler restarts: a spec whose poolers start per pass gets a fresh start at every pass."""

from __future__ import annotations

from connlab.contract.experiment import Plan, make_plan
from connlab.lab.sweep import restarts_poolers


def restart_passes(plan: Plan, first_window: int = 0) -> list[int]:
    """The passes whose first window the sweep restarts the poolers before, from `first_window` on (a run
    resumed there: the bench has just started them)."""
    running: int | None = None
    restarted = []
    for window in plan.windows()[first_window:]:
        if restarts_poolers(plan, running, window):
            restarted.append(window.pass_no)
        running = window.pass_no
    return restarted


def test_poolers_started_per_pass_start_afresh_at_every_pass_after_the_first() -> None:
    plan = make_plan("pooler-memory", "full", server_cores=1)
    assert plan.spec.pooler_start == "per-pass"
    assert restart_passes(plan) == list(range(2, plan.profile.passes + 1))


def test_a_resumed_run_restarts_only_at_the_passes_after_where_it_resumed() -> None:
    plan = make_plan("pooler-sustained", "full", server_cores=1)
    windows = plan.windows()
    second_pass = next(number for number, window in enumerate(windows) if window.pass_no == 2)
    assert restart_passes(plan, second_pass) == []  # the bench's own start is that pass's
    assert restart_passes(plan, second_pass - 1) == [2]


def test_poolers_started_per_run_are_never_restarted() -> None:
    plan = make_plan("pooler-churn", "full", server_cores=1)
    assert plan.spec.pooler_start == "per-run" and plan.profile.passes > 1
    assert restart_passes(plan) == []
