"""Faults injected into a running `connlab run` on a throwaway cluster: the postmaster killed, a backend
killed, the server frozen, PgBouncer killed (all mid-window), the results folder full, the port taken
before a resume.

Expected each time: the window is recorded as failed with a one-line reason, or the run stops with one
line (`error: window N (...): why; ... rerun the same command to resume`); every row already written
is intact; nothing is left running; a rerun resumes and completes the plan.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import psutil
import pytest

from connlab.contract.experiment import make_plan
from connlab.lab.sweep import pgbench_deadline_s
from support.lab_watch import (
    assert_complete,
    in_a_window,
    lab_processes,
    leftovers,
    postmaster,
    results_dir,
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

SWEEP = "clients-sweep"
ONE_ERROR_LINE = re.compile(
    r"^error: window \d+ \([a-z0-9-]+, \d+ clients, pass \d\): .+; rerun the same command"
)


def finished(process: subprocess.Popen[str], timeout_s: float) -> int:
    try:
        return process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        pytest.fail(f"the run did not end within {timeout_s} s of the fault")


def last_line(log: Path) -> str:
    return log.read_text().strip().splitlines()[-1]


def assert_stopped_cleanly(
    env: dict[str, str], cgroup_guard: CgroupGuard, rows_before: list[dict[str, str]]
) -> None:
    assert leftovers(env) == []
    assert cgroup_guard.added() == set()
    assert stray_temporary_files(env) == []
    assert rows_on_disk(env, SWEEP)[: len(rows_before)] == rows_before


def resume_completes(env: dict[str, str], experiment: str = SWEEP) -> list[dict[str, str]]:
    result = run_to_end(env, experiment)
    assert result.returncode == 0, result.stderr
    assert "resuming" in result.stderr
    assert leftovers(env) == []
    return assert_complete(env, experiment)


@pytest.fixture
def log(shared_tmp: Path) -> Path:
    return shared_tmp / "run.log"


def wait_for_rows(process: subprocess.Popen[str], env: dict[str, str], count: int, log: Path) -> None:
    wait_for(process, lambda: len(rows_on_disk(env, SWEEP)) >= count, f"{count} rows", log)


def test_a_killed_postmaster_stops_the_run_in_one_line(
    connlab_env: dict[str, str], log: Path, cgroup_guard: CgroupGuard
) -> None:
    process = start_run(connlab_env, SWEEP, log)
    wait_for_rows(process, connlab_env, 2, log)
    rows_before = rows_on_disk(connlab_env, SWEEP)
    wait_for(process, in_a_window(process), "a window", log)
    postmaster(connlab_env).kill()
    assert finished(process, 60) == 2, log.read_text()
    assert ONE_ERROR_LINE.match(last_line(log)), last_line(log)
    assert "the server exited" in last_line(log)
    assert_stopped_cleanly(connlab_env, cgroup_guard, rows_before)
    resume_completes(connlab_env)


def test_a_killed_backend_fails_its_window_and_the_run_goes_on(
    connlab_env: dict[str, str], log: Path, cgroup_guard: CgroupGuard
) -> None:
    process = start_run(connlab_env, SWEEP, log)
    wait_for_rows(process, connlab_env, 1, log)

    def bench_backends() -> list[psutil.Process]:
        backends = []
        for backend in lab_processes(connlab_env, "postgres"):
            try:
                if " bench " in " ".join(backend.cmdline()) + " ":
                    backends.append(backend)
            except psutil.NoSuchProcess:  # a backend may end between the listing and this read
                continue
        return backends

    first_seen: dict[int, float] = {}

    def window_young() -> bool:
        """A window's pgbench was first seen under half a window ago (polls are 10 ms apart): a backend
        killed now dies mid-window. Timed from its first sighting, not its start time, which psutil
        derives from a boot time that a virtual machine may report loosely."""
        now = time.monotonic()
        return any(now - first_seen.setdefault(pid, now) < 0.5 for pid in window_pgbench_pids(process))

    killed = False
    while not killed:
        wait_for(
            process, lambda: window_young() and bool(bench_backends()), "a backend of a young window", log
        )
        for backend in bench_backends():
            with contextlib.suppress(psutil.Error):
                backend.kill()
                killed = True
                break
    # The server restarts every backend after one crashed; the run waits for it and carries on.
    assert finished(process, 300) == 0, log.read_text()
    rows = assert_complete(connlab_env, SWEEP)
    failed = [row for row in rows if row["ok"] == "false"]
    assert failed, "the window with the killed backend was recorded as ok"
    assert all(row["error"] and "\n" not in row["error"] for row in failed)
    assert leftovers(connlab_env) == []
    assert cgroup_guard.added() == set()


def window_pgbench_pids(process: subprocess.Popen[str]) -> list[int]:
    """pgbench processes of measurement windows (with -T) under the run."""
    pids = []
    with contextlib.suppress(psutil.Error):
        for child in psutil.Process(process.pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                command = child.cmdline()
                if command and Path(command[0]).name == "pgbench" and "-T" in command:
                    pids.append(child.pid)
    return pids


def test_a_frozen_server_cannot_hang_the_run(
    connlab_env: dict[str, str], log: Path, cgroup_guard: CgroupGuard
) -> None:
    process = start_run(connlab_env, SWEEP, log)
    wait_for_rows(process, connlab_env, 1, log)
    rows_before = rows_on_disk(connlab_env, SWEEP)
    wait_for(process, in_a_window(process), "a window", log)
    server = postmaster(connlab_env)
    for member in [server, *server.children()]:
        with contextlib.suppress(psutil.Error):
            member.suspend()
    started = time.monotonic()
    # pgbench hangs on the frozen backends until its deadline; then the run stops and says why.
    assert finished(process, pgbench_deadline_s(1) + 60) == 2, log.read_text()
    assert time.monotonic() - started < pgbench_deadline_s(1) + 30
    assert ONE_ERROR_LINE.match(last_line(log)), last_line(log)
    assert "stopped (SIGSTOP)" in last_line(log)
    assert_stopped_cleanly(connlab_env, cgroup_guard, rows_before)
    resume_completes(connlab_env)


def pooler_port(env: dict[str, str]) -> str | None:
    for config in (Path(env["CONNLAB_BUILD_DIR"]) / "lab").glob("*/pgbouncer/pgbouncer.ini"):
        with contextlib.suppress(OSError):
            match = re.search(r"^listen_port = (\d+)$", config.read_text(), re.M)
            if match:
                return match.group(1)
    return None


def test_a_killed_pooler_stops_the_run_in_one_line(
    connlab_env: dict[str, str], log: Path, cgroup_guard: CgroupGuard
) -> None:
    process = start_run(connlab_env, "pgbouncer", log)
    wait_for(process, lambda: pooler_port(connlab_env) is not None, "PgBouncer's config", log)
    port = pooler_port(connlab_env)
    assert port is not None
    wait_for(process, running_program(process, "pgbench", "-T", "-p", port), "a pooled window", log)
    rows_before = rows_on_disk(connlab_env, "pgbouncer")
    for pooler in lab_processes(connlab_env, "pgbouncer"):
        pooler.kill()
    assert finished(process, 60) == 2, log.read_text()
    assert ONE_ERROR_LINE.match(last_line(log)), last_line(log)
    assert "PgBouncer exited" in last_line(log)
    assert leftovers(connlab_env) == []
    assert cgroup_guard.added() == set()
    assert rows_on_disk(connlab_env, "pgbouncer")[: len(rows_before)] == rows_before
    resume_completes(connlab_env, "pgbouncer")


@pytest.fixture
def tiny_results_folder(connlab_env: dict[str, str]) -> Iterator[Path]:
    """The results folder on a 16 KiB tmpfs: room for machine.yaml and a run file of about ten rows
    (each append writes the whole file anew beside the old one before the rename)."""
    folder = Path(connlab_env["CONNLAB_RESULTS_DIR"])
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(folder)], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_full_results_folder_keeps_every_row_written(
    connlab_env: dict[str, str], log: Path, cgroup_guard: CgroupGuard, tiny_results_folder: Path
) -> None:
    process = start_run(connlab_env, SWEEP, log)
    assert finished(process, 300) == 2, log.read_text()
    message = last_line(log)
    assert message.startswith("error: cannot write ") and "No space left on device" in message, message
    assert "is unchanged" in message
    rows = rows_on_disk(connlab_env, SWEEP)
    assert 0 < len(rows) < len(make_plan(SWEEP, "tiny").windows()), "the disk filled at the wrong moment"
    assert all(row["ok"] == "true" for row in rows)
    assert_stopped_cleanly(connlab_env, cgroup_guard, rows)
    subprocess.run(["mount", "-o", "remount,size=1m", str(tiny_results_folder)], check=True)
    resume_completes(connlab_env)


def a_free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_port_taken_before_the_resume_is_one_line(
    connlab_env: dict[str, str], log: Path, cgroup_guard: CgroupGuard
) -> None:
    env = {**connlab_env, "CONNLAB_PORT": str(a_free_port())}
    process = start_run(env, SWEEP, log)
    wait_for_rows(process, env, 2, log)
    os.killpg(process.pid, signal.SIGINT)
    assert finished(process, 30) == 130
    rows_before = rows_on_disk(env, SWEEP)
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", int(env["CONNLAB_PORT"])))
        squatter.listen()
        result = run_to_end(env, SWEEP)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("error: port ") and "in use" in lines[-1], result.stderr
    assert_stopped_cleanly(env, cgroup_guard, rows_before)
    assert results_dir(env, SWEEP).exists()
    resume_completes(env)
