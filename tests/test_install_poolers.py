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
MISSING = ("odyssey", "pgcat")  # no Debian package: one line each where none is installed
NOT_AVAILABLE = "not available on this machine"


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
    """Every pooler the tools folder has (naming one would read as starting it: tests/process_markers.py)."""
    return subprocess.run(
        ["bash", str(SCRIPT), str(build), tools],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("tools", ["", "nonexistent"])
def test_without_a_tools_folder_each_missing_pooler_is_one_line_and_the_run_goes_on(
    scratch: Path, tools: str
) -> None:
    result = subprocess.run(
        ["make", "-s", "--no-print-directory", "poolers", f"POOLER_TOOLS={tools and scratch / tools}",
         f"POOLERS_DIR={scratch / 'build'}"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == len(MISSING), result.stdout
    for pooler, line in zip(MISSING, lines, strict=True):
        assert line.startswith(f"{pooler}: {NOT_AVAILABLE}: no tools folder (POOLER_TOOLS) and "), line
    assert not [path for path in (scratch / "build").rglob("*") if path.is_file()]


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
    # Odyssey is not in this tools folder: one line; PgPool-II is not either, and Debian packages it: none.
    [odyssey] = [line for line in result.stdout.splitlines() if NOT_AVAILABLE in line]
    assert odyssey.startswith(f"odyssey: {NOT_AVAILABLE}: no odyssey/ in the tools folder {tools} "), odyssey
    assert not (build / built_pooler_bin("odyssey").relative_to(DEFAULT_BUILD_DIR)).exists()
    assert "pgpool" not in result.stdout
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
