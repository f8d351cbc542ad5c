"""connlab.interrupts: one KeyboardInterrupt per run, and children killed with their whole group."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from connlab import interrupts


@pytest.fixture
def handlers() -> Iterator[None]:
    saved = {signum: signal.getsignal(signum) for signum in interrupts.INTERRUPT_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
        interrupts._interrupted = False


@pytest.mark.usefixtures("handlers")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_the_first_signal_interrupts_and_later_ones_cannot(signum: signal.Signals) -> None:
    # A background job of a non-interactive shell starts with SIGINT ignored; the handler must win.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    interrupts.install_interrupt_handlers()
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signum)
        time.sleep(1)  # the handler runs between bytecodes; never reached
    assert interrupts.interrupted()
    # The clean-up that follows is not cut short by a second Ctrl-C or a SIGTERM.
    for again in interrupts.INTERRUPT_SIGNALS:
        os.kill(os.getpid(), again)
    time.sleep(0.05)


@pytest.mark.process
def test_a_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    """A wrapper (like runuser) and the child it started both go, not the wrapper alone."""
    pid_file = tmp_path / "child.pid"
    with pytest.raises(subprocess.TimeoutExpired):
        interrupts.run_in_group(["sh", "-c", f"sleep 60 & echo $! > {pid_file}; wait"], timeout_s=0.5)
    child = int(pid_file.read_text())

    def gone() -> bool:
        try:
            return psutil.Process(child).status() == psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return True

    # SIGKILL is delivered at once but acted on when the child next runs: on a busy machine, a moment later.
    deadline = time.monotonic() + 5
    while not gone() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone()


@pytest.mark.process
def test_an_interrupt_kills_the_group_before_it_propagates() -> None:
    process = subprocess.Popen(["sh", "-c", "sleep 60 & wait"], start_new_session=True)
    with pytest.raises(KeyboardInterrupt), interrupts.group_guard(process):
        raise KeyboardInterrupt
    assert process.poll() is not None
    # Nothing of the group is left once its killed members are reaped (by init, asynchronously).
    deadline = time.monotonic() + 5
    while group_alive(process.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not group_alive(process.pid)


def group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs (a killed member awaiting its reaper does not)."""
    for member in psutil.process_iter(["pid"]):
        try:
            if os.getpgid(member.pid) == pgid and member.status() != psutil.STATUS_ZOMBIE:
                return True
        except (ProcessLookupError, psutil.Error):
            continue
    return False


@pytest.mark.process
def test_a_finished_command_is_returned_like_subprocess_run() -> None:
    result = interrupts.run_in_group(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout_s=10)
    assert (result.returncode, result.stdout, result.stderr) == (3, "out\n", "err\n")


# A command with a pool of workers, as the stages run one: a task, then (PHASE) a Ctrl-C while the workers
# are still starting, busy in a task, or done and waiting to be told to stop.
POOL_COMMAND = """
import sys, time
from connlab.cli import one_line_errors
from connlab.interrupts import WorkerPool

def main():
    with WorkerPool(2) as pool:
        if sys.argv[1] == "starting":
            pool.submit(time.sleep, 30)
            time.sleep(30)
        elif sys.argv[1] == "busy":
            list(pool.map(time.sleep, [30, 30]))
        else:
            list(pool.map(abs, [1, 2]))
            print("idle", flush=True)
            time.sleep(30)

one_line_errors(main)()
"""


