"""connlab.interrupts: one KeyboardInterrupt per run, and children killed with their whole group."""

from __future__ import annotations

import os
import signal
import subprocess
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


def test_a_finished_command_is_returned_like_subprocess_run() -> None:
    result = interrupts.run_in_group(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout_s=10)
    assert (result.returncode, result.stdout, result.stderr) == (3, "out\n", "err\n")
