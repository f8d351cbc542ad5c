"""Charts made once per distinct input (connlab.site.charts.cache, chart_book): a second render builds and
draws nothing, changed records build again, and the page gets the same block either way."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from connlab.interrupts import WorkerPool
from connlab.site.charts import cache as chart_cache
from connlab.site.charts import spec_template
from connlab.site.charts.book import ChartBook
from connlab.site.charts.cache import ChartCache
from connlab.site.charts.html import spec_text

RECORDS = [
    {"workload": "mixed", "clients": n, "tps_median": 100.0 * n, "tps_min": 90.0 * n, "tps_max": 110.0 * n}
    for n in (1, 2, 4)
]


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many specs were built and SVGs drawn (the real functions still run)."""
    calls = {"spec": 0, "templated": 0, "svg": 0}
    build_spec, render_svg = chart_cache.build_spec, chart_cache.render_svg
    templated_spec_text = chart_cache.templated_spec_text

    def counting_spec(job: tuple) -> dict:
        calls["spec"] += 1
        return build_spec(job)

    def counting_templated(kind: str, records: list[dict]) -> str:
        calls["templated"] += 1
        return templated_spec_text(kind, records)

    def counting_svg(spec: dict) -> str:
        calls["svg"] += 1
        return render_svg(spec)

    monkeypatch.setattr(chart_cache, "build_spec", counting_spec)
    monkeypatch.setattr(chart_cache, "render_svg", counting_svg)
    monkeypatch.setattr(chart_cache, "templated_spec_text", counting_templated)
    return calls


def render_once(
    tmp_path: Path, records: list[dict], kind: str = "throughput_vs_clients"
) -> tuple[str, ChartBook]:
    book = ChartBook(tmp_path / "docs" / "charts", cache=ChartCache(tmp_path / "cache", workers=1))
    placeholder = book.request("demo", kind, records, "Caption.", "Alt.", "../charts/")
    page = tmp_path / "docs" / "page.md"
    return book.resolve({page: f"before\n\n{placeholder}\n\nafter\n"})[page], book


@pytest.mark.slow
def test_a_second_render_draws_nothing(tmp_path: Path, counted: dict[str, int]) -> None:
    """A templated spec is made again (cheaper than a cache file); its SVG is drawn once."""
    first, _ = render_once(tmp_path, RECORDS)
    assert counted == {"spec": 0, "templated": 1, "svg": 1}
    second, book = render_once(tmp_path, RECORDS)
    assert counted == {"spec": 0, "templated": 2, "svg": 1}
    assert first == second
    assert not (tmp_path / "cache" / chart_cache.SPECS_SUBDIR).exists()
    assert first.startswith("before\n\n<figure") and first.endswith("</figure>\n\nafter\n")
    charts = tmp_path / "docs" / "charts"
    assert book.files == {charts / "demo.csv", charts / "demo.vl.json", charts / "demo.svg"}
    assert (charts / "demo.svg").read_text().startswith("<svg")


def test_changed_records_build_a_new_chart(tmp_path: Path, counted: dict[str, int]) -> None:
    render_once(tmp_path, RECORDS)
    changed = [{**RECORDS[0], "tps_median": 123.0}, *RECORDS[1:]]
    page, _ = render_once(tmp_path, changed)
    assert counted == {"spec": 0, "templated": 2, "svg": 2}
    assert "123" in (tmp_path / "docs" / "charts" / "demo.csv").read_text()
    assert '"tps_median":123.0' in page


PEAKS = [
    {"machine": m, "published": False, "experiment": "clients-sweep", "server_cores": cores,
     "peak_clients": 4 * cores, "peak_clients_low": 2 * cores, "peak_clients_high": 4 * cores,
     "peak_clients_per_core": 4.0}
    for m, cores in (("a", 1.0), ("b", 4.0))
]  # fmt: skip


