"""End to end on a real throwaway cluster: `connlab run` of the tiny profile, the site built from its
results, an interrupted run that cleans up and resumes, and the one-line errors of a bad set-up.

Every run gets temporary results and build folders through CONNLAB_RESULTS_DIR and CONNLAB_BUILD_DIR; the
repository's results/ and build/ are never touched.
"""

from __future__ import annotations

import csv
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING

import psutil
import pytest
import yaml

from connlab.contract.columns import COLUMN_NAMES
from connlab.contract.experiment import make_plan, window_options
from connlab.contract.facts_files import read_facts
from connlab.errors import LabError
from connlab.lab import cluster as cluster_module
from connlab.lab.cluster import Cluster
from support.helpers import connlab
from support.paths import REPO_ROOT

if TYPE_CHECKING:
    from support.host import CgroupGuard

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("require_root", "require_postgres")]

MACHINE = "e2e-box"
EXPERIMENT = "clients-sweep"
PLANNED_WINDOWS = 18  # 3 passes x 2 client counts x 3 workloads
RUN_TIMEOUT_S = 300


def run_tiny(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return connlab("run", EXPERIMENT, "--profile", "tiny", "--machine", MACHINE, env=env)


def results_folder(env: dict[str, str]) -> Path:
    return Path(env["CONNLAB_RESULTS_DIR"]) / MACHINE / EXPERIMENT


def read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1:]


def the_csv(env: dict[str, str]) -> Path:
    files = sorted(results_folder(env).glob("*.csv"))
    assert len(files) == 1, files
    return files[0]


