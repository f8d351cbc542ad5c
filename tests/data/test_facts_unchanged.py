"""The committed results aggregate to the same facts and claims as before the code was reshaped, and every
page renders from them.

tests/fixtures/facts_before/ holds what aggregation wrote from the committed results before the contract
layer, the pooler registry and the points view replaced the code that made them. Every figure on the site is
drawn from these files, so equal files mean the pages show the same figures. When a results file is added
on purpose, regenerate the fixture: `CONNLAB_BUILD_DIR=/tmp/x connlab aggregate` and copy build/data's
facts/, claims/ and machines.json here.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from connlab.contract.facts_files import read_facts
from connlab.data.aggregate import aggregate_all
from connlab.paths import ARTICLES_SRC_DIR, REPO_ROOT
from connlab.site.render.all_pages import render_site
from connlab.site.render.articles import load_articles
from support.paths import FACTS_BEFORE


@pytest.fixture(scope="module")
def aggregated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out_dir = tmp_path_factory.mktemp("data")
    aggregate_all(out_dir=out_dir)
    return out_dir


def _fixture_files() -> list[Path]:
    return sorted(path.relative_to(FACTS_BEFORE) for path in FACTS_BEFORE.rglob("*.json"))


def test_fixture_holds_every_facts_file() -> None:
    names = {str(path) for path in _fixture_files()}
    assert {"machines.json", "facts/too-many-connections.json", "facts/pool-sizing.json"} <= names


def _by_machine(facts: dict[str, list]) -> dict[str, dict[str, list]]:
    """Each fact's rows per machine, in order: an article's facts are read back from one file per machine
    (connlab.contract.facts_files), so only the order of rows within a machine is kept."""
    grouped: dict[str, dict[str, list]] = {}
    for name, rows in facts.items():
        for row in rows:
            grouped.setdefault(name, {}).setdefault(str(row.get("machine")), []).append(row)
    return grouped


# The USL fits are numerical optimisations: their last digits follow the CPU's vector instructions (NumPy
# takes other code paths where AVX-512 is present), and a fit's parameters carry a last-bit difference in a
# sum to the eighth significant digit. The site shows at most four; a millionth, relative, still catches
# any change of method or data.
RELATIVE_TOLERANCE = 1e-6
ABSOLUTE_TOLERANCE = 1e-12


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def differences(after: object, before: object, where: str = "") -> list[str]:
    """Where after differs from before: numbers within the tolerance are the same, all else must be equal."""
    if isinstance(after, dict) and isinstance(before, dict):
        if after.keys() != before.keys():
            return [f"{where}: keys {sorted(after.keys() ^ before.keys())}"]
        return [found for key in before for found in differences(after[key], before[key], f"{where}.{key}")]
    if isinstance(after, list) and isinstance(before, list):
        if len(after) != len(before):
            return [f"{where}: {len(after)} items, {len(before)} before"]
        pairs = enumerate(zip(after, before, strict=True))
        return [found for i, (a, b) in pairs for found in differences(a, b, f"{where}[{i}]")]
    if _number(after) and _number(before):
        close = math.isclose(after, before, rel_tol=RELATIVE_TOLERANCE, abs_tol=ABSOLUTE_TOLERANCE)  # type: ignore[arg-type]
        return [] if close else [f"{where}: {after!r}, {before!r} before"]
    return (
        [] if after == before and type(after) is type(before) else [f"{where}: {after!r}, {before!r} before"]
    )


def test_differences_hold_figures_to_a_millionth() -> None:
    before = {"fits": [{"kappa": 0.014898839234908262, "n": 3, "ok": True, "name": "a"}]}
    assert (
        differences({"fits": [{"kappa": 0.014898839234908264, "n": 3, "ok": True, "name": "a"}]}, before)
        == []
    )
    assert differences({"fits": [{"kappa": 0.0149, "n": 3, "ok": True, "name": "a"}]}, before)
    assert differences({"fits": [{"kappa": 0.014898839234908262, "n": 4, "ok": True, "name": "a"}]}, before)
    assert differences({"fits": [{"kappa": 0.014898839234908262, "n": 3, "ok": 1, "name": "a"}]}, before)
    assert differences({"fits": [{"kappa": 0.014898839234908262, "n": 3, "ok": True, "name": "b"}]}, before)
    assert differences({"fits": []}, before) and differences({}, before)


@pytest.mark.parametrize("relative", _fixture_files(), ids=str)
def test_same_as_before(aggregated: Path, relative: Path) -> None:
    before = json.loads((FACTS_BEFORE / relative).read_text())
    if relative.parts[0] == "facts":
        after = read_facts(aggregated / "facts", relative.stem)
        assert after.keys() == before.keys()
        assert differences(_by_machine(after), _by_machine(before)) == []
    else:
        assert differences(json.loads((aggregated / relative).read_text()), before) == []


@pytest.mark.process  # the charts are compiled by node
def test_every_article_and_page_renders_from_the_committed_results(aggregated: Path, tmp_path: Path) -> None:
    """Every template of site_src renders from what the committed results aggregate to, and every page it
    writes is listed in mkdocs.yml's nav (an article left out would be unreachable from the menu)."""
    docs = tmp_path / "docs"
    render_site(aggregated, docs)
    pages = sorted(str(path.relative_to(docs)) for path in docs.rglob("*.md"))
    articles = [template.name.removesuffix(".md.j2") for template in ARTICLES_SRC_DIR.glob("*.md.j2")]
    assert articles and all(f"articles/{slug}.md" in pages for slug in articles)
    for page in pages:
        assert (docs / page).read_text().strip(), page
    config = (REPO_ROOT / "mkdocs.yml").read_text()
    # The articles' menu entries come from their registry (connlab.site.publish.hooks), the rest from nav.
    nav = config.split("\nnav:\n", 1)[1] + "".join(article.page for article in load_articles())
    # Machine pages are reached from the Machines page and the picker; mkdocs.yml says so in not_in_nav.
    assert "/machines/*.md" in config.split("\nnav:\n", 1)[0]
    listed = [page for page in pages if not page.startswith("machines/")]
    assert [page for page in listed if page not in nav] == []
