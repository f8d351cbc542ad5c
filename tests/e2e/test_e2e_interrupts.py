"""Ctrl-C as a terminal sends it: SIGINT to the whole foreground process group of a running `connlab run`
(and of `make run` and `make run-all`), at each moment of a run: initdb, pgbench -i, a measurement window,
between windows.

Each time: exit status 130 within seconds, nothing left running, no partial row, no temporary file; then
one rerun completes the plan with every window exactly once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from support.lab_watch import (
    REPO_ROOT,
    assert_complete,
    in_a_window,
    leftovers,
    rows_on_disk,
    run_to_end,
    running_program,
    start_run,
    stray_temporary_files,
    wait_for,
)

if TYPE_CHECKING:
    from support.host import CgroupGuard

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("require_root", "require_postgres")]

EXPERIMENT = "clients-sweep"
# What "within a few seconds" means: stopping pgbench, the server and the cgroups takes about one.
INTERRUPT_BOUND_S = 10

Moment = Callable[[subprocess.Popen[str], dict[str, str]], Callable[[], bool]]


def after_a_new_row(process: subprocess.Popen[str], env: dict[str, str]) -> Callable[[], bool]:
    """A window's row was just written: the run is between that window and the next."""
    written = len(rows_on_disk(env, EXPERIMENT))
    return lambda: len(rows_on_disk(env, EXPERIMENT)) > written


MOMENTS: list[tuple[str, Moment]] = [
    ("initdb", lambda process, _env: running_program(process, "initdb")),
    ("pgbench -i", lambda process, _env: running_program(process, "pgbench", "-i")),
    ("a window", lambda process, _env: in_a_window(process)),
    ("between windows", after_a_new_row),
]


def as_at_a_terminal() -> None:
    """SIGINT as an interactive shell leaves it for a foreground job: default. A suite started in the
    background of a non-interactive shell inherits it ignored, and make would then not stop on Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_make(arguments: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[str]:
    """`make <arguments> PROFILE=tiny` as the foreground job of a terminal: a session (process group) of
    its own, SIGINT at its default, output to `log`."""
    with log.open("w") as handle:
        return subprocess.Popen(
            ["make", "--no-print-directory", *arguments, "PROFILE=tiny"],
            cwd=REPO_ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT, text=True,
            start_new_session=True, preexec_fn=as_at_a_terminal,
        )  # fmt: skip


def interrupt(process: subprocess.Popen[str]) -> tuple[int, float]:
    """SIGINT to the process group, as Ctrl-C does; the exit status and how long the run took to go."""
    os.killpg(process.pid, signal.SIGINT)
    started = time.monotonic()
    try:
        status = process.wait(timeout=INTERRUPT_BOUND_S * 3)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        pytest.fail(f"still running {INTERRUPT_BOUND_S * 3} s after SIGINT")
    return status, time.monotonic() - started


def test_ctrl_c_at_every_moment_then_the_rerun_completes(
    connlab_env: dict[str, str], shared_tmp: Path, cgroup_guard: CgroupGuard
) -> None:
    log = shared_tmp / "run.log"
    for moment, condition in MOMENTS:
        rows_before = rows_on_disk(connlab_env, EXPERIMENT)
        process = start_run(connlab_env, EXPERIMENT, log)
        wait_for(process, condition(process, connlab_env), moment, log)
        status, took_s = interrupt(process)
        tail = log.read_text()[-1500:]
        assert status == 130, (moment, tail)
        assert took_s < INTERRUPT_BOUND_S, (moment, took_s)
        assert "interrupted" in tail.splitlines()[-1], (moment, tail)
        assert leftovers(connlab_env) == [], moment
        assert cgroup_guard.added() == set(), moment
        assert stray_temporary_files(connlab_env) == [], moment
        rows_after = rows_on_disk(connlab_env, EXPERIMENT)  # whole rows only
        assert rows_after[: len(rows_before)] == rows_before, f"{moment}: rows written before changed"

    result = run_to_end(connlab_env, EXPERIMENT)
    assert result.returncode == 0, result.stderr
    rows = assert_complete(connlab_env, EXPERIMENT)
    assert all(row["ok"] == "true" for row in rows)
    assert leftovers(connlab_env) == []


def test_ctrl_c_to_make_run_stops_make_and_the_run(
    connlab_env: dict[str, str], shared_tmp: Path, cgroup_guard: CgroupGuard
) -> None:
    """The whole foreground group of `make run`: make, connlab. make passes the signal's status on."""
    log = shared_tmp / "make.log"
    process = start_make(["run", f"EXP={EXPERIMENT}"], {**connlab_env, "MACHINE": "e2e-make"}, log)
    wait_for(process, in_a_window(process), "a window", log)
    status, took_s = interrupt(process)
    # make re-raises the signal on itself after its recipe ended: a shell shows 130.
    assert status == -signal.SIGINT, log.read_text()
    assert took_s < INTERRUPT_BOUND_S
    text = log.read_text()
    assert "interrupted: the server was stopped" in text
    assert "Error 130" in text  # connlab's own status, as make reports it
    assert leftovers(connlab_env) == []
    assert cgroup_guard.added() == set()


def test_ctrl_c_to_make_run_all_stops_every_experiment_after_it(
    connlab_env: dict[str, str], shared_tmp: Path, cgroup_guard: CgroupGuard
) -> None:
    """`make all` measures through run-all: Ctrl-C in the first experiment's window ends the whole run, and
    the experiments after it never start (a rerun resumes the first and then runs them)."""
    log = shared_tmp / "make-all.log"
    env = {**connlab_env, "MACHINE": "e2e-make-all"}
    process = start_make(["run-all", f"EXPERIMENTS={EXPERIMENT} connect-cost"], env, log)
    wait_for(process, in_a_window(process), "a window", log)
    status, took_s = interrupt(process)
    assert status == -signal.SIGINT, log.read_text()
    assert took_s < INTERRUPT_BOUND_S
    text = log.read_text()
    assert f"== {EXPERIMENT} (experiment 1 of 2" in text
    assert "interrupted: the server was stopped" in text and "== connect-cost" not in text
    assert not (Path(env["CONNLAB_RESULTS_DIR"]) / "e2e-make-all" / "connect-cost").exists()
    assert leftovers(connlab_env) == []
    assert cgroup_guard.added() == set()
