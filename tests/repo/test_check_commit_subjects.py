"""scripts/check_commit_subjects.py, which .ci/run calls, against throwaway repositories: the commits after
the pinned base have subjects of at most 72 characters and a blank second line; older ones are exempt."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from support.paths import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "check_commit_subjects.py"
GIT = ("git", "-c", "user.name=Test", "-c", "user.email=test@example.org", "-c", "commit.gpgsign=false")

pytestmark = pytest.mark.process  # git and the script


def git(repo: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def commit(repo: Path, message: str) -> str:
    """An empty commit whose message is exactly `message`; its short id."""
    (repo / ".message").write_text(message, encoding="utf-8")
    git(repo, "commit", "--allow-empty", "--cleanup=verbatim", "-q", "-F", ".message")
    return git(repo, "rev-parse", "--short", "HEAD")


def check(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose pinned base (in .ci/subjects-since) has a subject far over the limit."""
    git(tmp_path, "init", "-q")
    commit(tmp_path, "An old subject from before the rule, " + "much longer than seventy-two characters " * 3)
    (tmp_path / ".ci").mkdir()
    (tmp_path / ".ci" / "subjects-since").write_text(git(tmp_path, "rev-parse", "HEAD") + "\n")
    return tmp_path


def test_the_base_and_older_commits_are_exempt(repo: Path) -> None:
    result = check(repo)
    assert (result.returncode, result.stdout) == (0, "")


def test_subjects_of_up_to_72_characters_with_a_body_after_a_blank_line_pass(repo: Path) -> None:
    commit(repo, "x" * 72 + "\n")
    commit(
        repo, "A short subject\n\nThe reasoning, in the body,\nover several lines of any length " + "y" * 90
    )
    commit(repo, "é" * 72)  # characters, not bytes
    result = check(repo)
    assert (result.returncode, result.stdout) == (0, "")


def test_a_long_subject_fails_naming_the_commit_and_its_length(repo: Path) -> None:
    commit(repo, "A fine subject")
    long = commit(repo, "z" * 73 + "\n\nbody")
    commit(repo, "Another fine subject")
    result = check(repo)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [f"{long}: subject is 73 characters (at most 72)"]


def test_a_second_line_that_is_not_blank_fails(repo: Path) -> None:
    joined = commit(repo, "A subject that goes on\nonto a second line")
    both = commit(repo, "w" * 80 + "\nand a second line")
    result = check(repo)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        f"{joined}: the second line is not blank (a subject of one line, then a blank line)",
        f"{both}: subject is 80 characters (at most 72)",
        f"{both}: the second line is not blank (a subject of one line, then a blank line)",
    ]


def test_a_base_given_on_the_command_line_replaces_the_pinned_one(repo: Path) -> None:
    long = commit(repo, "v" * 100)
    assert check(repo).returncode == 1
    assert check(repo, long).returncode == 0
    assert check(repo, git(repo, "rev-parse", "HEAD~1")).stdout.startswith(f"{long}: ")


def test_a_base_missing_from_the_history_fails_saying_so(repo: Path) -> None:
    (repo / ".ci" / "subjects-since").write_text("0123456789abcdef0123456789abcdef01234567\n")
    result = check(repo)
    assert result.returncode == 1
    assert "not in this clone's history" in result.stdout


def test_the_pinned_base_is_a_commit_of_this_repository() -> None:
    base = (REPO_ROOT / ".ci" / "subjects-since").read_text().strip()
    assert len(base) == 40
    if (REPO_ROOT / ".git").exists():
        found = subprocess.run(["git", "cat-file", "-e", f"{base}^{{commit}}"], cwd=REPO_ROOT, check=False)
        assert found.returncode == 0, f".ci/subjects-since names {base}, which this repository lacks"