@pytest.mark.process
@pytest.mark.parametrize("phase", ["starting", "busy", "idle"])
def test_ctrl_c_stops_a_worker_pool_with_one_line(phase: str) -> None:
    """SIGINT to the whole process group, as a terminal sends it, wherever the workers are: one line, the
    interrupted exit status, no traceback from a worker, and no worker left running."""
    command = subprocess.Popen(
        [sys.executable, "-c", POOL_COMMAND, phase],
        start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    parent = psutil.Process(command.pid)
    deadline = time.monotonic() + 60
    while len(parent.children()) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    workers = parent.children(recursive=True)
    assert len(workers) >= 2, "the workers did not start"
    if phase == "busy":
        time.sleep(3)  # imported and in their tasks
    elif phase == "idle":
        assert command.stdout is not None and command.stdout.readline() == "idle\n"
    os.killpg(command.pid, signal.SIGINT)
    output, _ = command.communicate(timeout=60)
    assert command.returncode == interrupts.INTERRUPTED_EXIT_STATUS, output
    assert "Traceback" not in output, output
    assert output.strip().splitlines()[-1] == "interrupted; rerun the same command to finish", output
    _, alive = psutil.wait_procs(workers, timeout=10)
    assert alive == [], "a worker was left running"


# A build stage running DuckDB statements one after the other, as the aggregation does: DuckDB notices the
# signal itself, stops the statement and raises its own error (RuntimeError "Query interrupted"; a stage
# may wrap it in LabError) in place of KeyboardInterrupt.
DUCKDB_COMMAND = """
import sys
import duckdb
from connlab.cli import one_line_errors
from connlab.errors import LabError

def aggregate():
    con = duckdb.connect()
    print("querying", flush=True)
    for _ in range(2000):
        try:
            con.execute("SELECT sum(a.range * 2) FROM range(30000000) a").fetchall()
        except Exception as error:
            if sys.argv[1] == "wrapped":
                raise LabError(f"query: {error}") from error
            raise

one_line_errors(aggregate)()
"""


@pytest.mark.process
@pytest.mark.parametrize("raised", ["as is", "wrapped"])
def test_ctrl_c_during_a_duckdb_statement_is_an_interrupt(raised: str) -> None:
    """SIGINT to the process group while the main thread runs DuckDB statements: one line and the
    interrupted exit status, not DuckDB's error with a traceback or an `error:` line."""
    command = subprocess.Popen(
        [sys.executable, "-c", DUCKDB_COMMAND, raised],
        start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    assert command.stdout is not None and command.stdout.readline() == "querying\n"
    time.sleep(0.5)
    os.killpg(command.pid, signal.SIGINT)
    output, _ = command.communicate(timeout=60)
    assert command.returncode == interrupts.INTERRUPTED_EXIT_STATUS, output
    assert "Traceback" not in output and "error:" not in output, output
    assert output.strip().splitlines()[-1] == "interrupted; rerun the same command to finish", output


HOLD_COMMAND = """
import os, signal, time
from connlab.cli import one_line_errors
from connlab.interrupts import hold_interrupts

def stage():
    release = hold_interrupts()
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.3)
    print("held", flush=True)
    release()
    print("not reached", flush=True)

one_line_errors(stage)()
"""


@pytest.mark.process
def test_a_held_interrupt_is_raised_where_it_is_released() -> None:
    """A Ctrl-C that comes while interrupts are held (a child started and not yet under guard) does not
    cut that step short: it is raised when they are released, as the interrupt it was."""
    done = subprocess.run(
        [sys.executable, "-c", HOLD_COMMAND], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == interrupts.INTERRUPTED_EXIT_STATUS, done.stderr
    assert done.stdout == "held\n"
    assert done.stderr.strip().splitlines() == ["interrupted; rerun the same command to finish"]


# A signal handled inside a finalizer: Python prints its KeyboardInterrupt as ignored and drops it, as it does
# in the at-fork hook logging runs while a child is started (where a sweep once ran on to its end).
DROPPED_COMMAND = """
import os, signal
from connlab.interrupts import install_interrupt_handlers, raise_if_interrupted
install_interrupt_handlers()
class Finalized:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGTERM)
        sum(range(1000))  # the handler runs here, between two bytecodes
Finalized()
print("went on", flush=True)
raise_if_interrupted()
print("not stopped", flush=True)
"""


@pytest.mark.process
def test_an_interrupt_dropped_where_python_ignores_exceptions_is_raised_again() -> None:
    done = subprocess.run(
        [sys.executable, "-c", DROPPED_COMMAND], capture_output=True, text=True, timeout=60, check=False
    )
    assert "Exception ignored" in done.stderr, done.stderr
    assert done.stdout == "went on\n", (done.stdout, done.stderr)
    assert done.stderr.rstrip().endswith("KeyboardInterrupt: an interrupt signal came earlier"), done.stderr


def test_without_a_signal_nothing_is_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(interrupts, "_interrupted", False)
    interrupts.raise_if_interrupted()
    monkeypatch.setattr(interrupts, "_interrupted", True)
    with pytest.raises(KeyboardInterrupt):
        interrupts.raise_if_interrupted()


# A Ctrl-C that lands in code run by exec() of a string (dataclasses and typing build methods that way, so
# any import may be there) and is handled after: run with `python -m`, CPython then ends the process by
# SIGINT unless told otherwise (connlab.interrupts.exit_command).
EXEC_MODULE = """
import os, signal
from connlab.interrupts import exit_command, install_interrupt_handlers

install_interrupt_handlers()
try:
    exec("os.kill(os.getpid(), signal.SIGINT)\\nfor _ in range(10**9): pass")
except KeyboardInterrupt:
    print("handled", flush=True)
exit_command(0)
"""


@pytest.mark.process
def test_an_interrupt_handled_after_an_exec_exits_130_under_python_m(tmp_path: Path) -> None:
    (tmp_path / "interrupted_in_exec.py").write_text(EXEC_MODULE)
    done = subprocess.run(
        [sys.executable, "-m", "interrupted_in_exec"], capture_output=True, text=True, timeout=60,
        check=False, cwd=tmp_path, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    assert done.stdout == "handled\n", done.stderr
    assert done.returncode == interrupts.INTERRUPTED_EXIT_STATUS, done.stderr


# What the exit leaves in place: Python's exit puts the default action back on every signal it handles, so
# a signal during the modules' teardown would end the process by that signal.
EXIT_COMMAND = """
import atexit, signal
from connlab.interrupts import INTERRUPT_SIGNALS, exit_command, install_interrupt_handlers

install_interrupt_handlers()
atexit.register(lambda: print(*(signal.getsignal(s) == signal.SIG_IGN for s in INTERRUPT_SIGNALS)))
exit_command(3)
"""


@pytest.mark.process
def test_from_exit_command_on_a_signal_changes_nothing() -> None:
    done = subprocess.run(
        [sys.executable, "-c", EXIT_COMMAND], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout) == (3, "True True\n"), done.stderr


def _blocked_signals(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigBlk:"):
            return int(line.split()[1], 16)
    return 0


@pytest.mark.process
def test_ctrl_c_while_the_command_line_imports_waits_for_its_handlers() -> None:
    """The `connlab` command's entry (connlab.__main__) blocks SIGINT before it imports anything: SIGINT to
    the process group during the imports is handled once the handlers are in place, with status 130 and no
    traceback."""
    command = subprocess.Popen(
        [sys.executable, "-m", "connlab", "experiments"],
        start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    sigint = 1 << (signal.SIGINT - 1)
    deadline = time.monotonic() + 30
    while not _blocked_signals(command.pid) & sigint:
        assert command.poll() is None and time.monotonic() < deadline, "the entry never blocked SIGINT"
        time.sleep(0.001)
    os.killpg(command.pid, signal.SIGINT)
    stdout, stderr = command.communicate(timeout=60)
    assert command.returncode == interrupts.INTERRUPTED_EXIT_STATUS, stderr
    assert "Traceback" not in stderr and stdout == "", (stdout, stderr)
    assert stderr.strip() == "interrupted before the command began; nothing was done", stderr


# The child signals its parent between the fork and the exec, while Popen waits for the exec: a Ctrl-C
# landing there, as it may on a loaded machine.
START_COMMAND = """
import os, signal, subprocess, sys
from connlab.interrupts import install_interrupt_handlers, started_in_group

install_interrupt_handlers()
parent = os.getpid()
try:
    with started_in_group(
        ["sleep", sys.argv[1]], preexec_fn=lambda: os.kill(parent, signal.SIGINT), stdout=subprocess.DEVNULL
    ) as child:
        child.wait()
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


@pytest.mark.process
def test_ctrl_c_while_a_child_starts_is_raised_under_its_guard() -> None:
    """The interrupt is not lost and does not cut Popen short, which would leave the child running: it is
    raised once the child is under its guard, which kills the child's group."""
    marker = f"600.{os.getpid()}"  # seconds, and this test's own
    done = subprocess.run(
        [sys.executable, "-c", START_COMMAND, marker], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stdout == "interrupted\n", (done.stdout, done.stderr)
    left = [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == ["sleep", marker]]
    _, alive = psutil.wait_procs(left, timeout=10)
    for process in alive:  # this test's own, left by the failure it reports
        process.kill()
    assert alive == [], "the child was left running"
