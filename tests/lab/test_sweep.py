"""The sweep's pooler restarts (a spec whose poolers start per pass gets a fresh start at every pass), and the
line a log file gets for each window."""

from __future__ import annotations

from connlab.contract.experiment import Plan, make_plan
from connlab.lab.sweep import restarts_poolers, window_line


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


def test_a_log_files_window_line_gives_the_throughput_whole_and_the_time_left() -> None:
    window = make_plan("pooler-sustained", "full", server_cores=1).windows()[0]
    measured = {"ok": True, "tps": 12634.174178}
    line = window_line(window, measured, 31 * 60)
    assert line == f"{window.workload.id} c=50 pass 1: 12,634 tps; ETA 31 min"
    assert window_line(window, {"ok": False, "tps": 12.5}, 30).endswith(": failed; ETA under a minute")
    assert window_line(window, measured, 0).endswith("; ETA 0 min")
