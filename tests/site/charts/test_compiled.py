"""The machine pages' chart kinds compiled to Vega at build time (connlab.site.charts.compiled): once per set
of inputs, kept in the cache by their digest, written as one asset per variant that every page names, and
only for charts drawn in the browser from a template."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from connlab.data.aggregate import aggregate_all
from connlab.site.charts import cache as chart_cache
from connlab.site.charts import compiled as compiled_charts
from connlab.site.charts.book import ChartBook
from connlab.site.charts.cache import ChartCache
from connlab.site.charts.compiled import KINDS, VARIANTS
from connlab.site.charts.usl import usl_template
from connlab.site.layout import COMPILED_CHARTS_SUBDIR, machine_fragment, stamped_sources
from connlab.site.publish.build import sync
from support.helpers import render, sweep

if TYPE_CHECKING:
    from support.rows import RunWriter

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

RECORDS = [
    {"workload": "mixed", "clients": n, "tps_median": 100.0 * n, "tps_min": 90.0 * n, "tps_max": 110.0 * n}
    for n in (1, 2, 4)
]


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many jobs each run of node compiled (the real compile still runs); a fresh set name per test."""
    runs: list[int] = []
    compile_specs = compiled_charts.compile_specs

    def counting(jobs: list[dict]) -> list[dict]:
        runs.append(len(jobs))
        return compile_specs(jobs)

    monkeypatch.setattr(compiled_charts, "compile_specs", counting)
    compiled_charts.set_name.cache_clear()
    compiled_charts.compiler_digest.cache_clear()
    yield runs
    compiled_charts.set_name.cache_clear()
    compiled_charts.compiler_digest.cache_clear()


@pytest.mark.process
def test_every_kind_is_compiled_once_per_variant_and_kept_by_its_digest(
    tmp_path: Path, compiles: list[int]
) -> None:
    first = compiled_charts.compiled_set(tmp_path)
    assert compiles == [len(KINDS) * len(VARIANTS)], "one run of node for every kind and variant"
    assert sorted(first) == sorted(variant.name for variant in VARIANTS)
    assert all(sorted(kinds) == sorted(KINDS) for kinds in first.values())
    assert compiled_charts.compiled_set(tmp_path) == first
    assert compiles == [len(KINDS) * len(VARIANTS)], "compiled again though nothing changed"
    assert [path.stem for path in (tmp_path / compiled_charts.CACHE_SUBDIR).iterdir()] == [
        compiled_charts.set_name()
    ]


@pytest.mark.process
def test_a_damaged_set_is_compiled_again(tmp_path: Path, compiles: list[int]) -> None:
    first = compiled_charts.compiled_set(tmp_path)
    kept = tmp_path / compiled_charts.CACHE_SUBDIR / f"{compiled_charts.set_name()}.json"
    kept.write_text(kept.read_text()[:100], encoding="utf-8")  # cut short, as by a crash mid-write
    assert compiled_charts.compiled_set(tmp_path) == first
    assert len(compiles) == 2


