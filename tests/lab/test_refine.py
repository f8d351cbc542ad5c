"""Points where the answer is (connlab.lab.refine): the client counts and passes a run adds after its grid,
decided from the rows alone, on synthetic curves; the budget they keep; and the rows' `added_for` column
as validation reads it, in files written before it existed and after."""

from __future__ import annotations

import csv
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from connlab.contract.columns import ADDED_FOR_PEAK, ADDED_FOR_SPREAD
from connlab.contract.estimate import plan_estimate_s, setup_estimate_s, window_estimate_s
from connlab.contract.experiment import make_plan, pass_order
from connlab.contract.spec_parts import Refine
from connlab.data import validate
from connlab.lab.refine import (
    PEAK_BRACKET_RATIO,
    Extra,
    Refinement,
    bisection,
    next_points,
    refinement_done,
    refinement_of,
)
from connlab.lab.results_file import ResultsFile, find_resumable

if TYPE_CHECKING:
    from support.rows import RunWriter

# The quick grid of clients-sweep on one server core: 1, 4, 32 and 400 clients per core.
QUICK_GRID = (1, 4, 32, 400)
TRUE_PEAK = 12
Curve = Callable[[int, int], float]  # tps at a client count in a pass


def peaked_at_12(clients: int, _pass_no: int) -> float:
    """A throughput curve rising to its peak at 12 clients and falling after, the same in every pass."""
    return 1000.0 * clients / (1 + (clients / TRUE_PEAK) ** 2)


def row(
    workload: str, clients: int, pass_no: int, tps: float, added_for: str = "", **cells: str
) -> dict[str, str]:
    """A results row as the sweep writes it and the results file reads it back: text cells."""
    return {
        "workload": workload, "clients": str(clients), "pass_no": str(pass_no), "server_cpu_budget": "1.0",
        "ok": "true", "tps": f"{tps:g}", "client_saturated": "false", "added_for": added_for, **cells,
    }  # fmt: skip


def grid_rows(
    curve: Curve, grid: tuple[int, ...], passes: int, workload: str = "mixed"
) -> list[dict[str, str]]:
    return [row(workload, c, p, curve(c, p)) for p in range(1, passes + 1) for c in grid]


def refinement(
    passes: int = 3, budget: int = 1000, workloads: tuple[str, ...] = ("mixed",), **settings: object
) -> Refinement:
    chosen = Refine(budget_share=1.0, **settings)  # type: ignore[arg-type]
    return Refinement(chosen, passes, QUICK_GRID, workloads, (1.0,), budget)


def measure(extra: Extra, curve: Curve) -> dict[str, str]:
    return row(
        extra.workload, extra.clients, extra.pass_no, curve(extra.clients, extra.pass_no), extra.added_for
    )


def refine_to_the_end(
    rows: list[dict[str, str]], settings: Refinement, curve: Curve
) -> tuple[list[dict[str, str]], list[list[Extra]]]:
    """Measure every round refinement asks for until it asks for nothing; the rows and the rounds."""
    rows, rounds = list(rows), []
    while extras := next_points(rows, settings):
        assert len(rounds) < 100, "refinement never ends"
        rounds.append(extras)
        rows += [measure(extra, curve) for extra in extras]
    return rows, rounds


def peak_counts(rounds: list[list[Extra]]) -> list[int]:
    return list(
        dict.fromkeys(e.clients for extras in rounds for e in extras if e.added_for == ADDED_FOR_PEAK)
    )


def test_the_peak_is_bisected_on_a_log_scale_until_bracketed_within_root_two() -> None:
    rows, rounds = refine_to_the_end(grid_rows(peaked_at_12, QUICK_GRID, 3), refinement(), peaked_at_12)
    # 32 leads the grid (its neighbours 4 and 400): the wider side first, each count the geometric mean of
    # the peak and its farther neighbour, rounded.
    assert peak_counts(rounds) == [113, 11, 19, 7, 14]
    assert rounds[0][0].describe() == "refining: 113 clients between 32 and 400"
    measured = sorted({int(r["clients"]) for r in rows})
    medians = {c: peaked_at_12(c, 1) for c in measured}
    peak = max(measured, key=medians.__getitem__)
    lower, upper = measured[measured.index(peak) - 1], measured[measured.index(peak) + 1]
    assert lower < TRUE_PEAK < upper and upper / lower <= PEAK_BRACKET_RATIO
    # The bracket's middle (on a log scale) then lies within a factor of √2 of the true peak.
    assert abs(math.log(math.sqrt(lower * upper) / TRUE_PEAK)) <= math.log(math.sqrt(2))
    assert bisection(medians, set(measured)) is None


