"""mkdocs.yml: a generated page that no nav entry lists fails `mkdocs build --strict`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from support.paths import REPO_ROOT


class _IgnoreTags(yaml.SafeLoader):
    """Reads mkdocs.yml's !ENV and !!python tags as plain values."""


_IgnoreTags.add_multi_constructor("", lambda loader, suffix, node: None)


def project_validation() -> dict:
    return yaml.load((REPO_ROOT / "mkdocs.yml").read_text(), Loader=_IgnoreTags)["validation"]


def test_the_project_warns_on_omitted_pages() -> None:
    assert project_validation()["nav"]["omitted_files"] == "warn"


@pytest.mark.mkdocs
def test_a_page_left_out_of_the_nav_fails_the_strict_build(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n")
    (docs / "forgotten.md").write_text("# Forgotten\n")
    config = {
        "site_name": "nav check",
        "docs_dir": str(docs),
        "site_dir": str(tmp_path / "site"),
        "validation": project_validation(),
        "nav": ["index.md"],
    }
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(tmp_path / "mkdocs.yml")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode != 0
    assert "forgotten.md" in result.stdout + result.stderr
