"""How long a run takes, from the specs (connlab.contract.estimate): the progress line's estimate, the
Contributing page's durations and `connlab estimate` are one figure."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from connlab.cli import app
from connlab.contract.estimate import (
    WINDOW_OVERHEAD_S,
    plan_estimate_s,
    plans_for,
    run_estimate,
    setup_estimate_s,
    window_estimate_s,
)
from connlab.contract.experiment import experiment_names, make_plan
from connlab.site.render.renderer import PageRenderer


def test_a_plan_is_its_set_up_and_each_window_with_its_overhead() -> None:
    plan = make_plan("pooler-sustained", "full", server_cores=1)
    windows = len(plan.windows())
    assert windows == len(plan.spec.workloads) * plan.profile.passes
    expected = setup_estimate_s(plan) + windows * (plan.profile.duration_s + WINDOW_OVERHEAD_S)
    assert plan_estimate_s(plan) == pytest.approx(expected)
    assert window_estimate_s(plan) == plan.profile.duration_s + WINDOW_OVERHEAD_S


@pytest.mark.parametrize("machine_cores", [2, 16])
def test_a_run_is_every_experiment_of_its_profile(machine_cores: int) -> None:
    estimate = run_estimate("full", machine_cores)
    plans = plans_for("full", machine_cores)
    assert estimate.experiments == len(experiment_names()) == len(plans)
    assert estimate.windows == sum(len(plan.windows()) for plan in plans)
    assert estimate.seconds == pytest.approx(sum(plan_estimate_s(plan) for plan in plans))
    assert run_estimate("quick", machine_cores).seconds < estimate.seconds


def test_the_contributing_page_states_the_estimates_not_figures_of_its_own(tmp_path: Path) -> None:
    renderer = PageRenderer(tmp_path / "data", tmp_path / "docs")
    page = renderer.render_deferred("contributing.md.j2", "contributing.md", "contributing")
    full, quick = run_estimate("full", 2), run_estimate("quick", 2)
    assert f"full profile (about {full.hours} hours on a 2-core machine)" in page
    assert f"a first look, about {quick.minutes} minutes" in page
    assert f"the full profile is {full.windows} windows" in page
    assert "{{" not in page and "{%" not in page


def test_the_estimate_command_prints_every_experiment_and_the_total() -> None:
    result = CliRunner().invoke(app, ["estimate", "--profile", "full", "--cores", "16"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert [line.split()[0] for line in lines[:-1]] == experiment_names()
    total = run_estimate("full", 16)
    assert lines[-1].startswith("all") and f"{total.windows} windows" in lines[-1]
    assert f"(about {total.hours} h), full profile on 16 cores" in lines[-1]
