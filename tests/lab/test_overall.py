"""The progress across experiments of `connlab run-all`: estimated seconds, scaled by how fast they go."""

from __future__ import annotations

import pytest

from connlab.contract.experiment import make_plan
from connlab.lab import overall as overall_module
from connlab.lab.overall import Overall, setup_estimate_s, window_estimate_s


def test_total_is_set_up_plus_each_pending_window() -> None:
    plan = make_plan("clients-sweep", "tiny", server_cores=1)
    progress = Overall.of([(plan, 10), (plan, 0)])
    assert progress.total_s == pytest.approx(2 * setup_estimate_s(plan) + 10 * window_estimate_s(plan))
    assert progress.experiments == 2


def test_eta_scales_what_is_left_by_the_pace_so_far(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(overall_module.time, "monotonic", lambda: 160.0)
    progress = Overall(total_s=400.0, experiments=3, started=100.0)
    assert progress.eta_s() is None  # nothing done yet: no pace to scale by
    progress.advance(100.0)  # 100 estimated seconds took 60 real ones
    assert progress.eta_s() == pytest.approx(60 / 100 * 300)
    progress.experiment_no = 2
    assert progress.line() == "experiment 2 of 3, 25% of all, ETA 3 min"


def test_progress_never_passes_the_total() -> None:
    progress = Overall(total_s=10.0, experiments=1)
    progress.advance(25.0)
    assert progress.done_s == 10.0