def test_each_added_count_gets_every_pass_in_the_grids_order() -> None:
    """Two curves each add a count in one round: pass 1 ascending, pass 2 descending, pass 3 ascending, the
    workloads interleaved at each count, as the grid's windows are."""
    other: Curve = lambda clients, pass_no: peaked_at_12(clients * 4, pass_no)  # noqa: E731 - peak at 3
    rows = grid_rows(peaked_at_12, QUICK_GRID, 3, "mixed") + grid_rows(other, QUICK_GRID, 3, "tpcb-like")
    extras = next_points(rows, refinement(workloads=("mixed", "tpcb-like")))
    assert [(e.pass_no, e.clients, e.workload) for e in extras] == [
        (1, 11, "tpcb-like"), (1, 113, "mixed"),
        (2, 113, "mixed"), (2, 11, "tpcb-like"),
        (3, 11, "tpcb-like"), (3, 113, "mixed"),
    ]  # fmt: skip
    assert {pass_order(e.pass_no) for e in extras if e.pass_no == 2} == {"desc"}


def test_failed_and_client_saturated_windows_never_make_the_peak() -> None:
    rows = grid_rows(peaked_at_12, QUICK_GRID, 3)
    for r in rows:
        if r["clients"] == "400":
            r["tps"] = "1e9"
            r["client_saturated"] = "true"
        if r["clients"] == "32":
            r["ok"] = "false"
    # Left: 1, 4 (the peak) and nothing usable above it: at the curve's end, nothing to bisect.
    assert next_points(rows, refinement(spread=None)) == []


def test_no_refinement_before_the_curves_grid_is_complete() -> None:
    rows = grid_rows(peaked_at_12, QUICK_GRID, 3)[:-1]
    assert next_points(rows, refinement()) == []


def alternating(clients: int, pass_no: int) -> float:
    """A curve whose passes disagree by a fifth at 4 clients, and agree everywhere else."""
    wobble = 0.2 if clients == 4 and pass_no % 2 == 0 else 0.0
    return peaked_at_12(clients, pass_no) * (1 + wobble)


def test_a_point_whose_passes_spread_gets_at_most_two_more_passes() -> None:
    settings = refinement(peak=False, spread=0.15)
    _, rounds = refine_to_the_end(grid_rows(alternating, QUICK_GRID, 3), settings, alternating)
    added = [(e.clients, e.pass_no, e.added_for) for extras in rounds for e in extras]
    assert added == [(4, 4, ADDED_FOR_SPREAD), (4, 5, ADDED_FOR_SPREAD)]
    assert rounds[0][0].describe().startswith("refining: pass 4 at 4 clients (passes spread")
    one_more = refinement(peak=False, spread=0.15, max_extra_passes=1)
    assert [(e.clients, e.pass_no) for e in next_points(grid_rows(alternating, QUICK_GRID, 3), one_more)] == [
        (4, 4)
    ]
    assert next_points(grid_rows(alternating, QUICK_GRID, 3), refinement(peak=False, spread=0.25)) == []


@pytest.mark.parametrize("budget", [0, 2, 3, 7, 20])
def test_the_budget_per_curve_holds(budget: int) -> None:
    settings = refinement(budget=budget, spread=0.0)
    curve: Curve = lambda clients, pass_no: peaked_at_12(clients, pass_no) * (1 + 0.01 * pass_no)  # noqa: E731
    rows, rounds = refine_to_the_end(grid_rows(curve, QUICK_GRID, 3), settings, curve)
    added = [r for r in rows if r["added_for"]]
    assert len(added) <= budget
    assert len(added) == sum(map(len, rounds))
    if budget >= 3:  # one count's three passes fit: the peak comes first
        assert rounds[0][0].added_for == ADDED_FOR_PEAK


@pytest.mark.parametrize("profile", ["quick", "full"])
def test_a_profiles_refinement_adds_at_most_a_quarter_of_its_estimated_time(profile: str) -> None:
    plan = make_plan("clients-sweep", profile, server_cores=1)
    assert plan.refine is not None and plan.refinement_windows() > 0
    grid_s = setup_estimate_s(plan) + len(plan.windows()) * window_estimate_s(plan)
    assert grid_s < plan_estimate_s(plan) <= 1.25 * grid_s
    settings = refinement_of(plan)
    assert settings is not None and settings.workloads == ("mixed", "select-only", "tpcb-like")
    rows = [
        row(w, c, p, alternating(c, p))
        for p in range(1, plan.profile.passes + 1)
        for c in plan.client_counts
        for w in settings.workloads
    ]
    rows, _ = refine_to_the_end(rows, settings, alternating)
    assert 0 < sum(1 for r in rows if r["added_for"]) <= plan.refinement_windows()


def test_an_interrupted_refinement_resumes_without_repeating_or_losing_a_point() -> None:
    """Cut the measuring after every window of every round: recomputing from what was written measures the
    rest, and the run ends with the same windows as one never interrupted."""
    other: Curve = lambda clients, pass_no: alternating(clients * 4, pass_no)  # noqa: E731
    both = {"mixed": alternating, "tpcb-like": other}
    settings = refinement(budget=9, spread=0.15, workloads=("mixed", "tpcb-like"))
    grid = grid_rows(alternating, QUICK_GRID, 3, "mixed") + grid_rows(other, QUICK_GRID, 3, "tpcb-like")

    def curve_of(clients: int, pass_no: int, workload: str) -> float:
        return both[workload](clients, pass_no)

    def run(rows: list[dict[str, str]], stop_after: int | None) -> list[dict[str, str]]:
        rows, measured = list(rows), 0
        while extras := next_points(rows, settings):
            for extra in extras:
                if measured == stop_after:
                    return rows
                tps = curve_of(extra.clients, extra.pass_no, extra.workload)
                rows.append(row(extra.workload, extra.clients, extra.pass_no, tps, extra.added_for))
                measured += 1
        return rows

    def keys(rows: list[dict[str, str]]) -> list[tuple[str, ...]]:
        return [(r["workload"], r["clients"], r["pass_no"], r["added_for"]) for r in rows]

    whole = run(grid, None)
    added = len(whole) - len(grid)
    assert added > 0
    for cut in range(added):
        resumed = run(run(grid, cut), None)
        assert len(set(keys(resumed))) == len(resumed), f"cut after {cut}: a window repeated"
        assert sorted(keys(resumed)) == sorted(keys(whole)), f"cut after {cut}"


