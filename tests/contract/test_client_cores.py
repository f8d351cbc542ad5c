"""pgbench's cores and threads per point (connlab.contract.client_cores), on 2-, 16- and 64-core machines."""

from __future__ import annotations

from pathlib import Path

import pytest

from connlab.contract.client_cores import (
    EXAMPLE_CLIENT_COUNTS,
    EXAMPLE_MACHINE_CORES,
    cores_left,
    examples,
    point_client_cores,
    point_jobs,
)
from connlab.contract.experiment import load_experiment, make_plan, window_options
from connlab.site.render.renderer import PageRenderer


def plan_points(name: str, profile: str, machine_cores: int) -> list[tuple[str, int, int, int]]:
    """(workload, clients, pgbench's cores, pgbench -j) for every window of an experiment's plan on a
    machine of `machine_cores` cores, as the harness gives them (connlab.lab.window)."""
    spec = load_experiment(name)
    plan = make_plan(name, profile, server_cores=spec.server.cores(machine_cores))
    left = cores_left(machine_cores, plan.server_cores)
    points = []
    for window in plan.windows():
        cores = point_client_cores(window.clients, left)
        options = window_options(plan, window.workload, window.clients, jobs=cores)
        jobs = min(options.jobs, window.clients)  # what pgbench is given (PgbenchOptions.flags)
        points.append((window.workload.id, window.clients, cores, jobs))
    return points


def test_a_two_core_machine_gives_pgbench_its_one_core_at_every_point() -> None:
    for name in ("pooler-churn", "clients-sweep", "pgbouncer-trade"):
        points = plan_points(name, "full", 2)
        assert {cores for _, _, cores, _ in points} == {1}, name
        # One thread on one core, as before, except where a workload names its threads.
        assert {jobs for _, _, _, jobs in points} == {1}, name


def test_a_sixteen_core_machine_gives_churn_and_crowds_every_core_the_server_leaves() -> None:
    points = plan_points("pooler-churn", "full", 16)
    assert cores_left(16, 8) == 8
    # 10 and 50 clients connecting per transaction: all 8 cores the server's 8 leave, 8 threads.
    assert {(clients, cores, jobs) for _, clients, cores, jobs in points} == {(10, 8, 8), (50, 8, 8)}


def test_a_sixty_four_core_machine_gives_a_core_per_client_up_to_all_it_has_left() -> None:
    points = plan_points("pooler-churn", "full", 64)
    assert cores_left(64, 32) == 32
    assert {(clients, cores, jobs) for _, clients, cores, jobs in points} == {(10, 10, 10), (50, 32, 32)}


@pytest.mark.parametrize("machine_cores", [2, 16, 64])
def test_never_more_threads_than_clients_nor_cores_than_the_server_leaves(machine_cores: int) -> None:
    left = cores_left(machine_cores, load_experiment("clients-sweep").server.cores(machine_cores))
    for _, clients, cores, jobs in plan_points("clients-sweep", "full", machine_cores):
        assert 1 <= cores <= left
        assert 1 <= jobs <= clients
        assert jobs == cores  # one thread per core, no workload of this sweep names its own


def test_one_client_gets_one_core_however_many_are_left() -> None:
    points = plan_points("clients-sweep", "full", 64)
    assert {(cores, jobs) for _, clients, cores, jobs in points if clients == 1} == {(1, 1)}


def test_a_workload_that_names_its_threads_keeps_them_on_its_points_cores() -> None:
    # client-bound's "two threads" variant: two threads on the one core of a 2-core machine.
    two = {(w, cores, jobs) for w, _, cores, jobs in plan_points("client-bound", "full", 2)}
    assert ("select-only-2-threads", 1, 2) in two
    assert point_jobs(clients=250, cores=32, workload_jobs=1) == 1
    assert point_jobs(clients=1, cores=1, workload_jobs=2) == 1  # never more threads than clients


def test_the_pooler_cores_of_its_own_come_off_what_pgbench_is_left() -> None:
    assert cores_left(16, 8, pooler_cores=2) == 6
    assert cores_left(16, 7.5) == 8  # a fractional budget still takes whole cores for its cpuset
    assert point_client_cores(clients=50, left=6) == 6


def test_the_methodology_examples_follow_the_rule() -> None:
    rows = examples()
    assert [row["machine_cores"] for row in rows] == list(EXAMPLE_MACHINE_CORES)
    by_size = {row["machine_cores"]: row for row in rows}
    assert by_size[2]["cores_left"] == 1
    assert set(by_size[2]["client_cores"].values()) == {1}
    assert by_size[64]["client_cores"] == {
        count: min(count, by_size[64]["cores_left"]) for count in EXAMPLE_CLIENT_COUNTS
    }


def test_the_methodology_page_states_the_rule_with_the_plans_own_figures(tmp_path: Path) -> None:
    renderer = PageRenderer(tmp_path / "data", tmp_path / "docs")
    page = renderer.render_deferred("methodology.md.j2", "methodology.md", "methodology")
    assert "**pgbench's cores at each point.**" in page
    for row in examples():
        cells = [row["machine_cores"], row["server_cores"], row["cores_left"], *row["client_cores"].values()]
        assert "| " + " | ".join(str(cell) for cell in cells) + " |" in page
    table_end = page.index("| " + str(examples()[-1]["machine_cores"]) + " |")
    # The table ends before the next paragraph: a blank line, or Markdown reads the sentence as a row.
    assert "|\n\nA point that stays client-bound" in page[table_end:]
