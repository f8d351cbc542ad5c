"""The Makefile's site stages: make runs every due stage in one `connlab build`, and a build that fails leaves
the stages to run again.

The Makefile runs here in a bare folder with a stand-in for connlab that writes down each command line it is
given; what the stages themselves do is tested against the real site elsewhere (every `make site` of the
suite runs `connlab build`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from support.paths import REPO_ROOT

SKIP_SETUP = ["-o", ".venv/.installed", "-o", "node_modules/.installed"]
# The tree's own results/ and build/: the tests' folders (conftest) would move both elsewhere.
# The settings `make test` exports to the suite are the outer tree's; each test's make reads its own.
OUTER_SETTINGS = ("CONNLAB_RESULTS_DIR", "CONNLAB_BUILD_DIR", "CONNLAB_SITE_URL", "CONNLAB_REPO_URL")
TREE_ENV = {k: v for k, v in os.environ.items() if k not in OUTER_SETTINGS}
STAND_IN = """#!/bin/bash
echo "$*" >> calls.log
mkdir -p build/data build/docs build/site
exit "${STAND_IN_STATUS:-0}"
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    shutil.copy(REPO_ROOT / "Makefile", tmp_path / "Makefile")
    for folder in ("results/m1/clients-sweep", "experiments/clients-sweep", "site_src/pages", "scripts"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "results/m1/clients-sweep/runs.csv").write_text("a\n")
    (tmp_path / "experiments/clients-sweep/experiment.yaml").write_text("name: clients-sweep\n")
    (tmp_path / "site_src/pages/index.md.j2").write_text("# Home\n")
    (tmp_path / "mkdocs.yml").write_text("site_name: x\n")
    stand_in = tmp_path / "connlab"
    stand_in.write_text(STAND_IN)
    stand_in.chmod(0o755)
    return tmp_path


def make(tree: Path, goal: str, status: int = 0, *settings: str) -> list[str]:
    """The connlab command lines `make <goal>` ran, in order."""
    log = tree / "calls.log"
    log.unlink(missing_ok=True)
    result = subprocess.run(
        ["make", "--no-print-directory", *SKIP_SETUP, goal, f"CONNLAB={tree / 'connlab'}", *settings],
        cwd=tree, capture_output=True, text=True, env={**TREE_ENV, "STAND_IN_STATUS": str(status)},
    )  # fmt: skip
    assert (result.returncode == 0) == (status == 0), result.stdout + result.stderr
    return log.read_text().splitlines() if log.exists() else []


def aged(tree: Path) -> None:
    """Every file made older, the stamps a little less: whatever changes next is newer than every stamp,
    whatever the file system's time resolution."""
    now = time.time()
    for path in tree.rglob("*"):
        age = 10 if path.match("build/*/.*") else 20
        os.utime(path, (now - age, now - age))


def touch(tree: Path, name: str) -> None:
    """The file changed since the last build."""
    aged(tree)
    (tree / name).touch()


@pytest.mark.mkdocs
def test_a_first_site_build_runs_every_stage_in_one_process(tree: Path) -> None:
    assert make(tree, "site") == ["build aggregate render site"]
    assert make(tree, "site") == []


@pytest.mark.mkdocs
def test_only_the_stages_after_a_change_run(tree: Path) -> None:
    make(tree, "site")
    touch(tree, "site_src/pages/index.md.j2")
    assert make(tree, "site") == ["build render site"]
    touch(tree, "mkdocs.yml")
    assert make(tree, "site") == ["build site"]
    touch(tree, "results/m1/clients-sweep/runs.csv")
    assert make(tree, "site") == ["build aggregate render site"]


@pytest.mark.mkdocs
def test_a_goal_short_of_the_site_runs_its_own_stages(tree: Path) -> None:
    assert make(tree, "aggregate") == ["aggregate --validate"]
    touch(tree, "results/m1/clients-sweep/runs.csv")
    assert make(tree, "articles") == ["build aggregate render"]
    assert make(tree, "site") == ["build site"]


@pytest.mark.mkdocs
def test_a_failed_build_leaves_its_stages_to_run_again(tree: Path) -> None:
    make(tree, "site")
    touch(tree, "results/m1/clients-sweep/runs.csv")
    assert make(tree, "site", status=1) == ["build aggregate render site"]
    # Nothing changed since: the stages that were due are due still.
    assert make(tree, "site") == ["build aggregate render site"]
    assert make(tree, "site") == []


