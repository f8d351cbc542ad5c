"""Points where the answer is, end to end (connlab.lab.refine): a tiny run that refines
(tests/support/refining_run.py) writes refinement rows with `added_for` set and says so in its progress;
Ctrl-C in the middle of its refinement, then the same command, ends with every refinement window once and none
missing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from connlab.contract.columns import ADDED_FOR_PEAK, ADDED_FOR_SPREAD
from connlab.data.validate import validate_csv
from connlab.lab.refine import next_points, refinement_of
from support.lab_watch import (
    MACHINE,
    REPO_ROOT,
    leftovers,
    results_dir,
    rows_on_disk,
    stray_temporary_files,
    wait_for,
)
from support.paths import TESTS_DIR
from support.refining_run import make_refining_plan

if TYPE_CHECKING:
    from support.host import CgroupGuard

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("require_root", "require_postgres")]

EXPERIMENT = "clients-sweep"
DRIVER = TESTS_DIR / "support" / "refining_run.py"
INTERRUPT_BOUND_S = 10
RUN_TIMEOUT_S = 600


def command() -> list[str]:
    return [sys.executable, str(DRIVER), "run", EXPERIMENT, "--profile", "tiny", "--machine", MACHINE]


def added(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    return [row for row in rows if row["added_for"]]


def test_a_refining_run_resumes_after_ctrl_c_without_repeating_or_losing_a_point(
    connlab_env: dict[str, str], shared_tmp: Path, cgroup_guard: CgroupGuard
) -> None:
    env = connlab_env
    log = shared_tmp / "run.log"
    with log.open("w") as handle:
        process = subprocess.Popen(
            command(), cwd=REPO_ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,
        )  # fmt: skip
    wait_for(process, lambda: bool(added(rows_on_disk(env, EXPERIMENT))), "a refinement row", log)
    os.killpg(process.pid, signal.SIGINT)
    started = time.monotonic()
    status = process.wait(timeout=INTERRUPT_BOUND_S * 3)
    assert status == 130, log.read_text()[-1500:]
    assert time.monotonic() - started < INTERRUPT_BOUND_S
    assert leftovers(env) == [] and cgroup_guard.added() == set()
    assert stray_temporary_files(env) == []
    before = rows_on_disk(env, EXPERIMENT)
    assert added(before), "interrupted before refinement began"

    result = subprocess.run(
        command(), cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "resuming" in result.stderr
    rows = rows_on_disk(env, EXPERIMENT)
    assert rows[: len(before)] == before, "rows written before the interruption changed"
    keys = [(row["pass_no"], row["workload"], row["clients"], row["server_cpu_budget"]) for row in rows]
    assert len(keys) == len(set(keys)), "a window was measured twice"
    numbers = [int(row["window_no"]) for row in rows]
    assert len(numbers) == len(set(numbers))

    plan = make_refining_plan(EXPERIMENT, "tiny", server_cores=1)
    refinement = refinement_of(plan)
    assert refinement is not None
    assert next_points(rows, refinement) == [], "a refinement window is missing"
    extras = added(rows)
    assert {row["added_for"] for row in extras} <= {ADDED_FOR_PEAK, ADDED_FOR_SPREAD}
    assert len(rows) == len(plan.windows()) + len(extras)
    assert len(extras) <= plan.refinement_windows()
    for row in extras:
        if row["added_for"] == ADDED_FOR_SPREAD:
            assert int(row["pass_no"]) > plan.profile.passes
        else:
            assert int(row["clients"]) not in plan.client_counts
    assert "refining: " in log.read_text() + result.stderr
    [path] = results_dir(env, EXPERIMENT).glob("*.csv")
    assert list(validate_csv(path, MACHINE)) == []
    assert leftovers(env) == []
