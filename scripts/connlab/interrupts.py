"""Ctrl-C and SIGTERM, and the child processes they must never leave behind.

A terminal's Ctrl-C sends SIGINT to the whole foreground process group (make and connlab). The harness
starts every child (initdb, pg_ctl, pgbench, PgBouncer) in a session of its own, so the signal reaches
connlab alone, which then stops them in order: the children it waits for, the pooler, the server, the
cgroups. Two rules make that reliable:

- The first signal raises KeyboardInterrupt once; later ones are noted and ignored, so a second Ctrl-C
  cannot cut the clean-up short and leave a server behind. Every clean-up step is bounded in time.
- A child is killed with its whole process group: `runuser` in front of initdb or PgBouncer would
  otherwise die alone and leave its child running.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

INTERRUPT_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# The exit status a shell reports for a command stopped by Ctrl-C (128 + SIGINT).
INTERRUPTED_EXIT_STATUS = 128 + signal.SIGINT


_interrupted = False


def interrupted() -> bool:
    """Whether an interrupt signal arrived in this process."""
    return _interrupted


def raise_if_interrupted() -> None:
    """KeyboardInterrupt again where a signal came but its KeyboardInterrupt was lost: raised while Python ran
    code whose exceptions it prints as ignored and drops (an at-fork hook such as logging's, run as a child is
    started; a finalizer), it would let the run go on to its end."""
    if _interrupted:
        raise KeyboardInterrupt("an interrupt signal came earlier")


def _ignore_repeat(signum: int, _frame: FrameType | None) -> None:
    print("still stopping the server and pgbench; this takes a few seconds", file=sys.stderr)


def _interrupt_once(signum: int, _frame: FrameType | None) -> None:
    global _interrupted
    _interrupted = True
    for other in INTERRUPT_SIGNALS:
        signal.signal(other, _ignore_repeat)
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def install_interrupt_handlers() -> None:
    """SIGINT and SIGTERM raise KeyboardInterrupt once. Installed explicitly, because a process started
    in the background by a non-interactive shell inherits SIGINT as ignored and would run on."""
    for signum in INTERRUPT_SIGNALS:
        # Once a signal came, installed again (a command after the command line's own) it must not re-arm.
        signal.signal(signum, _ignore_repeat if _interrupted else _interrupt_once)


def exit_command(status: int | str | None) -> NoReturn:
    """End the command with `status`, or 130 if a signal came at any point: what a Ctrl-C or SIGTERM
    exits with, wherever it landed. From here on both signals are ignored: Python's exit puts back the
    default action of every signal it handled, so a signal during the exit (while the modules are torn down)
    would end the process by the signal instead."""
    for signum in INTERRUPT_SIGNALS:
        while True:
            try:
                signal.signal(signum, signal.SIG_IGN)
                break
            except KeyboardInterrupt:  # the first signal, handled just now (signal() runs pending handlers)
                continue
    if _interrupted:
        # Run with `python -m`, CPython ends a process by SIGINT (status -2 to its parent, not 130) once a
        # KeyboardInterrupt escaped an exec() of a string, even one handled since: dataclasses and typing
        # build their methods that way, so a Ctrl-C during an import leaves that mark. Each exec() of a
        # string clears it as it starts (Python/pythonrun.c, run_eval_code_obj), and this one raises nothing.
        exec("")
        sys.exit(INTERRUPTED_EXIT_STATUS)
    sys.exit(status)


def hold_interrupts() -> Callable[[], None]:
    """Hold Ctrl-C and SIGTERM back until the returned function is called: it puts the handlers back and, if
    a signal came meanwhile, handles it there. For a child started and then put under a guard: a signal
    between the two (Popen waits for the child's exec, long enough on a loaded machine) would leave the
    child running. Only the main thread handles signals; elsewhere nothing is held.

    Not hold_signals: that blocks the signals in the process's mask, which a child started inside the block
    inherits and keeps (a validation process whose workers could not be sent SIGTERM). This swaps the
    handlers, which exec resets in the child."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    arrived: list[int] = []
    handlers = {signum: signal.getsignal(signum) for signum in INTERRUPT_SIGNALS}
    for signum in INTERRUPT_SIGNALS:
        signal.signal(signum, lambda received, _frame: arrived.append(received))

    def release() -> None:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        if arrived:
            handler = handlers[arrived[0]]
            if callable(handler):
                handler(arrived[0], None)  # _interrupt_once raises KeyboardInterrupt here
            else:
                signal.raise_signal(arrived[0])

    return release


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL the process's group (it leads one: started with start_new_session) and reap it."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)


@contextlib.contextmanager
def group_guard(process: subprocess.Popen) -> Iterator[subprocess.Popen]:
    """Kill the child's whole group if the block ends early (an error, Ctrl-C, a timeout)."""
    try:
        yield process
    except BaseException:
        kill_group(process)
        raise


@contextlib.contextmanager
def started_in_group(command: Sequence[str], **popen: Any) -> Iterator[subprocess.Popen]:
    """subprocess.Popen in a session of its own, under group_guard for the block. Ctrl-C and SIGTERM are
    held while Popen waits for the child's exec: raised there, they would leave the child running with
    nothing to stop it (its session does not get the terminal's signal)."""
    release = hold_interrupts()
    try:
        process = subprocess.Popen(list(command), start_new_session=True, **popen)
    except BaseException:
        release()
        raise
    with group_guard(process):
        release()  # a signal held meanwhile is raised here, where the guard kills the group
        yield process


def run_in_group(
    command: Sequence[str],
    timeout_s: float | None = None,
    preexec_fn: Callable[[], None] | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """subprocess.run in a session of its own, killing the whole group on timeout or interrupt.

    A timeout raises subprocess.TimeoutExpired after the group is gone."""
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    with started_in_group(command, preexec_fn=preexec_fn, env=env, **pipes) as process:
        stdout, stderr = process.communicate(timeout=timeout_s)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


@contextlib.contextmanager
def hold_signals() -> Iterator[None]:
    """Defer SIGINT/SIGTERM until the block ends (only possible in the main thread)."""
    try:
        # The mask as it is, first: blocking runs the handler of a signal that came just before, and the
        # KeyboardInterrupt it raises must not leave the signals blocked for the rest of the process.
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, set())
    except (ValueError, OSError):
        yield
        return
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, set(INTERRUPT_SIGNALS))
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