# The rows' added_for column, as validation reads it: three checks that must agree
# (tests/data/test_validate.py).
CHECKS = {
    "row shapes": validate._shaped_file_problems,
    "column-wise": validate._clean_file_problems,
    "row by row": lambda path, text, machine_id: list(validate._window_problems(path, text, machine_id)),
}


def refined_run(tmp_path: Path, write_run: RunWriter) -> Path:
    """A tiny run of three passes at 1, 2, 4 clients, a count added for the peak at 3 and two passes
    added for spread at 2."""
    grid = [{"clients": c, "pass_no": p} for p in (1, 2, 3) for c in (1, 2, 4)]
    peak = [{"clients": 3, "pass_no": p, "added_for": ADDED_FOR_PEAK} for p in (1, 2, 3)]
    spread = [{"clients": 2, "pass_no": p, "added_for": ADDED_FOR_SPREAD} for p in (4, 5)]
    rows = [{"workload": "mixed", "tps": 1000.0 + n, **r} for n, r in enumerate(grid + peak + spread)]
    return write_run(tmp_path / "results", "box", rows, profile="tiny", run_id="tiny-20260101T000000Z")


@pytest.mark.parametrize("check", CHECKS)
def test_a_file_with_added_points_and_passes_is_valid(
    tmp_path: Path, write_run: RunWriter, check: str
) -> None:
    path = refined_run(tmp_path, write_run)
    assert "added_for" in path.read_text().splitlines()[0].split(",")
    assert CHECKS[check](path, path.read_text(), "box") == []


@pytest.mark.parametrize("check", CHECKS)
def test_a_file_written_before_the_column_is_valid(tmp_path: Path, write_run: RunWriter, check: str) -> None:
    path = refined_run(tmp_path, write_run)
    with path.open(newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if not r.pop("added_for")]
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    assert "added_for" not in path.read_text()
    assert CHECKS[check](path, path.read_text(), "box") == []


def test_a_spread_pass_still_needs_the_grids_passes(tmp_path: Path, write_run: RunWriter) -> None:
    path = refined_run(tmp_path, write_run)
    text = path.read_text()
    # The grid's third pass at 4 clients (line 10) gone: the file is incomplete, spread passes or not.
    lines = text.splitlines(keepends=True)
    del lines[9]
    path.write_text("".join(lines))
    problems = list(validate._window_problems(path, path.read_text(), "box"))
    assert len(problems) == 1 and "at 4 clients lacks pass(es) 3" in problems[0], problems


def test_an_unknown_reason_is_refused(tmp_path: Path, write_run: RunWriter) -> None:
    path = refined_run(tmp_path, write_run)
    path.write_text(path.read_text().replace(f",{ADDED_FOR_PEAK},", ",because,", 1))
    problems = list(validate._window_problems(path, path.read_text(), "box"))
    assert any(":11: added_for: " in problem for problem in problems), problems


def test_a_run_whose_refinement_is_pending_is_resumed_and_a_finished_one_is_not(
    tmp_path: Path, write_run: RunWriter
) -> None:
    plan = make_plan("clients-sweep", "quick", server_cores=1)
    settings = refinement_of(plan)
    assert settings is not None

    def unfinished(results: ResultsFile) -> bool:
        return not refinement_done(results.rows, settings)

    grid = [
        {"workload": w.workload.id, "clients": w.clients, "pass_no": w.pass_no,
         "tps": peaked_at_12(w.clients, 1) + n, "spec_hash": plan.spec_hash, "server_cpu_budget": w.budget}
        for n, w in enumerate(plan.windows())
    ]  # fmt: skip
    path = write_run(tmp_path / "results", "box", grid, profile="quick")
    planned = len(plan.windows())
    assert find_resumable(path.parent, "quick", plan.spec_hash, planned) is None  # by its count, complete
    found = find_resumable(path.parent, "quick", plan.spec_hash, planned, unfinished)
    assert found is not None and found.path == path
    while extras := next_points(found.rows, settings):
        for extra in extras:
            found.append({**found.rows[0], "clients": extra.clients, "pass_no": extra.pass_no,
                          "workload": extra.workload, "added_for": extra.added_for})  # fmt: skip
    assert find_resumable(path.parent, "quick", plan.spec_hash, planned, unfinished) is None