def test_a_spec_built_in_full_is_built_once(
    tmp_path: Path, counted: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every kind the site draws has a template; a kind without one is built in full, and kept.
    monkeypatch.setitem(chart_cache.charts.KINDS, "peaks_in_full", chart_cache.scaling_chart.peaks_by_cores)
    first, _ = render_once(tmp_path, PEAKS, "peaks_in_full")
    second, _ = render_once(tmp_path, PEAKS, "peaks_in_full")
    assert counted == {"spec": 1, "templated": 0, "svg": 1}
    assert first == second
    assert len(list((tmp_path / "cache" / chart_cache.SPECS_SUBDIR).glob("*.json"))) == 1


def test_the_spec_key_names_kind_and_records() -> None:
    cache = ChartCache(Path("unused"))
    key = cache.spec_key("throughput_vs_clients", RECORDS)
    assert key == cache.spec_key("throughput_vs_clients", [dict(reversed(r.items())) for r in RECORDS])
    assert key != cache.spec_key("latency_vs_clients", RECORDS)
    assert key != cache.spec_key("throughput_vs_clients", RECORDS[:2])


# One record with every field any templated kind reads, two client counts so lines have two points.
EVERY_FIELD = {
    "workload": "mixed", "transport": "unix", "machine": "m", "published": False, "budget": 1.0,
    "postgres_version": "15.18", "builtin": "select-only", "pool_size": 8, "clients_per_core": 1.0,
    "tps_share": 1.0, "tps_median": 100.0, "tps_min": 90.0, "tps_max": 110.0, "latency_avg_median": 1.0,
    "latency_avg_min": 0.9, "latency_avg_max": 1.1, "ms_per_tx_median": 1.0, "ms_per_tx_min": 0.9,
    "ms_per_tx_max": 1.1, "connection_ms_median": 2.0, "state": "running", "state_order": 0, "share": 0.5,
    "share_min": 0.4, "share_max": 0.6, "samples": 10, "mib": 5.0, "measure": "rss",
    "pooled_over_direct": 0.9, "pooled_over_direct_low": 0.8, "pooled_over_direct_high": 1.0,
    "pooled_tps": 90.0, "direct_tps": 100.0, "pooler": "pgbouncer", "seconds": 10, "rss_mib": 4.0,
    "series": "measured machines", "machines": 3, "tps_share_low": 0.9, "tps_share_high": 1.0,
    "experiment": "clients-sweep", "server_cores": 2.0, "peak_clients": 8.0, "peak_clients_low": 6.0,
    "peak_clients_high": 8.0, "peak_clients_per_core": 4.0, "point": "m, 8 clients",
    "connect": "persistent", "profile": "full", "curve": "m, 2 server cores", "ratio": 0.9, "ratio_low": 0.8,
    "ratio_high": 1.0, "client_saturated": False, "label": "PgBouncer 1.18.0", "value": 5.0, "low": 4.0,
    "high": 6.0,
}  # fmt: skip
SAMPLE = [{**EVERY_FIELD, "clients": n} for n in (1, 8)]
# Kinds that read more of a field than any value does: throughput_by_pooler's workload names a pooler kind.
SAMPLE_FOR = {"throughput_by_pooler": [{**record, "workload": "churn-pgbouncer"} for record in SAMPLE]}


def inline_rows(spec: object, datasets: dict[str, list]) -> object:
    """The spec with every named dataset written inline, as Altair writes a chart built in full."""
    if isinstance(spec, list):
        return [inline_rows(item, datasets) for item in spec]
    if not isinstance(spec, dict):
        return spec
    return {
        key: {"values": datasets[value["name"]]}
        if key == "data" and "name" in value
        else inline_rows(value, datasets)
        for key, value in spec.items()
        if key != "datasets"
    }


@pytest.mark.parametrize("kind", sorted(chart_cache.charts.ROWS_INTO_TEMPLATE))
def test_a_templated_spec_draws_what_the_full_build_draws(kind: str) -> None:
    sample = SAMPLE_FOR.get(kind, SAMPLE)
    templated = chart_cache.build_spec((kind, sample))
    assert templated["datasets"][spec_template.ROWS_DATASET]  # the rows are there, once
    full = chart_cache.chart_function(kind)(sample)
    assert inline_rows(templated, templated["datasets"]) == full


@pytest.mark.parametrize("kind", sorted(chart_cache.charts.TEMPLATED))
def test_a_templated_spec_text_is_the_built_spec_written(kind: str) -> None:
    records = SAMPLE_FOR.get(kind, SAMPLE)
    if kind == "usl_simulator":
        fit = {"fit_lambda": 2065.16, "fit_sigma": 0.31, "fit_kappa": 0.0042}
        records = [{**fit, **record} for record in SAMPLE]
    text = chart_cache.templated_spec_text(kind, records)
    assert text == spec_text(chart_cache.build_spec((kind, records)))
    assert text != chart_cache.templated_spec_text(kind, records[:1])


def test_a_template_without_an_empty_layer_is_refused() -> None:
    with pytest.raises(ValueError, match="draws from no rows"):
        spec_template.with_rows({"data": {"values": [{"x": 1}]}, "mark": "point"}, [{"x": 2}])


def test_the_usl_simulator_from_its_template_is_the_simulator_built_in_full() -> None:
    fit = {"fit_lambda": 2065.16, "fit_sigma": 0.31, "fit_kappa": 0.0042}
    records = [{**fit, "clients": n, "tps_median": 900.0 * n**0.5, "tps_min": 850.0 * n**0.5,
                "tps_max": 950.0 * n**0.5} for n in (1, 2, 4, 8, 16)]  # fmt: skip
    templated = chart_cache.build_spec(("usl_simulator", records))
    full = chart_cache.chart_function("usl_simulator")(records)
    assert inline_rows(templated, templated["datasets"]) == full
    # The sliders start at this machine's fit, not at the template's sample.
    assert [param["value"] for param in templated["params"][:3]] == [2065.0, 0.31, 0.0042]


def test_a_template_is_kept_and_a_damaged_one_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kind's template is kept in the cache (a render that finds it never runs Altair); a file that is not
    one this code wrote whole is made again."""
    monkeypatch.setattr(chart_cache, "CACHE_DIR", tmp_path)
    chart_cache.kind_template.cache_clear()
    try:
        made = chart_cache.kind_template("throughput_vs_clients")
        (kept,) = (tmp_path / chart_cache.TEMPLATES_SUBDIR).glob("*.json")
        assert json.loads(kept.read_text()) == made
        kept.write_text('{"layer": [')
        chart_cache.kind_template.cache_clear()
        assert chart_cache.kind_template("throughput_vs_clients") == made
        assert json.loads(kept.read_text()) == made
    finally:
        chart_cache.kind_template.cache_clear()


def _process_id(_: object) -> int:
    return os.getpid()


@pytest.mark.slow
def test_a_helper_draws_the_few_svgs_a_change_needs(tmp_path: Path) -> None:
    """render_site starts a helper process with vl-convert warm; the few SVGs an added machine needs are
    drawn there, the same as in this process."""
    specs = [
        spec_text({"data": {"values": [{"x": x}]}, "mark": "point", "encoding": {"x": {"field": "x"}}})
        for x in (1, 2)
    ]
    with WorkerPool(1) as helper:
        helper.submit(chart_cache.warm_svg_renderer).result()
        cache = ChartCache(tmp_path / "helped", helper=helper)
        assert set(cache._map(_process_id, [1, 2])) == {next(iter(helper._processes))}  # type: ignore[attr-defined]
        helped = cache.svgs(specs)
    alone = ChartCache(tmp_path / "alone").svgs(specs)
    assert helped == alone and all("<svg" in svg for svg in helped.values())
