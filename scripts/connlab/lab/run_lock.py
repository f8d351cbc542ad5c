"""One measurement at a time per machine: every run holds a machine-wide lock for its whole duration.

Two runs at once measure each other (they share the cores, the caches, the memory bandwidth), and they
break each other: one run's cgroup clean-up removed the other's client cgroup between two windows, and the
other's next pgbench died in preexec_fn. So `connlab run`, `run-all` and `contribute` (connlab.cli's
MEASURING_COMMANDS), and anything else that opens a measuring cluster (connlab.lab.bench.open_bench), take
an exclusive lock on paths.MEASURE_LOCK_FILE before they start anything. A second one is refused at once,
with one line naming the first:

    another measurement is running on this machine: PID 1234 (connlab run clients-sweep --profile quick),
    started 18:40:02; wait for it or stop it

Contract:
- `hold_measurement_lock(command=None, path=None)`: a context manager that holds the lock or raises
  LabError with that line. Reentrant within a process: run-all holds it across its experiments, and the
  open_bench of each experiment takes it again inside.
- `MeasurementLock(path, command)`: one holding of the lock, acquire() and release(), not reentrant: the
  tests use it to hold the lock as another run would.

Why flock: the kernel drops the lock when the holder's open file is closed, and a process's death closes
its files, whatever killed it (SIGKILL, the OOM killer). A crashed run never leaves a stale lock, and
nothing has to guess whether the PID in a file still belongs to the run that wrote it. The descriptor is
close-on-exec (Python's default for the files it opens) and subprocess closes the others, so a server or a
pooler that outlives a killed run cannot carry the lock away with it.

Why the holder writes itself into the file: flock says only that somebody holds the lock. The holder writes
its PID, command line and start time (JSON), and a refused run reads them to say whom to wait for; where
they cannot be read, the PID comes from /proc/locks instead.

Traps:
- The file lives in /tmp, which every user may write. It is opened without following a symbolic link and
  used only when it is a regular file with one link, so that a link planted there cannot make a root run
  truncate some other file.
- With fs.protected_regular, root may not open with O_CREAT a file that another user owns in /tmp: an
  existing file is opened without O_CREAT.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shlex
import stat
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil

from connlab import paths
from connlab.errors import LabError

# How long a refused run waits for the holder's record: the holder writes it right after it takes the lock,
# so a run refused in between would otherwise read an empty file, or the record of a holder that crashed.
RECORD_WAIT_S = 1.0
RECORD_POLL_S = 0.05


@dataclass(frozen=True)
class Holder:
    """Who holds the lock, as the holder recorded it in the lock file."""

    pid: int
    command: str
    started: float  # seconds since the epoch

    def started_text(self) -> str:
        """The local time of day the holder started; with the date when that was not today."""
        started = time.localtime(self.started)
        same_day = time.strftime("%Y-%m-%d", started) == time.strftime("%Y-%m-%d")
        return time.strftime("%H:%M:%S" if same_day else "%Y-%m-%d %H:%M:%S", started)


def this_command() -> str:
    """This process's command line as its user typed it: `connlab run ...` also under `python -m`."""
    program = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
    if program in ("cli.py", "__main__.py"):
        program = "connlab"
    return shlex.join([program, *sys.argv[1:]])


def refusal(holder: Holder | None, path: Path) -> str:
    """The one line a refused run ends with."""
    if holder is None:
        return (
            f"another measurement is running on this machine (it holds {path}, and who it is could not be "
            f"read there); wait for it or stop it"
        )
    if not holder.command:  # the PID alone, from /proc/locks
        return (
            f"another measurement is running on this machine: PID {holder.pid} (it holds {path}); "
            f"wait for it or stop it"
        )
    return (
        f"another measurement is running on this machine: PID {holder.pid} ({holder.command}), "
        f"started {holder.started_text()}; wait for it or stop it"
    )


def _open(path: Path) -> int:
    """The lock file, read-write where this user may write it (read-only still locks), created the first
    time with mode 0666, so that a run of any user after a run of root can record itself in it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = _open_or_create(path)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise LabError(
                f"{path} is a symbolic link; remove it (connlab's lock file is a plain file)"
            ) from error
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        os.close(fd)
        raise LabError(f"{path} is not a plain file with a single link; remove it (connlab's lock file)")
    return fd


def _open_or_create(path: Path) -> int:
    try:
        return os.open(path, os.O_RDWR | os.O_NOFOLLOW)
    except FileNotFoundError:
        pass
    except PermissionError:
        return os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
    except FileExistsError:  # another run created it between the two calls
        return _open_or_create(path)
    os.fchmod(fd, 0o666)  # past the umask
    return fd


def _read_holder(fd: int) -> Holder | None:
    """The holder's record, when it names a live process."""
    try:
        record = json.loads(os.pread(fd, 65536, 0) or b"null")
        holder = Holder(int(record["pid"]), str(record["command"]), float(record["started"]))
    except (OSError, ValueError, TypeError, KeyError):
        return None
    return holder if psutil.pid_exists(holder.pid) else None


def _pid_from_proc_locks(fd: int) -> int | None:
    """The PID that holds the flock on this file, from the kernel's own table."""
    info = os.fstat(fd)
    device = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; a waiter's line has "->" after the number.
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == device:
            return int(fields[4])
    return None


def _holder(fd: int) -> Holder | None:
    deadline = time.monotonic() + RECORD_WAIT_S
    while True:
        holder = _read_holder(fd)
        if holder is not None or time.monotonic() > deadline:
            break
        time.sleep(RECORD_POLL_S)
    if holder is None:
        pid = _pid_from_proc_locks(fd)
        holder = Holder(pid, "", 0.0) if pid is not None else None
    return holder


class MeasurementLock:
    """One holding of the machine-wide lock; acquire() raises LabError naming the holder when it is held."""

    def __init__(self, path: Path | None = None, command: str | None = None) -> None:
        self.path = path or paths.MEASURE_LOCK_FILE
        self.command = command or this_command()
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        fd = _open(self.path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                message = refusal(_holder(fd), self.path)
            finally:
                os.close(fd)
            raise LabError(message) from None
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        record = json.dumps(asdict(Holder(os.getpid(), self.command, time.time())))
        # A read-only descriptor (a file of another user's that this one may not write) still locks; the
        # refused run then finds no live holder in the file and takes the PID from /proc/locks.
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, record.encode() + b"\n", 0)

    def release(self) -> None:
        if self._fd is None:
            return
        # Emptied first, so that the file never names a run that has ended; closing drops the lock.
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> MeasurementLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


# This process's holdings by lock file, with how many holders nest inside each (reentrancy).
_HELD: dict[Path, tuple[MeasurementLock, int]] = {}


@contextlib.contextmanager
def hold_measurement_lock(command: str | None = None, path: Path | None = None) -> Iterator[None]:
    """Hold the machine-wide lock while the block runs (see the module's docstring); reentrant."""
    path = path or paths.MEASURE_LOCK_FILE
    if path in _HELD:
        lock, depth = _HELD[path]
        _HELD[path] = (lock, depth + 1)
    else:
        lock = MeasurementLock(path, command)
        lock.acquire()
        _HELD[path] = (lock, 1)
    try:
        yield
    finally:
        lock, depth = _HELD[path]
        if depth > 1:
            _HELD[path] = (lock, depth - 1)
        else:
            del _HELD[path]
            lock.release()