def processes_using(path: Path) -> list[str]:
    """Command lines of live processes that mention path (a server or pgbench of a lab cluster)."""
    found = []
    for process in psutil.process_iter(["pid", "cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if str(path) in cmdline and process.info["pid"] != os.getpid():
            found.append(f"{process.info['pid']}: {cmdline}")
    return found


def lab_clusters(env: dict[str, str]) -> list[Path]:
    lab = Path(env["CONNLAB_BUILD_DIR"]) / "lab"
    return sorted(lab.iterdir()) if lab.exists() else []


def check_complete_run(env: dict[str, str], path: Path) -> list[dict[str, str]]:
    header, raw = read_csv(path)
    assert header == list(COLUMN_NAMES)
    assert all(len(row) == len(header) for row in raw)
    rows = [dict(zip(header, row, strict=True)) for row in raw]
    assert len(rows) == PLANNED_WINDOWS
    keys = {(row["pass_no"], row["workload"], row["clients"]) for row in rows}
    assert len(keys) == PLANNED_WINDOWS
    assert sorted(int(row["window_no"]) for row in rows) == list(range(1, PLANNED_WINDOWS + 1))
    assert {row["run_id"] for row in rows} == {path.stem}
    assert {row["machine"] for row in rows} == {MACHINE}
    return rows


class FallbackImages(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.sources: list[str] = []
        self.downloads: list[str] = []
        self.offered_by_script: list[str] = []  # download names with no address until charts.js gives one

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "img" and "connlab-chart__fallback" in (values.get("class") or ""):
            self.sources.append(values.get("src") or "")
        if tag == "a" and "download" in values:
            if "href" in values:
                self.downloads.append(values.get("href") or "")
            else:
                self.offered_by_script.append(values.get("download") or "")


# -- (a) a full run, then the whole site from its results -------------------------------------------------
@pytest.mark.mkdocs
def test_run_then_build_the_site(
    connlab_env: dict[str, str], shared_tmp: Path, cgroup_guard: CgroupGuard
) -> None:
    result = run_tiny(connlab_env)
    assert result.returncode == 0, result.stderr
    assert "resuming" not in result.stderr

    rows = check_complete_run(connlab_env, the_csv(connlab_env))
    assert all(row["ok"] == "true" for row in rows), [row["error"] for row in rows if row["ok"] != "true"]
    assert all(float(row["tps"]) > 0 for row in rows)
    plan = make_plan(EXPERIMENT, "tiny")
    assert {row["spec_hash"] for row in rows} == {plan.spec_hash}
    workloads = {workload.id: workload for workload in plan.spec.workloads}
    for row, window in zip(sorted(rows, key=lambda r: int(r["window_no"])), plan.windows(), strict=True):
        key = (int(row["pass_no"]), row["workload"], int(row["clients"]), float(row["server_cpu_budget"]))
        assert key == window.key
        expected = window_options(
            plan, workloads[row["workload"]], int(row["clients"]), jobs=int(row["client_cores"])
        ).flags()
        assert row["pgbench_flags"] == " ".join(expected)

    machine_file = Path(connlab_env["CONNLAB_RESULTS_DIR"]) / MACHINE / "machine.yaml"
    machine = yaml.safe_load(machine_file.read_text())
    assert machine["id"] == MACHINE
    assert machine["profile"] == "tiny"
    assert machine["postgres_version"]
    assert machine["cpu_budget_method"] == rows[0]["cpu_budget_method"]

    # The run cleaned up after itself and wrote nothing into the repository.
    assert lab_clusters(connlab_env) == []
    assert processes_using(shared_tmp / "build") == []
    assert cgroup_guard.added() == set()
    assert not (REPO_ROOT / "results" / MACHINE).exists()

    for stage in ("validate", "aggregate", "render"):
        result = connlab(stage, env=connlab_env, timeout=180)
        assert result.returncode == 0, f"connlab {stage}: {result.stdout}{result.stderr}"

    data = Path(connlab_env["CONNLAB_BUILD_DIR"]) / "data"
    facts = read_facts(data / "facts", "too-many-connections")
    assert {row["machine"] for row in facts["sweep_machines"]} == {MACHINE}
    docs = Path(connlab_env["CONNLAB_BUILD_DIR"]) / "docs"
    assert (docs / "articles" / "too-many-connections.md").is_file()

    # The site as `make site` publishes it: MkDocs builds the human pages, and the machine pages are stamped
    # into its shell (a bare `mkdocs build` writes no machine page).
    result = connlab("site", env=connlab_env, timeout=180)
    assert result.returncode == 0, f"connlab site: {result.stdout}{result.stderr}"
    site = Path(connlab_env["CONNLAB_BUILD_DIR"]) / "site"

    page = site / "articles" / "too-many-connections" / "index.html"
    text = page.read_text()
    assert MACHINE in text
    # The article: all machines normalised on one chart, with an SVG fallback that exists. The machine's
    # own page: its throughput and latency charts, drawn in the browser, with their data downloads.
    machine_page = site / "machines" / MACHINE / "index.html"
    for shown, least, svg in ((page, 1, True), (machine_page, 2, False)):
        images = FallbackImages()
        images.feed(shown.read_text())
        assert len(images.sources) >= least if svg else images.sources == [], shown
        for source in images.sources:
            assert source.endswith(".svg")
            assert (shown.parent / source).resolve().is_file(), source
        assert all((shown.parent / href).resolve().is_file() for href in images.downloads), shown
        csvs = [href for href in images.downloads if href.endswith(".csv")]
        # A machine page's charts offer their rows and spec from the page (charts.js), with no file beside
        # them; an article's are files.
        offered = images.offered_by_script
        if svg:
            assert len(csvs) >= least and offered == [], shown
        else:
            assert csvs == [], shown
            assert len([name for name in offered if name.endswith(".csv")]) >= least, shown
            assert len([name for name in offered if name.endswith(".vl.json")]) >= least, shown
            assert all(not (site / "charts" / name).exists() for name in offered), shown


# -- (b) SIGTERM in the middle, then resume ---------------------------------------------------------------
@pytest.fixture
def background_run(connlab_env: dict[str, str], shared_tmp: Path) -> Iterator[subprocess.Popen[str]]:
    log = (shared_tmp / "run.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "connlab.cli", "run", EXPERIMENT, "--profile", "tiny", "--machine", MACHINE],
        cwd=REPO_ROOT,
        env=connlab_env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        yield process
    finally:
        if process.poll() is None:  # the test failed half-way: do not leave the run behind
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        log.close()


def rows_written(env: dict[str, str]) -> int:
    files = sorted(results_folder(env).glob("*.csv"))
    return len(read_csv(files[0])[1]) if files else 0


def test_sigterm_cleans_up_and_the_rerun_resumes(
    connlab_env: dict[str, str],
    shared_tmp: Path,
    background_run: subprocess.Popen[str],
    cgroup_guard: CgroupGuard,
) -> None:
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while rows_written(connlab_env) < 3:
        assert background_run.poll() is None, (shared_tmp / "run.log").read_text()
        assert time.monotonic() < deadline, "the run wrote no 3 rows in time"
        time.sleep(0.2)
    background_run.send_signal(signal.SIGTERM)
    assert background_run.wait(timeout=120) == 130, (shared_tmp / "run.log").read_text()
    assert "interrupted" in (shared_tmp / "run.log").read_text()

    # Nothing of the run is left: no server, no pgbench, no cluster folder, no cgroup.
    assert processes_using(shared_tmp / "build") == []
    assert lab_clusters(connlab_env) == []
    assert cgroup_guard.added() == set()

    # Every row on disk is complete.
    path = the_csv(connlab_env)
    header, rows = read_csv(path)
    assert header == list(COLUMN_NAMES)
    assert 3 <= len(rows) < PLANNED_WINDOWS
    assert all(len(row) == len(header) for row in rows)
    interrupted_keys = {
        (row[header.index("pass_no")], row[header.index("workload")], row[header.index("clients")])
        for row in rows
    }

    result = run_tiny(connlab_env)
    assert result.returncode == 0, result.stderr
    assert "resuming" in result.stderr
    assert the_csv(connlab_env) == path  # the same run, continued
    resumed = check_complete_run(connlab_env, path)
    assert interrupted_keys <= {(row["pass_no"], row["workload"], row["clients"]) for row in resumed}
    assert all(row["ok"] == "true" for row in resumed)
    assert processes_using(shared_tmp / "build") == []
    assert cgroup_guard.added() == set()


# -- (c) a port that is in use ----------------------------------------------------------------------------
@pytest.fixture
def held_port() -> Iterator[int]:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def test_a_port_in_use_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, held_port: int) -> None:
    monkeypatch.setattr(cluster_module, "LAB_DIR", tmp_path / "lab")
    with pytest.raises(LabError, match="in use") as caught, Cluster("e2e-port", port=held_port):
        pass
    assert str(held_port) in str(caught.value)
    assert not (tmp_path / "lab" / "e2e-port").exists()


def test_connlab_port_in_use_is_one_error_line(
    connlab_env: dict[str, str], held_port: int, cgroup_guard: CgroupGuard
) -> None:
    result = run_tiny({**connlab_env, "CONNLAB_PORT": str(held_port)})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert "in use" in lines[0]
    assert lab_clusters(connlab_env) == []
    assert cgroup_guard.added() == set()


# -- (d) missing PostgreSQL binaries ----------------------------------------------------------------------
@pytest.mark.usefixtures("cgroup_guard")  # removes what a leaking run leaves; asserted below
def test_missing_binaries_are_one_error_line(connlab_env: dict[str, str]) -> None:
    result = run_tiny({**connlab_env, "PG_BINDIR": "/nonexistent"})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error:")
    assert "PG_BINDIR" in lines[0]
    assert "Traceback" not in result.stderr + result.stdout


def test_missing_binaries_leave_no_cgroup(connlab_env: dict[str, str], cgroup_guard: CgroupGuard) -> None:
    result = run_tiny({**connlab_env, "PG_BINDIR": "/nonexistent"})
    assert result.returncode == 2
    assert cgroup_guard.added() == set(), "the CPU budget of a run that never started was not released"


@pytest.mark.usefixtures("cgroup_guard")
@pytest.mark.parametrize("machine_id", ["../outside", "Bad Name"])
def test_an_unsafe_machine_id_is_refused_before_anything_runs(
    connlab_env: dict[str, str], machine_id: str
) -> None:
    """`--machine` (or MACHINE) names a folder under results/: an id that validate would reject, or one
    that leaves results/, must be refused up front. PG_BINDIR is broken on purpose so that, if the id is
    not checked first, the run stops at the binaries instead of measuring for a minute."""
    env = {**connlab_env, "PG_BINDIR": "/nonexistent"}
    result = connlab("run", EXPERIMENT, "--profile", "tiny", "--machine", machine_id, env=env)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert machine_id in lines[0], lines[0]


# -- (f) one workload now, the others later ---------------------------------------------------------------
def test_one_workload_now_and_the_rest_on_resume(connlab_env: dict[str, str]) -> None:
    """A long full profile can be measured a workload at a time: --workload measures that workload's windows
    only and says what it leaves; the same command without it resumes the file and measures the rest."""
    only = ["--workload", "select-only"]
    first = connlab("run", EXPERIMENT, "--profile", "tiny", "--machine", MACHINE, *only, env=connlab_env)
    assert first.returncode == 0, first.stderr
    assert "measuring select-only only: 12 window(s) of mixed, " in first.stderr, first.stderr
    path = the_csv(connlab_env)
    header, rows = read_csv(path)
    assert {row[header.index("workload")] for row in rows} == {"select-only"}
    assert len(rows) == PLANNED_WINDOWS // 3

    rest = run_tiny(connlab_env)
    assert rest.returncode == 0, rest.stderr
    said = " ".join(rest.stderr.split())  # rich wraps long lines where stderr is not a terminal
    assert f"({PLANNED_WINDOWS // 3} of {PLANNED_WINDOWS} windows done)" in said, rest.stderr
    assert the_csv(connlab_env) == path
    check_complete_run(connlab_env, path)


def test_an_unknown_workload_is_one_error_line(connlab_env: dict[str, str]) -> None:
    result = connlab(
        "run", EXPERIMENT, "--profile", "tiny", "--machine", MACHINE, "--workload", "nope", env=connlab_env
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert "clients-sweep has no workload 'nope'; its workloads: mixed, select-only, tpcb-like" in lines[0]
    assert not results_folder(connlab_env).exists()
