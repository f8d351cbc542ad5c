"""A tiny-profile run of one experiment through the command line, as the end-to-end tests of the pooler
versions experiments start theirs: it must exit 0 and write one row per window of the plan."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

from connlab.contract.experiment import make_plan
from connlab.paths import REPO_ROOT


def tiny_run_by_workload(
    experiment: str, machine: str, env: dict[str, str]
) -> tuple[Path, dict[str, dict[str, str]]]:
    """Run the experiment's tiny profile into results/<machine>/; its run file and its rows by workload
    (each workload runs once in the tiny profiles these tests use)."""
    result = subprocess.run(
        [sys.executable, "-m", "connlab.cli", "run", experiment, "--profile", "tiny", "--machine", machine],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    [path] = sorted((Path(env["CONNLAB_RESULTS_DIR"]) / machine / experiment).glob("*.csv"))
    with path.open(newline="") as handle:
        rows = {row["workload"]: row for row in csv.DictReader(handle)}
    assert len(rows) == len(make_plan(experiment, "tiny").windows())
    return path, rows
