"""Shared fixtures: complete results rows, results folders on disk, the site built from pinned results,
and guards for tests that need root, cgroup v1 or a folder the postgres user can enter.

Tests read a pinned copy of the results (tests/fixtures/results), never the working tree's: a user's own
`make all` adds a machine to results/ and rewrites the facts aggregated from it, and a test pinned to those
would turn the README's second command red. Every test process therefore points connlab at a fresh copy of
the pinned results and at a build folder of its own (build/test/<worker>), before connlab is imported.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import math
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parent
PINNED_RESULTS = TESTS_DIR / "fixtures" / "results"
TEST_BUILD_DIR = REPO_ROOT / "build" / "test"
# A folder per test process (each pytest-xdist worker, or a pytest run without xdist), removed when it ends:
# workers and runs side by side never share one.
TEST_BUILD_DIR.mkdir(parents=True, exist_ok=True)
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")
WORKER_DIR = Path(tempfile.mkdtemp(prefix=f"{WORKER}-", dir=TEST_BUILD_DIR))
WORKER_DIR.chmod(0o755)  # the postgres user enters it when a test starts a server from this process
atexit.register(shutil.rmtree, WORKER_DIR, ignore_errors=True)
# A copy, so that a test that writes results by mistake cannot change the pinned ones.
shutil.copytree(PINNED_RESULTS, WORKER_DIR / "results")
os.environ["CONNLAB_RESULTS_DIR"] = str(WORKER_DIR / "results")
os.environ["CONNLAB_BUILD_DIR"] = str(WORKER_DIR / "build")

import pytest
import yaml
from mkdocs.config import load_config
from mkdocs.config.defaults import MkDocsConfig

from connlab.contract.columns import COLUMN_NAMES
from connlab.lab.results_file import ResultsFile

if TYPE_CHECKING:
    from playwright.sync_api import Browser

# The process markers and their check; the browser tests' server and watched page; pytester for the
# markers' own test.
pytest_plugins = ["process_markers", "browser_support", "pytester"]

GOLDEN_DIR = TESTS_DIR / "golden" / "pgbench"
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


# Session-scoped: pure factories, so that a module's fixture can write its results once for all its tests.
@pytest.fixture(scope="session")
def make_row() -> RowFactory:
    """A factory for complete rows: make_row(clients=4, tps=123.0)."""

    def factory(**overrides: Any) -> dict[str, Any]:
        unknown = set(overrides) - set(COLUMN_NAMES)
        assert not unknown, f"not a results column: {unknown}"
        return _with_derived_figures({**_base_row(), **overrides}, overrides)

    return factory


def _with_derived_figures(row: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """The figures validation holds to others (connlab.data.window_rules), following the overrides unless
    the test gives them too: the transactions of the tps over the window, the pass's order, the client CPU
    of a window marked client-bound, and a latency spread of the pass's own."""
    derived: dict[str, Any] = {}
    if "transactions" not in given and row["tps"]:
        derived["transactions"] = max(1, math.ceil(row["tps"] * row["duration_s"]))
    if "pass_order" not in given:
        derived["pass_order"] = "asc" if row["pass_no"] % 2 else "desc"
    if row["client_saturated"] and "client_cpu_cores" not in given:
        derived["client_cpu_cores"] = row.get("client_cpu_budget") or row["client_cores"]
    if "latency_stddev_ms" not in given and row["latency_stddev_ms"] is not None:
        # Two passes of a window never agree in every measured figure; rows that did would be a pasted pass,
        # which validation refuses (connlab.data.pasted_passes). No page shows this figure.
        derived["latency_stddev_ms"] = round(row["latency_stddev_ms"] + (row["pass_no"] - 1) / 100, 3)
    return {**row, **derived}


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


@pytest.fixture(scope="session")
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


def connlab_cgroups(prefix: str = "connlab") -> set[Path]:
    """Every cgroup folder named <prefix>-* (v1 controllers and the v2 root); every connlab-* by default."""
    found = set(CGROUP_ROOT.glob(f"*/{prefix}-*")) | set(CGROUP_ROOT.glob(f"{prefix}-*"))
    return {path for path in found if path.is_dir()}


class CgroupGuard:
    """The cgroups of this test's prefix that existed when it started, to tell which ones it added. Only its
    own prefix: a measurement or another test running beside it adds cgroups of its own meanwhile, and the
    clean-up below must never remove those (an empty client cgroup between two windows is still in use)."""

    def __init__(self, prefix: str = "connlab") -> None:
        self.prefix = prefix
        self.before = connlab_cgroups(prefix)

    def added(self) -> set[Path]:
        return connlab_cgroups(self.prefix) - self.before


@pytest.fixture
def cgroup_prefix(shared_tmp: Path) -> str:
    """The cgroup name prefix of this test's runs (CONNLAB_CGROUP_PREFIX in connlab_env): unique to the
    test, as its temporary folder's name is, and still connlab-*."""
    return f"connlab-{shared_tmp.name}"


