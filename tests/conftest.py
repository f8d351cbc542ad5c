"""Shared fixtures: complete results rows, results folders on disk, the site built from pinned results, the
browser and its pages, and guards for tests that need root, cgroup v1 or a folder the postgres user can enter.
What they are made of is in the support package (tests/support/), which test modules import instead of
this file.

Tests read a pinned copy of the results (tests/fixtures/results), never the working tree's: a user's own
`make all` adds a machine to results/ and rewrites the facts aggregated from it, and a test pinned to those
would turn the README's second command red. Every test process therefore points connlab at a fresh copy of
the pinned results and at a build folder of its own (build/test/<worker>), before connlab is imported.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from support.paths import FACTS_BEFORE, GOLDEN_DIR, PINNED_RESULTS, REPO_ROOT, TEST_BUILD_DIR

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

from connlab.lab.results_file import ResultsFile
from support.browser import CHROMIUM, CHROMIUM_ARGS, Watched, serving, watched_page
from support.built_site import (
    SHARED_SITE_BUILD,
    SHARED_SITE_WITH_URL_BUILD,
    TEST_REPO_URL,
    TEST_SITE_URL,
    build_site,
)
from support.host import CgroupGuard, cgroup_v1_writable, is_root
from support.rows import RowFactory, RunWriter, complete_row, machine_facts

if TYPE_CHECKING:
    from playwright.sync_api import Browser

# The process markers and their check; pytester for the markers' own test.
pytest_plugins = ["support.process_markers", "pytester"]


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture
def golden_dir() -> Path:
    """pgbench's captured reports (tests/golden/pgbench); the other parsers' folders are beside it."""
    return GOLDEN_DIR / "pgbench"


# Session-scoped: pure factories, so that a module's fixture can write its results once for all its tests.
@pytest.fixture(scope="session")
def make_row() -> RowFactory:
    """A factory for complete rows: make_row(clients=4, tps=123.0)."""
    return complete_row


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
    tests (tests/lab/test_run_lock.py) hold this file to see a run refused."""
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


@pytest.fixture
def watched(request: pytest.FixtureRequest, browser: Browser) -> Iterator[Watched]:
    """A fresh page; JavaScript on unless parametrized indirectly with False."""
    with watched_page(browser, java_script_enabled=getattr(request, "param", True)) as w:
        yield w


@pytest.fixture(scope="session")
def docs_from_fixtures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """build/docs rendered from the committed facts fixture (tests/fixtures/facts_before): every page the
    site's templates make, for tests that convert them."""
    from connlab.site.render.all_pages import render_site

    data = tmp_path_factory.mktemp("data")
    shutil.copytree(FACTS_BEFORE, data, dirs_exist_ok=True)
    docs = tmp_path_factory.mktemp("docs")
    render_site(data, docs)
    return docs


@pytest.fixture(scope="session")
def built_site() -> Path:
    """The static site built from tests/fixtures/results, or the one CONNLAB_SITE_DIR names."""
    if "CONNLAB_SITE_DIR" in os.environ:
        return Path(os.environ["CONNLAB_SITE_DIR"])
    SHARED_SITE_BUILD.mkdir(parents=True, exist_ok=True)
    with (TEST_BUILD_DIR / "site.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return build_site(PINNED_RESULTS, SHARED_SITE_BUILD)


@pytest.fixture(scope="session")
def built_site_with_url() -> Path:
    """The static site built from tests/fixtures/results with SITE_URL set to TEST_SITE_URL and REPO_URL to
    TEST_REPO_URL."""
    SHARED_SITE_WITH_URL_BUILD.mkdir(parents=True, exist_ok=True)
    with (TEST_BUILD_DIR / "site-with-url.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return build_site(PINNED_RESULTS, SHARED_SITE_WITH_URL_BUILD, TEST_SITE_URL, TEST_REPO_URL)


@pytest.fixture(scope="session")
def site_url(built_site: Path) -> Iterator[str]:
    with serving(built_site) as url:
        yield url


@pytest.fixture(scope="session")
def instant_site_url(built_site_with_url: Path) -> Iterator[str]:
    """Where the site built with an address is served: the one with Material's instant navigation on."""
    with serving(built_site_with_url) as url:
        yield url