@pytest.mark.process
def test_a_new_compiler_makes_a_new_set(
    tmp_path: Path, compiles: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    compiled_charts.compiled_set(tmp_path)
    before = compiled_charts.set_name()
    versions = compiled_charts.compiler_versions()
    monkeypatch.setattr(compiled_charts, "compiler_versions", lambda: {**versions, "vega-lite": "99.0.0"})
    compiled_charts.set_name.cache_clear()
    compiled_charts.compiler_digest.cache_clear()
    compiled_charts.compiled_set(tmp_path)
    assert compiled_charts.set_name() != before
    assert len(compiles) == 2


@pytest.mark.process
def test_a_compiled_kind_has_the_rows_data_and_the_params_signals(
    tmp_path: Path, compiles: list[int]
) -> None:
    """What charts.js fills in: every kind reads its rows from one Vega data named "rows"; the USL
    simulator's params are signals, its sliders bound; the theme and config are in the Vega itself."""
    compiled = compiled_charts.compiled_set(tmp_path)
    for variant, kinds in compiled.items():
        for kind, spec in kinds.items():
            assert [data["name"] for data in spec["data"]].count("rows") == 1, (variant, kind)
    signals = {signal["name"]: signal for signal in compiled["wide-light"]["usl_simulator"]["signals"]}
    for param in usl_template()["params"]:
        assert signals[param["name"]]["value"] == param["value"]
        assert signals[param["name"]].get("bind") == param.get("bind")
    dark, light = compiled["wide-dark"]["usl_simulator"], compiled["wide-light"]["usl_simulator"]
    assert dark["config"] != light["config"], "the dark theme is not compiled in"
    narrow = compiled["narrow-light"]["usl_simulator"]
    assert narrow["config"]["legend"]["orient"] == "bottom"
    fixed = compiled["wide-light-fixed"]["usl_simulator"]
    assert fixed["width"] == compiled_charts.MIN_PLOT_WIDTH


@pytest.mark.process
def test_the_assets_are_written_once_and_earlier_sets_removed(tmp_path: Path, compiles: list[int]) -> None:
    docs = tmp_path / "docs"
    folder = docs / COMPILED_CHARTS_SUBDIR
    folder.mkdir(parents=True)
    (folder / "an-earlier-set.wide-light.json").write_text("{}")
    written = compiled_charts.write_compiled_assets(docs, tmp_path / "cache")
    name = compiled_charts.set_name()
    assert sorted(path.name for path in folder.iterdir()) == sorted(
        [f"{name}.{v.name}.json" for v in VARIANTS] + [f"{name}.expressions.js"]
    )
    assert sorted(written) == sorted(folder.iterdir())
    times = {path: path.stat().st_mtime_ns for path in written}
    compiled_charts.write_compiled_assets(docs, tmp_path / "cache")
    assert {path: path.stat().st_mtime_ns for path in written} == times, "unchanged assets written again"
    assert len(compiles) == 1
    # The site loses an earlier set's assets too: publishing keeps what MkDocs wrote (here, the docs' assets).
    site = tmp_path / "site" / COMPILED_CHARTS_SUBDIR
    site.mkdir(parents=True)
    (site / "an-earlier-set.wide-light.json").write_text("{}")
    shutil.copy(written[0], site / written[0].name)
    sync(docs, tmp_path / "site", set())
    assert sorted(path.name for path in site.iterdir()) == sorted(path.name for path in written)


def figures(tmp_path: Path, requests: list[tuple[str, str, bool]]) -> list[str]:
    """The figure lines of charts (id, kind, svg) made by one ChartBook."""
    book = ChartBook(tmp_path / "docs" / "charts", cache=ChartCache(tmp_path / "cache", workers=1))
    placeholders = [
        book.request(chart_id, kind, RECORDS, "Caption.", "Alt.", "../charts/", svg)
        for chart_id, kind, svg in requests
    ]
    page = tmp_path / "docs" / "page.md"
    text = book.resolve({page: "\n\n".join(placeholders)})[page]
    return re.findall(r"<figure [^>]*>", text)


def plain_points(records: list[dict]) -> dict:
    """A kind built in full for every chart, from no template."""
    return {
        "data": {"values": records},
        "mark": "point",
        "encoding": {"x": {"field": "clients", "type": "quantitative"}},
    }


def test_the_charts_of_a_kind_name_the_shared_set(
    tmp_path: Path, compiles: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two machines' charts of a kind name the same set and kind, and so does an article's chart of that
    kind (with its SVG): one asset serves every page. A kind built in full keeps the Vega-Lite path."""
    monkeypatch.setitem(chart_cache.charts.KINDS, "plain_points", plain_points)
    lines = figures(
        tmp_path,
        [
            ("one-box", "throughput_vs_clients", False),
            ("other-box", "throughput_vs_clients", False),
            ("article", "throughput_vs_clients", True),
            ("in-full", "plain_points", False),
        ],
    )
    named = f'data-vega-set="{compiled_charts.set_name()}" data-vega-kind="throughput_vs_clients"'
    assert [named in line for line in lines] == [True, True, True, False]
    assert ["data-vega" in line for line in lines] == [True, True, True, False]
    assert compiles == [], "naming the set compiled it: a page worker must only hash"


@pytest.mark.slow
def test_a_new_set_renders_the_machine_pages_again(
    tmp_path: Path, write_run: RunWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page names the set, so a new compiler (an upgraded vega-lite, the same code) renders the pages
    again."""
    results, data, docs, cache = (tmp_path / name for name in ("results", "data", "docs", "cache"))
    write_run(results, "a-box", sweep(1.0), profile="full")
    aggregate_all(results_dir=results, out_dir=data)
    for name in ("one-set", "another-set"):
        monkeypatch.setattr(compiled_charts, "set_name", lambda name=name: name)
        monkeypatch.setattr(compiled_charts, "compiler_digest", lambda name=name: f"compiled by {name}")
        pages, rendered = render(data, docs, cache)
        assert rendered == {stamped_sources(docs) / machine_fragment("a-box")}, name
        assert f'data-vega-set="{name}"' in pages[stamped_sources(docs) / machine_fragment("a-box")]
