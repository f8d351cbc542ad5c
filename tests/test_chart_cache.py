"""Charts made once per distinct input (connlab.site.chart_cache, chart_book): a second render builds and
draws nothing, changed records build again, and the page gets the same block either way."""

from __future__ import annotations

from pathlib import Path

import pytest

from connlab.site import chart_cache
from connlab.site.chart_book import ChartBook
from connlab.site.chart_cache import ChartCache

RECORDS = [
    {"workload": "mixed", "clients": n, "tps_median": 100.0 * n, "tps_min": 90.0 * n, "tps_max": 110.0 * n}
    for n in (1, 2, 4)
]


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many specs were built and SVGs drawn (the real functions still run)."""
    calls = {"spec": 0, "svg": 0}
    build_spec, render_svg = chart_cache.build_spec, chart_cache.render_svg

    def counting_spec(job: tuple) -> dict:
        calls["spec"] += 1
        return build_spec(job)

    def counting_svg(spec: dict) -> str:
        calls["svg"] += 1
        return render_svg(spec)

    monkeypatch.setattr(chart_cache, "build_spec", counting_spec)
    monkeypatch.setattr(chart_cache, "render_svg", counting_svg)
    return calls


def render_once(tmp_path: Path, records: list[dict]) -> tuple[str, ChartBook]:
    book = ChartBook(tmp_path / "docs" / "charts", cache=ChartCache(tmp_path / "cache", workers=1))
    placeholder = book.request("demo", "throughput_vs_clients", records, "Caption.", "Alt.", "../charts/")
    page = tmp_path / "docs" / "page.md"
    return book.resolve({page: f"before\n\n{placeholder}\n\nafter\n"})[page], book


def test_a_second_render_builds_and_draws_nothing(tmp_path: Path, counted: dict[str, int]) -> None:
    first, _ = render_once(tmp_path, RECORDS)
    assert counted == {"spec": 1, "svg": 1}
    second, book = render_once(tmp_path, RECORDS)
    assert counted == {"spec": 1, "svg": 1}
    assert first == second
    assert first.startswith("before\n\n<figure") and first.endswith("</figure>\n\nafter\n")
    charts = tmp_path / "docs" / "charts"
    assert book.files == {charts / "demo.csv", charts / "demo.vl.json", charts / "demo.svg"}
    assert (charts / "demo.svg").read_text().startswith("<svg")


def test_changed_records_build_a_new_chart(tmp_path: Path, counted: dict[str, int]) -> None:
    render_once(tmp_path, RECORDS)
    changed = [{**RECORDS[0], "tps_median": 123.0}, *RECORDS[1:]]
    page, _ = render_once(tmp_path, changed)
    assert counted == {"spec": 2, "svg": 2}
    assert "123" in (tmp_path / "docs" / "charts" / "demo.csv").read_text()
    assert '"tps_median":123.0' in page


def test_the_spec_key_names_kind_and_records() -> None:
    cache = ChartCache(Path("unused"))
    key = cache.spec_key("throughput_vs_clients", RECORDS)
    assert key == cache.spec_key("throughput_vs_clients", [dict(reversed(r.items())) for r in RECORDS])
    assert key != cache.spec_key("latency_vs_clients", RECORDS)
    assert key != cache.spec_key("throughput_vs_clients", RECORDS[:2])
