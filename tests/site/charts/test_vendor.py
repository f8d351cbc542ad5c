"""The vendored chart JavaScript (connlab.site.charts.vendor): the pinned builds copied into the site,
once."""

from __future__ import annotations

from pathlib import Path

import pytest

from connlab.site.charts.vendor import NODE_MODULES, REQUIRED_BUILDS, copy_vendored_js
from support.paths import REPO_ROOT


@pytest.fixture
def installed() -> None:
    if not all((NODE_MODULES / pkg / rel).is_file() for pkg, rel in REQUIRED_BUILDS):
        pytest.skip(f"the Vega builds are not installed in {NODE_MODULES} (npm ci)")


@pytest.mark.usefixtures("installed")
def test_every_build_is_copied_once(tmp_path: Path) -> None:
    written = copy_vendored_js(tmp_path)
    for _, rel in REQUIRED_BUILDS:
        assert tmp_path / "vendor" / Path(rel).name in written
    mtimes = {path: path.stat().st_mtime_ns for path in written}
    (tmp_path / "vendor" / "dropped-build.js").write_text("old")
    copy_vendored_js(tmp_path)
    assert {path: path.stat().st_mtime_ns for path in written} == mtimes  # unchanged: not rewritten
    assert sorted((tmp_path / "vendor").iterdir()) == sorted(written)  # nothing stale left behind


@pytest.mark.usefixtures("installed")
def test_vega_embed_bundles_the_expression_interpreter() -> None:
    """charts.js passes `ast: true` and relies on vega-embed's own copy of vega-interpreter (CSP-safe)."""
    embed = (NODE_MODULES / "vega-embed" / "build" / "vega-embed.min.js").read_text(encoding="utf-8")
    assert "expressionInterpreter" in embed
    charts_js = (REPO_ROOT / "site_src" / "assets" / "charts.js").read_text()
    assert "ast: true" in charts_js


def test_missing_builds_say_what_to_run(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="run `npm ci`"):
        copy_vendored_js(tmp_path / "assets", node_modules=tmp_path / "empty")
