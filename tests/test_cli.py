"""connlab.cli: what the command line does around its commands."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.process
@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_a_build_that_skips_the_teardown_still_says_everything_it_printed(stream: str) -> None:
    """A finished build leaves without tearing the interpreter down (os._exit): what it printed last, still in
    a stream's buffer when the output is a pipe, must reach the reader, and the status is success."""
    script = (
        "import sys\n"
        "from connlab.cli import exit_without_teardown\n"
        f"sys.{stream}.write('site built in 0.6 s')\n"
        "exit_without_teardown()\n"
        "print('not reached')\n"
    )
    # Buffered as a build's streams are when make runs it (PYTHONUNBUFFERED would hide a missing flush).
    env = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False, env=env
    )
    assert done.returncode == 0
    assert getattr(done, stream) == "site built in 0.6 s"
    assert "not reached" not in done.stdout


@pytest.mark.process
def test_a_build_that_used_a_worker_pool_ends_without_a_resource_warning() -> None:
    """A pool stopped as the render stops its SVG helper, then the build's exit without teardown: nothing of
    the pool is left for multiprocessing's resource tracker to report (a leaked semaphore is a warning
    printed under the build's last line)."""
    script = (
        "from connlab.cli import exit_without_teardown\n"
        "from connlab.interrupts import WorkerPool\n"
        "pool = WorkerPool(1)\n"
        "assert pool.submit(abs, -2).result() == 2\n"
        "pool.stop()\n"
        "print('site built in 0.6 s')\n"
        "exit_without_teardown()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "site built in 0.6 s\n"
    assert "leaked" not in done.stderr and "Warning" not in done.stderr, done.stderr
