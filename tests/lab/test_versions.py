"""Several PostgreSQL versions in one run: the plan interleaves them, one server runs at a time, and the
rows say which version each window measured."""

from __future__ import annotations

import csv
import subprocess
import sys
import threading
from pathlib import Path

import psutil
import pytest
from pydantic import ValidationError

from connlab.contract.experiment import Experiment, load_experiment, make_plan
from connlab.lab import host, pg_dist
from support.paths import REPO_ROOT


def test_each_workload_runs_on_each_version_interleaved_at_every_point() -> None:
    plan = make_plan("pg-versions", "full", server_cores=2)
    versions = load_experiment("pg-versions").server.versions
    assert len(versions) >= 2
    windows = plan.windows()
    for pass_no in (1, 2, 3):
        for clients in plan.client_counts:
            at_point = [w for w in windows if w.pass_no == pass_no and w.clients == clients]
            assert {w.workload.postgres for w in at_point} == set(versions), (pass_no, clients)
    mixed = {w.workload.id: w.workload.postgres for w in windows if w.workload.id.startswith("mixed-")}
    assert mixed == {f"mixed-pg{major}": major for major in versions}


def test_a_plain_experiment_has_no_version_per_workload() -> None:
    plan = make_plan("clients-sweep", "quick", server_cores=1)
    assert {w.workload.postgres for w in plan.windows()} == {None}


def _spec(**server: object) -> dict[str, object]:
    data = load_experiment("pg-versions").model_dump(mode="json")
    data["server"] = {**data["server"], **server}
    return data


def test_a_version_listed_twice_is_refused() -> None:
    with pytest.raises(ValidationError, match="listed twice"):
        Experiment.model_validate(_spec(versions=[15, 15]))


def test_versions_through_a_pooler_are_refused() -> None:
    data = _spec()
    data["poolers"] = [{"kind": "pgbouncer"}]
    with pytest.raises(ValidationError, match="through a pooler"):
        Experiment.model_validate(data)


@pytest.fixture(scope="module")
def version_builds() -> list[int]:
    versions = load_experiment("pg-versions").server.versions
    try:
        for major in versions:
            pg_dist.ensure(major, host.as_server_user)
    except pg_dist.FetchError as error:
        pytest.skip(f"a pinned PostgreSQL build cannot be fetched on this machine: {error}")
    return versions


class PostmasterWatch:
    """Polls the processes every 50 ms for postmasters of the run's lab: the most seen at once."""

    def __init__(self, lab_dir: Path) -> None:
        self.lab_dir = str(lab_dir)
        self.most_at_once = 0
        self.data_dirs: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            running = set()
            for process in psutil.process_iter(["name", "cmdline"]):
                command = process.info["cmdline"] or []
                if process.info["name"] == "postgres" and "-D" in command:
                    data_dir = command[command.index("-D") + 1]
                    if data_dir.startswith(self.lab_dir):
                        running.add(data_dir)
            self.data_dirs |= running
            self.most_at_once = max(self.most_at_once, len(running))

    def __enter__(self) -> PostmasterWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@pytest.mark.e2e
@pytest.mark.usefixtures("require_root")
def test_tiny_run_over_two_versions_runs_one_server_at_a_time(
    version_builds: list[int], connlab_env: dict[str, str]
) -> None:
    command = [sys.executable, "-m", "connlab.cli", "run", "pg-versions", "--profile", "tiny",
               "--machine", "versions-box"]  # fmt: skip
    with PostmasterWatch(Path(connlab_env["CONNLAB_BUILD_DIR"])) as watch:
        result = subprocess.run(
            command, cwd=REPO_ROOT, env=connlab_env, capture_output=True, text=True, timeout=600, check=False
        )
    assert result.returncode == 0, result.stderr
    assert len(watch.data_dirs) == len(version_builds), watch.data_dirs
    assert watch.most_at_once == 1

    results = Path(connlab_env["CONNLAB_RESULTS_DIR"]) / "versions-box"
    [csv_file] = (results / "pg-versions").glob("*.csv")
    with csv_file.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows and all(row["ok"] == "true" for row in rows), [row["error"] for row in rows]
    for row in rows:
        major = int(row["workload"].rsplit("-pg", 1)[1])
        assert row["postgres_version"].split(".")[0] == str(major), row
    assert {row["postgres_version"].split(".")[0] for row in rows} == {str(v) for v in version_builds}
