"""The documentation keeps up with the project: every experiment is in the README, every Makefile target
has a `## target:` help line (what `make help` prints)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from connlab.contract.experiment import experiment_names


def phony_targets(makefile: str) -> list[str]:
    targets: list[str] = []
    for line in makefile.splitlines():
        if line.startswith(".PHONY:"):
            targets += line.removeprefix(".PHONY:").split()
    return targets


def test_every_experiment_is_in_the_readme(repo_root: Path) -> None:
    readme = repo_root / "README.md"
    if not readme.exists():
        pytest.skip("README.md does not exist yet")
    text = readme.read_text()
    names = experiment_names()
    assert names, "no experiments found"
    missing = [name for name in names if not re.search(rf"`{re.escape(name)}`|\b{re.escape(name)}\b", text)]
    assert missing == [], f"experiments not described in README.md: {missing}"


def test_every_phony_target_has_a_help_line(repo_root: Path) -> None:
    makefile = (repo_root / "Makefile").read_text()
    targets = phony_targets(makefile)
    assert "help" in targets and "test" in targets
    documented = set(re.findall(r"^## ([A-Za-z0-9_.-]+):", makefile, flags=re.M))
    missing = [target for target in targets if target not in documented]
    assert missing == [], f"Makefile targets without a `## target:` help line: {missing}"


def test_help_lines_name_real_targets(repo_root: Path) -> None:
    makefile = (repo_root / "Makefile").read_text()
    documented = re.findall(r"^## ([A-Za-z0-9_.-]+):", makefile, flags=re.M)
    defined = set(re.findall(r"^([A-Za-z0-9_.-]+):", makefile, flags=re.M))
    assert [target for target in documented if target not in defined] == []
