"""Shared fixtures: complete results rows, results folders on disk, and guards for tests that need root,
cgroup v1 or a folder the postgres user can enter.

No fixture here writes into the repository's results/ or build/: every path comes from tmp_path or from a
temporary folder under /tmp.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml
from mkdocs.config import load_config
from mkdocs.config.defaults import MkDocsConfig

from connlab.contract.columns import COLUMN_NAMES
from connlab.lab.results_file import ResultsFile

if TYPE_CHECKING:
    from playwright.sync_api import Browser

REPO_ROOT = Path(__file__).resolve().parents[1]
GOLDEN_DIR = Path(__file__).resolve().parent / "golden" / "pgbench"
CGROUP_ROOT = Path("/sys/fs/cgroup")

# Chromium as the browser tests start it: headless, and with nothing that would call another host.
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def site_config() -> MkDocsConfig:
    """mkdocs.yml as MkDocs reads it, for its Markdown extensions: the docs folder is the templates' own,
    so that the tests need no built build/docs (MkDocs refuses a docs_dir that does not exist)."""
    return load_config(str(REPO_ROOT / "mkdocs.yml"), docs_dir=str(REPO_ROOT / "site_src"))


RowFactory = Callable[..., dict[str, Any]]
RunWriter = Callable[..., Path]


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture
def golden_dir() -> Path:
    return GOLDEN_DIR


def _base_row() -> dict[str, Any]:
    """One complete, valid window row (the values a healthy tiny run writes)."""
    return {
        "run_id": "full-20260101T000000Z",
        "machine": "alpha",
        "experiment": "clients-sweep",
        "profile": "full",
        "spec_hash": "0123456789ab",
        "window_no": 1,
        "pass_no": 1,
        "pass_order": "asc",
        "workload": "mixed",
        "clients": 1,
        "jobs": 1,
        "duration_s": 15,
        "transport": "unix",
        "target": "direct",
        "started_at": "2026-01-01T00:00:00Z",
        "ok": True,
        "exit_code": 0,
        "error": "",
        "tps": 1000.0,
        "transactions": 15000,
        "failed_transactions": 0,
        "latency_avg_ms": 1.0,
        "latency_stddev_ms": 0.5,
        "latency_p50_ms": 0.9,
        "latency_p95_ms": 2.0,
        "latency_p99_ms": 3.0,
        "initial_connection_ms": 5.0,
        "avg_connection_ms": None,
        "server_cpu_budget": 1.0,
        "server_cpu_cores": 0.95,
        "client_cores": 1,
        "client_cpu_cores": 0.4,
        "client_saturated": False,
        "steal_pct": 0.0,
        "cpu_pressure_pct": 10.0,
        "checkpoints": 0,
        "autovacuums": 0,
        "cpu_budget_method": "cgroup-v1",
        "postgres_version": "15.18",
        "pgbench_flags": "-n -b select-only -c 1 -j 1 -T 15 -P 1 -M simple -l",
    }


@pytest.fixture
def make_row() -> RowFactory:
    """A factory for complete rows: make_row(clients=4, tps=123.0)."""

    def factory(**overrides: Any) -> dict[str, Any]:
        unknown = set(overrides) - set(COLUMN_NAMES)
        assert not unknown, f"not a results column: {unknown}"
        return {**_base_row(), **overrides}

    return factory


def machine_facts(machine_id: str, profile: str = "full", **overrides: Any) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "id": machine_id,
        "description": "",
        "cpu_model": "Test CPU 3000",
        "cores": 2,
        "threads": 2,
        "memory_gib": 8.0,
        "kernel": "6.1.0-test",
        "os": "Debian GNU/Linux 12 (bookworm)",
        "virtualised": "none",
        "postgres_version": "15.18",
        "pgbench_version": "15.18",
        "cpu_budget_method": "cgroup-v1",
        "profile": profile,
        "collected_at": "2026-01-01T00:00:00Z",
    }
    return {**facts, **overrides}


@pytest.fixture
def write_run(make_row: RowFactory) -> RunWriter:
    """Write results/<machine>/<experiment>/<run_id>.csv with ResultsFile, and machine.yaml.

    write_run(results_dir, "alpha", [{"tps": 1.0, ...}, ...], profile="full") -> the CSV path. Each row
    dict holds overrides of make_row(); machine, profile, run_id are filled in.
    """

    def writer(
        results_dir: Path,
        machine: str,
        rows: list[dict[str, Any]],
        profile: str = "full",
        run_id: str | None = None,
        experiment: str = "clients-sweep",
        machine_yaml: bool = True,
    ) -> Path:
        run_id = run_id or f"{profile}-20260101T000000Z"
        path = results_dir / machine / experiment / f"{run_id}.csv"
        results = ResultsFile(path)
        for number, overrides in enumerate(rows, start=1):
            results.append(
                make_row(
                    **{
                        "window_no": number,
                        **overrides,
                        "run_id": run_id,
                        "machine": machine,
                        "profile": profile,
                        "experiment": experiment,
                    }
                )
            )
        machine_file = results_dir / machine / "machine.yaml"
        if machine_yaml and not machine_file.exists():
            machine_file.write_text(yaml.safe_dump(machine_facts(machine, profile), sort_keys=False))
        return path

    return writer


def is_root() -> bool:
    return os.geteuid() == 0


def cgroup_v1_writable() -> bool:
    return is_root() and all(
        (CGROUP_ROOT / name / "cgroup.procs").exists() for name in ("cpuset", "cpu", "cpuacct")
    )


@pytest.fixture
def require_root() -> None:
    if not is_root():
        pytest.skip("needs root (the server and the snippets run as the postgres user)")


@pytest.fixture
def require_cgroup_v1() -> None:
    if not cgroup_v1_writable():
        pytest.skip("needs root and a writable cgroup v1 hierarchy")


@pytest.fixture
def require_postgres() -> None:
    if not any(Path("/usr/lib/postgresql").glob("*/bin/initdb")):
        pytest.skip("PostgreSQL server binaries are not installed")


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A short temporary folder under /tmp that the postgres user can enter.

    pytest's tmp_path is mode 0700 and deep: the server (running as postgres) could not reach its data
    folder there, and its unix socket path would exceed the 107-byte limit.
    """
    folder = Path(tempfile.mkdtemp(prefix="clt-", dir="/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def connlab_cgroups() -> set[Path]:
    """Every cgroup folder named connlab-* (v1 controllers and the v2 root)."""
    found = set(CGROUP_ROOT.glob("*/connlab-*")) | set(CGROUP_ROOT.glob("connlab-*"))
    return {path for path in found if path.is_dir()}


class CgroupGuard:
    """The connlab-* cgroups that existed when the test started, to tell which ones it added."""

    def __init__(self) -> None:
        self.before = connlab_cgroups()

    def added(self) -> set[Path]:
        return connlab_cgroups() - self.before


@pytest.fixture
def cgroup_guard() -> Iterator[CgroupGuard]:
    """Tests assert `cgroup_guard.added() == set()`. Afterwards, empty folders the test left behind are
    removed so one failure cannot spill into the next test (the assertion has already recorded the leak).
    """
    guard = CgroupGuard()
    yield guard
    for folder in sorted(guard.added(), key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):
            folder.rmdir()


@pytest.fixture
def connlab_env(shared_tmp: Path) -> dict[str, str]:
    """Environment for a `connlab` subprocess whose results and build folders are temporary."""
    env = dict(os.environ)
    for name in ("CONNLAB_PORT", "MACHINE", "PG_BINDIR", "PG_VERSION", "CPU_METHOD"):
        env.pop(name, None)
    env.update(
        CONNLAB_RESULTS_DIR=str(shared_tmp / "results"),
        CONNLAB_BUILD_DIR=str(shared_tmp / "build"),
        COLUMNS="200",
        NO_MKDOCS_2_WARNING="1",
        PYTHONUNBUFFERED="1",
    )
    return env


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One Chromium for every browser test module: Playwright's sync API allows a single instance per
    process, so a second module starting its own would fail while the first is open."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not installed")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def docs_from_fixtures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """build/docs rendered from the committed facts fixture (tests/fixtures/facts_before): every page the
    site's templates make, for tests that convert them."""
    from connlab.site.render import render_site

    data = tmp_path_factory.mktemp("data")
    shutil.copytree(Path(__file__).resolve().parent / "fixtures" / "facts_before", data, dirs_exist_ok=True)
    docs = tmp_path_factory.mktemp("docs")
    render_site(data, docs)
    return docs