# -- worker processes ---------------------------------------------------------------------------------------

# Whether this worker process is running a task now (WorkerPool's tasks set it).
_in_task = False


def _worker_interrupt(signum: int, _frame: FrameType | None) -> None:
    """Ctrl-C in a worker. In a task: KeyboardInterrupt, which the pool hands back as the task's outcome.
    Between tasks (just started, or done and waiting to be told to stop): the worker leaves without a word,
    since its parent, which the same Ctrl-C reached, says once that the command was interrupted."""
    if _in_task:
        raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")
    raise SystemExit(INTERRUPTED_EXIT_STATUS)


def _start_worker(started: Connection) -> None:
    """A worker's first step: say its process id to its pool (WorkerPool.stop ends the worker by it), then
    take Ctrl-C as _worker_interrupt says."""
    started.send(os.getpid())
    signal.signal(signal.SIGINT, _worker_interrupt)
    try:
        # The worker started with SIGINT held (WorkerPool.submit): a Ctrl-C during its imports, which Python
        # would have reported with a traceback, arrives now.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    except SystemExit:
        os._exit(INTERRUPTED_EXIT_STATUS)  # not the pool's "exception in initializer" report


@dataclass(frozen=True)
class _Task:
    function: Callable[..., Any]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        global _in_task
        _in_task = True
        try:
            return self.function(*args, **kwargs)
        finally:
            _in_task = False


# How often a stopped pool tries to join its own thread, 10 ms apart.
STOP_ATTEMPTS = 1000


class WorkerPool(ProcessPoolExecutor):
    """Worker processes across the cores that a Ctrl-C to the terminal's process group stops without a
    traceback of their own: the command prints one line, as it does without workers. Spawned, not forked: a
    forked copy of a process whose DuckDB or vl-convert threads had started can hang."""

    def __init__(self, workers: int) -> None:
        context = get_context("spawn")
        # Each worker's process id, said as it starts: stop() ends the workers by it (the executor's own list
        # of its processes is not part of its API). A pipe, not a queue: a queue's locks are semaphores that
        # a build ending with os._exit (connlab.cli.exit_without_teardown) would leave for the resource
        # tracker to report; a pid is one write far shorter than the pipe's atomic size, so the workers
        # need no lock to share its end.
        self.started_workers, said = context.Pipe(duplex=False)
        super().__init__(workers, mp_context=context, initializer=_start_worker, initargs=(said,))
        self._said = said

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        # SIGINT held while the executor may start a worker, which it does within submit (map submits too):
        # the worker inherits the mask, so a Ctrl-C during its imports waits for _start_worker. This
        # process's own arrives as soon as submit returns.
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            return super().submit(_Task(fn), *args, **kwargs)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> bool | None:
        if exc_type is None:
            return super().__exit__(exc_type, *rest)
        self.stop()
        return None

    def stop(self) -> None:
        """End the workers now, whatever they are doing, and wait for them and the pool's thread: a block
        left early (Ctrl-C, an error), or a helper whose remaining work nobody needs. A worker still
        starting has not said its id yet: it is told to stop once started, and waited for."""
        while not self.started_workers.closed and self.started_workers.poll():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.started_workers.recv(), signal.SIGTERM)
        # The pool's own thread notices the workers gone and joins them: not waited for, it could still be
        # closing its pipe while this process's exit writes to it, and a worker still starting would look
        # for the pool's semaphores after the exit removed them. A Ctrl-C while the thread was starting
        # leaves it starting (joining it then is refused): it is waited for until it has.
        for _ in range(STOP_ATTEMPTS):
            try:
                self.shutdown(wait=True, cancel_futures=True)
                break
            except RuntimeError:
                time.sleep(0.01)
        self.started_workers.close()
        self._said.close()