@pytest.mark.mkdocs
def test_an_unknown_stage_is_named_in_one_line() -> None:
    result = subprocess.run(
        [str(REPO_ROOT / ".venv/bin/connlab"), "build", "render", "publish"],
        cwd=REPO_ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip() == "error: no stage named publish: the stages are aggregate, render, site"


@pytest.mark.mkdocs
def test_results_added_removed_or_moved_in_with_old_times_make_the_aggregation_due(tree: Path) -> None:
    """make no longer lists every results file: whatever changes under results/ (a file removed, a folder
    moved in whose files keep their old times, a file edited in place) shows in a time newer than the
    stamp's, a file's or its folder's."""
    make(tree, "site")
    aged(tree)
    (tree / "results/m1/clients-sweep/runs.csv").unlink()
    assert make(tree, "site") == ["build aggregate render site"]
    moved = tree / "elsewhere/m2/clients-sweep"
    moved.mkdir(parents=True)
    (moved / "runs.csv").write_text("a\n")
    aged(tree)
    assert make(tree, "site") == []
    moved.parent.rename(tree / "results/m2")
    assert make(tree, "site") == ["build aggregate render site"]
    assert make(tree, "site") == []
    aged(tree)
    with (tree / "results/m2/clients-sweep/runs.csv").open("a") as edited:
        edited.write("b\n")
    assert make(tree, "site") == ["build aggregate render site"]


@pytest.mark.mkdocs
def test_a_change_in_any_share_of_the_results_folders_makes_the_aggregation_due(tree: Path) -> None:
    """The results folders are walked in shares, several at once: a file edited in any folder of any share
    is found (the shares here are two folders each, so some folder is second in its share)."""
    machines = ["m1", "m2", "m3", "m4", "m5"]
    for machine in machines[1:]:
        (tree / "results" / machine / "clients-sweep").mkdir(parents=True)
        (tree / "results" / machine / "clients-sweep" / "runs.csv").write_text("a\n")
    in_twos = "RESULTS_SHARE=2"
    make(tree, "site", 0, in_twos)
    for machine in machines:
        aged(tree)
        assert make(tree, "site", 0, in_twos) == []
        with (tree / "results" / machine / "clients-sweep" / "runs.csv").open("a") as handle:
            handle.write("b\n")
        assert make(tree, "site", 0, in_twos) == ["build aggregate render site"], machine


@pytest.mark.mkdocs
def test_a_new_site_url_makes_the_site_stage_due(tree: Path) -> None:
    """SITE_URL is written into every page (canonical link, sitemap): building at another address, or at none
    again, rebuilds the site, and the same address twice does not."""
    make(tree, "site")
    assert make(tree, "site", 0, "SITE_URL=https://example.org/connlab/") == ["build site"]
    assert make(tree, "site", 0, "SITE_URL=https://example.org/connlab/") == []
    assert make(tree, "site") == ["build site"]
    assert make(tree, "site") == []


@pytest.mark.mkdocs
def test_a_new_repository_makes_the_render_and_site_stages_due(tree: Path) -> None:
    """REPO_URL, or else the clone's origin remote, is in every page's header and in the pages that say
    `git clone`: another repository, or none again, renders and builds the site; the same one twice does
    not. The setting's file is the one SITE_URL uses, one per setting."""
    make(tree, "site")
    assert make(tree, "site", 0, "REPO_URL=https://example.org/owner/lab") == ["build render site"]
    assert make(tree, "site", 0, "REPO_URL=https://example.org/owner/lab") == []
    assert (tree / "build" / ".setting-REPO_URL").read_text() == "https://example.org/owner/lab"
    assert make(tree, "site") == ["build render site"]
    subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
    subprocess.run(["git", "remote", "add", "origin", "git@example.org:owner/lab.git"], cwd=tree, check=True)
    assert make(tree, "site") == ["build render site"]
    assert make(tree, "site") == []
    assert (tree / "build" / ".setting-REPO_URL").read_text() == "git@example.org:owner/lab.git"