@pytest.fixture
def cgroup_guard(cgroup_prefix: str) -> Iterator[CgroupGuard]:
    """Tests assert `cgroup_guard.added() == set()`. Afterwards, empty folders the test left behind are
    removed so one failure cannot spill into the next test (the assertion has already recorded the leak).
    """
    guard = CgroupGuard(cgroup_prefix)
    yield guard
    for folder in sorted(guard.added(), key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):
            folder.rmdir()


@pytest.fixture
def connlab_env(shared_tmp: Path, cgroup_prefix: str) -> dict[str, str]:
    """Environment for a `connlab` subprocess whose results and build folders are temporary.

    Its runs touch only clusters and cgroups of their own (a build folder and a cgroup prefix of the test's),
    so tests may run them beside each other (pytest-xdist) and beside a real measurement. That is why each
    test has a lock file of its own instead of the machine-wide one (connlab.paths.MEASURE_LOCK_FILE): with
    that one, a second worker's run, or any run while someone measures, would be refused. The lock's own
    tests (tests/test_run_lock.py) hold this file to see a run refused."""
    env = dict(os.environ)
    for name in ("CONNLAB_PORT", "MACHINE", "PG_BINDIR", "PG_VERSION", "CPU_METHOD"):
        env.pop(name, None)
    env.update(
        CONNLAB_RESULTS_DIR=str(shared_tmp / "results"),
        CONNLAB_BUILD_DIR=str(shared_tmp / "build"),
        CONNLAB_LOCK_FILE=str(shared_tmp / "measure.lock"),
        CONNLAB_CGROUP_PREFIX=cgroup_prefix,
        COLUMNS="200",
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
    from connlab.site.render.renderer import render_site

    data = tmp_path_factory.mktemp("data")
    shutil.copytree(Path(__file__).resolve().parent / "fixtures" / "facts_before", data, dirs_exist_ok=True)
    docs = tmp_path_factory.mktemp("docs")
    render_site(data, docs)
    return docs


# make, taking the set-up as done: the tests run inside the virtualenv it would rebuild. make, not the
# stages alone, so that a change to the code is never missed (its stamps follow the code each stage runs).
SETUP_STAMPS = [".venv/.installed", "node_modules/.installed"]
MAKE_WITHOUT_SETUP = ["make", "--no-print-directory", *(f"-o{stamp}" for stamp in SETUP_STAMPS)]


def build_site(results: Path, build: Path, site_url: str = "", repo_url: str | None = None) -> Path:
    """`make site` (validation, aggregation, render, MkDocs) from a results folder into a build folder, at
    an address when one is given (SITE_URL), linking to a repository when one is given (REPO_URL; None: the
    clone's origin remote, as `make site` does); the built site's folder. A second call rebuilds only what
    changed."""
    env = {
        **{k: v for k, v in os.environ.items() if k != "CONNLAB_REPO_URL"},
        "CONNLAB_RESULTS_DIR": str(results),
        "CONNLAB_BUILD_DIR": str(build),
        "COLUMNS": "200",
    }
    repository = [] if repo_url is None else [f"REPO_URL={repo_url}"]
    result = subprocess.run(
        [*MAKE_WITHOUT_SETUP, "site", f"SITE_URL={site_url}", *repository],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, f"make site from {results}: {result.stdout}{result.stderr}"
    return build / "site"


# The site built from the pinned results, shared by every worker and kept between test runs: a worker that
# comes second finds it built.
SHARED_SITE_BUILD = TEST_BUILD_DIR / "site"


@pytest.fixture(scope="session")
def built_site() -> Path:
    """The static site built from tests/fixtures/results, or the one CONNLAB_SITE_DIR names."""
    if "CONNLAB_SITE_DIR" in os.environ:
        return Path(os.environ["CONNLAB_SITE_DIR"])
    SHARED_SITE_BUILD.mkdir(parents=True, exist_ok=True)
    with (TEST_BUILD_DIR / "site.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return build_site(PINNED_RESULTS, SHARED_SITE_BUILD)


# The site built from the pinned results at an address, as it is for publication: its pages name it, and
# Material's instant navigation is on. Any address serves: the tests' server rewrites the sitemap's entries
# to where it serves the site (browser_support).
TEST_SITE_URL = "https://connlab.example/lab/"
# The repository that site links to, given as the scp-like remote a clone over ssh has: the pages give it as
# TEST_REPO_PAGE.
TEST_REPO_URL = "git@git.connlab.example:lab/connection-lab.git"
TEST_REPO_PAGE = "https://git.connlab.example/lab/connection-lab"
SHARED_SITE_WITH_URL_BUILD = TEST_BUILD_DIR / "site-with-url"


@pytest.fixture(scope="session")
def built_site_with_url() -> Path:
    """The static site built from tests/fixtures/results with SITE_URL set to TEST_SITE_URL and REPO_URL to
    TEST_REPO_URL."""
    SHARED_SITE_WITH_URL_BUILD.mkdir(parents=True, exist_ok=True)
    with (TEST_BUILD_DIR / "site-with-url.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return build_site(PINNED_RESULTS, SHARED_SITE_WITH_URL_BUILD, TEST_SITE_URL, TEST_REPO_URL)
