"""`make poolers` (scripts/install_poolers.sh): without a tools folder each pooler Debian packages none of is
one line and the status 0; from a tools folder each binary is checked against its SHA256SUMS, copied where the
harness looks (connlab.paths) with the VERSION it prints, and a mismatch stops it. The binaries here are
shell scripts that print a version: nothing is started but them."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from connlab.paths import DEFAULT_BUILD_DIR, REPO_ROOT, built_pooler_bin

pytestmark = pytest.mark.process

SCRIPT = REPO_ROOT / "scripts" / "install_poolers.sh"
MISSING = ("odyssey", "pgcat")  # no Debian package: not available where none is installed
ALL = ("odyssey", "pgcat", "pgbouncer", "pgpool")  # the script's order
NOT_AVAILABLE = "not available on this machine"
STAYS_DEBIANS = "no newer build staged (Debian's stays the harness's)"
PINS = REPO_ROOT / "scripts" / "pooler_upstreams.tsv"


@pytest.fixture
def scratch() -> Iterator[Path]:
    """A folder the postgres user can search (the script runs each binary as that user where we are root)."""
    folder = Path(tempfile.mkdtemp(prefix="clt-poolers-", dir="/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def tools_folder(root: Path, binaries: dict[str, str], sums: dict[str, str] | None = None) -> Path:
    """A tools folder with one fake binary per pooler (printing `binaries[pooler]` as its version) and a
    SHA256SUMS listing it (its real sum, unless `sums` says otherwise)."""
    tools = root / "tools"
    for pooler, version in binaries.items():
        binary = tools / pooler / "bin" / pooler
        binary.parent.mkdir(parents=True)
        binary.write_text(f"#!/bin/sh\necho '{version}'\n")
        binary.chmod(0o755)
        digest = (sums or {}).get(pooler) or hashlib.sha256(binary.read_bytes()).hexdigest()
        (tools / pooler / "SHA256SUMS").write_text(f"{digest}  bin/{binary.name}\n")
    tools.chmod(0o755)
    for folder in tools.rglob("*"):
        if folder.is_dir():
            folder.chmod(0o755)
    return tools


def install(build: Path, tools: str) -> subprocess.CompletedProcess[str]:
    """Every pooler the tools folder has (naming one would read as starting it:
    tests/support/process_markers.py), with no upstream pins: a pooler the folder lacks is never cloned from
    the network."""
    return subprocess.run(
        ["bash", str(SCRIPT), str(build), tools],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "POOLER_UPSTREAMS": str(build.parent / "no-pins.tsv")},
    )  # fmt: skip


@pytest.mark.parametrize("tools", ["", "nonexistent"])
def test_without_a_tools_folder_each_pooler_is_one_line_and_the_run_goes_on(
    scratch: Path, tools: str
) -> None:
    """Offline (the pins name repositories that do not exist here), each pooler is one line: those Debian
    packages none of are not available, the others keep Debian's build."""
    pins = scratch / "pins.tsv"
    pins.write_text("".join(f"{p}\t{scratch / 'nowhere' / p}\tv1\t{'0' * 40}\n" for p in ALL))
    result = subprocess.run(
        ["make", "-s", "--no-print-directory", "poolers", f"POOLER_TOOLS={tools and scratch / tools}",
         f"POOLERS_DIR={scratch / 'build'}"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "POOLER_UPSTREAMS": str(pins)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == len(ALL), result.stdout
    for pooler, line in zip(ALL, lines, strict=True):
        said = NOT_AVAILABLE if pooler in MISSING else STAYS_DEBIANS
        assert line.startswith(f"{pooler}: {said}: no tools folder (POOLER_TOOLS)"), line
    assert not [path for path in (scratch / "build").rglob("*") if path.is_file()]


def test_the_repositorys_pins_name_each_pooler_with_a_full_commit() -> None:
    pins = [line.split("\t") for line in PINS.read_text().splitlines() if line and not line.startswith("#")]
    assert sorted(pin[0] for pin in pins) == sorted(ALL)
    for pooler, repository, tag, commit in pins:
        assert repository.startswith("https://") and tag, pooler
        assert len(commit) == 40 and int(commit, 16) >= 0, pooler


def test_a_clone_whose_commit_is_not_the_pins_is_refused(scratch: Path) -> None:
    """A tag that moved upstream: the clone's commit differs from the pin, and nothing is built or staged."""
    upstream = scratch / "odyssey.git"
    work = scratch / "work"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q", str(work)], check=True)
    (work / "README").write_text("not odyssey\n")
    subprocess.run([*git, "-C", str(work), "add", "README"], check=True)
    subprocess.run([*git, "-C", str(work), "commit", "-q", "-m", "one"], check=True)
    subprocess.run([*git, "-C", str(work), "tag", "1.5.1"], check=True)
    subprocess.run([*git, "clone", "-q", "--bare", str(work), str(upstream)], check=True)
    moved = subprocess.run(
        ["git", "-C", str(work), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    pins = scratch / "pins.tsv"
    pins.write_text(f"odyssey\tfile://{upstream}\t1.5.1\t{'a' * 40}\n")
    result = subprocess.run(
        ["bash", str(SCRIPT), str(scratch / "build"), ""],  # odyssey first; naming it reads as starting it
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "POOLER_UPSTREAMS": str(pins)},
    )  # fmt: skip
    if shutil.which("cmake") is None:
        pytest.skip("cmake is missing: the script stops before cloning")
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr.strip() == (
        f"make poolers: odyssey: 1.5.1 of file://{upstream} is commit {moved}, but the pin says {'a' * 40} "
        f"({pins}): not built"
    )
    assert not (scratch / "build" / "odyssey").exists()


def test_a_tools_folder_is_checked_and_installed_where_the_harness_looks(scratch: Path) -> None:
    tools = tools_folder(scratch, {"pgcat": "pgcat 9.9.9", "pgbouncer": "PgBouncer 9.8.7"})
    build = scratch / "build"
    result = install(build, str(tools))
    assert result.returncode == 0, result.stderr
    installed = build / built_pooler_bin("pgcat").relative_to(DEFAULT_BUILD_DIR)
    assert installed.read_bytes() == (tools / "pgcat" / "bin" / "pgcat").read_bytes()
    assert installed.stat().st_mode & 0o777 == 0o755
    assert (installed.parent.parent / "VERSION").read_text() == "pgcat 9.9.9\n"
    # A newer PgBouncer is staged under its version, beside (not instead of) the one the harness runs.
    assert (build / "pgbouncer-9.8.7" / "VERSION").read_text() == "PgBouncer 9.8.7\n"
    assert os.access(build / "pgbouncer-9.8.7" / "bin" / "pgbouncer", os.X_OK)
    # Odyssey is not in this tools folder: one line; nor is PgPool-II, and Debian's stays the harness's.
    [odyssey] = [line for line in result.stdout.splitlines() if NOT_AVAILABLE in line]
    assert odyssey.startswith(f"odyssey: {NOT_AVAILABLE}: no odyssey/ in the tools folder {tools} "), odyssey
    assert not (build / built_pooler_bin("odyssey").relative_to(DEFAULT_BUILD_DIR)).exists()
    [pgpool] = [line for line in result.stdout.splitlines() if line.startswith("pgpool:")]
    assert pgpool.startswith(f"pgpool: {STAYS_DEBIANS}: no pgpool/ in the tools folder {tools}"), pgpool
    assert sorted(path.name for path in build.iterdir()) == ["pgbouncer-9.8.7", "pgcat"]  # no staging left


def test_a_checksum_mismatch_stops_it_and_installs_nothing(scratch: Path) -> None:
    tools = tools_folder(scratch, {"pgcat": "pgcat 9.9.9"}, sums={"pgcat": "0" * 64})
    build = scratch / "build"
    result = install(build, str(tools))
    assert result.returncode == 1
    assert f"sha256 {hashlib.sha256((tools / 'pgcat/bin/pgcat').read_bytes()).hexdigest()}" in result.stderr
    assert f"but {tools}/pgcat/SHA256SUMS says {'0' * 64}" in result.stderr
    assert not (build / built_pooler_bin("pgcat").relative_to(DEFAULT_BUILD_DIR)).exists()


def test_a_tools_folder_without_sums_is_refused(scratch: Path) -> None:
    tools = tools_folder(scratch, {"pgcat": "pgcat 9.9.9"})
    (tools / "pgcat" / "SHA256SUMS").unlink()
    result = install(scratch / "build", str(tools))
    assert result.returncode == 1 and "SHA256SUMS is missing" in result.stderr, result.stderr
