"""A machine that ran only the quick profile (what `make all` measures) gets a page like any other.

The quick profiles measure fewer points and workloads than the full ones; every table and claim a machine
page reads must still find what it needs, or say why not. The quick machine here is cut from the committed
full results of the measured machines that ran every experiment between them (the first articles' and the
pooler experiments were measured on two machines): only the windows its quick plan would run, in two passes.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from connlab.contract.experiment import experiment_names, make_plan
from connlab.site.layout import machine_fragment, stamped_sources
from support.paths import PINNED_RESULTS, REPO_ROOT

SOURCE_MACHINES = ("amd-epyc-2c-24g", "amd-epyc-2c-24g-2")
QUICK_MACHINE = "quick-only"
# Experiments added after the source machines were measured: the quick machine has none of their windows
# either, as a machine measured before them would not, and its page must still render.
ADDED_AFTER_THE_SOURCES = {"backend-memory", "pgbouncer-versions", "pgpool-versions"}


def quick_cut(results: Path) -> None:
    sources, target = [results / name for name in SOURCE_MACHINES], results / QUICK_MACHINE
    machine = yaml.safe_load((sources[0] / "machine.yaml").read_text())
    target.mkdir()
    (target / "machine.yaml").write_text(yaml.safe_dump({**machine, "id": QUICK_MACHINE, "profile": "quick"}))
    for experiment in experiment_names():
        plan = make_plan(experiment, "quick", server_cores=1)
        keys = {(window.workload.id, window.clients) for window in plan.windows()}
        folder = next((source / experiment for source in sources if (source / experiment).is_dir()), None)
        if experiment in ADDED_AFTER_THE_SOURCES:
            assert folder is None, f"{experiment} is measured now: cut it like the others"
            continue
        assert folder is not None, f"no source machine measured {experiment}"
        files = sorted(folder.glob("full-*.csv")) or sorted(folder.glob("*.csv"))
        with files[-1].open(newline="") as handle:
            rows = list(csv.DictReader(handle))
        kept = [r for r in rows if (r["workload"], int(r["clients"])) in keys and int(r["pass_no"]) <= 2]
        assert kept, experiment
        run_id = "quick-20261201T000000Z"
        for row in kept:
            row.update(machine=QUICK_MACHINE, profile="quick", run_id=run_id)
        (target / experiment).mkdir()
        with (target / experiment / f"{run_id}.csv").open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
            writer.writeheader()
            writer.writerows(kept)


@pytest.mark.process
def test_a_quick_only_machine_aggregates_and_renders(tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(PINNED_RESULTS, results)
    quick_cut(results)
    env = {**os.environ, "CONNLAB_RESULTS_DIR": str(results), "CONNLAB_BUILD_DIR": str(tmp_path / "build")}
    for stage in ("validate", "aggregate", "render"):
        done = subprocess.run(
            [sys.executable, "-m", "connlab.cli", stage],
            cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert done.returncode == 0, f"{stage}: {done.stdout}{done.stderr}"
    # A machine page is an HTML fragment the site's shell is stamped with (connlab.site.render).
    page = (stamped_sources(tmp_path / "build" / "docs") / machine_fragment(QUICK_MACHINE)).read_text()
    assert "quick profile" in page
    for article in ("Four poolers compared", "PgBouncer's trade"):
        assert re.search(rf'From <a href="[^"]+">{re.escape(article)}</a>', page), article
