"""Helpers for end-to-end tests that act on a running `connlab run`: find the moment (initdb, pgbench -i,
a window, between windows), find its server and pooler, and check that nothing of it is left.

Every run uses temporary results and build folders (the connlab_env fixture), so "what is left" is any
process whose command line or working directory lies under that build folder.
"""

from __future__ import annotations

import contextlib
import csv
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil

from connlab.contract.columns import COLUMN_NAMES
from connlab.contract.experiment import make_plan
from support.paths import REPO_ROOT

MACHINE = "e2e-faults"


def start_run(
    env: dict[str, str], experiment: str, log: Path, profile: str = "tiny"
) -> subprocess.Popen[str]:
    """`connlab run` in a process group of its own, as a terminal's foreground job would be."""
    handle = log.open("a")
    try:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "connlab.cli",
                "run",
                experiment,
                "--profile",
                profile,
                "--machine",
                MACHINE,
            ],
            cwd=REPO_ROOT,
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
    finally:
        handle.close()  # the child holds its own copy


def run_to_end(
    env: dict[str, str], experiment: str, timeout_s: float = 600
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "connlab.cli", "run", experiment, "--profile", "tiny", "--machine", MACHINE],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


def descendant_commands(pid: int) -> list[list[str]]:
    """Command lines of every live descendant (children in sessions of their own included)."""
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []
    commands = []
    for child in children:
        with contextlib.suppress(psutil.Error):
            commands.append(child.cmdline())
    return commands


def wait_for(
    process: subprocess.Popen[str],
    condition: Callable[[], bool],
    what: str,
    log: Path,
    timeout_s: float = 300,
) -> None:
    """Poll every 10 ms until condition holds; fail if the run ends or time runs out first."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert process.poll() is None, f"the run ended before {what}: {log.read_text()[-2000:]}"
        assert time.monotonic() < deadline, f"no {what} within {timeout_s} s"
        time.sleep(0.01)


def running_program(process: subprocess.Popen[str], program: str, *flags: str) -> Callable[[], bool]:
    """A descendant runs `program` (by the name of its executable) with all of these flags."""

    def condition() -> bool:
        return any(
            command and Path(command[0]).name == program and all(flag in command for flag in flags)
            for command in descendant_commands(process.pid)
        )

    return condition


def in_a_window(process: subprocess.Popen[str]) -> Callable[[], bool]:
    """pgbench of a measurement window (it has -T; pgbench -i has not)."""
    return running_program(process, "pgbench", "-T")


def results_dir(env: dict[str, str], experiment: str) -> Path:
    return Path(env["CONNLAB_RESULTS_DIR"]) / MACHINE / experiment


def rows_on_disk(env: dict[str, str], experiment: str) -> list[dict[str, str]]:
    """Every row of the run's CSV, after checking each is whole (all columns, in order)."""
    files = sorted(results_dir(env, experiment).glob("*.csv"))
    assert len(files) <= 1, files
    if not files:
        return []
    with files[0].open(newline="") as handle:
        raw = list(csv.reader(handle))
    assert raw[0] == list(COLUMN_NAMES)
    assert all(len(row) == len(COLUMN_NAMES) for row in raw[1:]), "a partial row"
    return [dict(zip(raw[0], row, strict=True)) for row in raw[1:]]


def stray_temporary_files(env: dict[str, str]) -> list[Path]:
    return sorted(Path(env["CONNLAB_RESULTS_DIR"]).rglob("*.tmp"))


def leftovers(env: dict[str, str]) -> list[str]:
    """Processes of this run still alive: anything started from, or working in, its build folder."""
    build = env["CONNLAB_BUILD_DIR"]
    found = []
    for process in psutil.process_iter(["pid", "cmdline", "cwd"]):
        if process.info["pid"] == os.getpid():
            continue
        cmdline = " ".join(process.info["cmdline"] or [])
        if build in cmdline or (process.info["cwd"] or "").startswith(build):
            found.append(f"{process.info['pid']}: {cmdline}")
    return found


def lab_processes(env: dict[str, str], name: str) -> list[psutil.Process]:
    """Live processes of this run's lab named `name` (postgres, pgbouncer): by working directory or
    command line under the build folder."""
    build = env["CONNLAB_BUILD_DIR"]
    found = []
    for process in psutil.process_iter(["name", "cmdline", "cwd"]):
        if process.info["name"] != name:
            continue
        cmdline = " ".join(process.info["cmdline"] or [])
        if build in cmdline or (process.info["cwd"] or "").startswith(build):
            found.append(process)
    return found


def postmaster(env: dict[str, str]) -> psutil.Process:
    [pidfile] = list((Path(env["CONNLAB_BUILD_DIR"]) / "lab").glob("*/data/postmaster.pid"))
    return psutil.Process(int(pidfile.read_text().splitlines()[0]))


def assert_complete(env: dict[str, str], experiment: str) -> list[dict[str, str]]:
    """The run finished: every planned window once, in one file."""
    rows = rows_on_disk(env, experiment)
    planned = make_plan(experiment, "tiny").windows()
    keys = [(row["pass_no"], row["workload"], row["clients"], row["server_cpu_budget"]) for row in rows]
    assert len(keys) == len(set(keys)), "a window was measured twice"
    assert len(rows) == len(planned)
    return rows
