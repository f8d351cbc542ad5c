"""Chart specs built by connlab.site.charts.kinds, starting with the USL simulator."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
import vl_convert

from connlab.data.chart_rows import median_label
from connlab.errors import LabError
from connlab.paths import SITE_SRC_DIR
from connlab.site.charts import kinds
from connlab.site.charts.constants import POOLER_COLOURS
from connlab.site.charts.html import VL_VERSION, render_svg
from connlab.site.charts.kinds import (
    KINDS,
    LINE_AND_POINT,
    MEASURED_HERE,
    PUBLISHED_ARTICLE,
    chart_kind,
    connection_cost_dots,
    latency_across_machines,
    metric_vs_clients,
    normalised_throughput,
    pooled_over_direct_by_clients,
    pooled_over_direct_by_pool,
    pooler_memory_by_version,
    pooler_memory_dots,
    pooler_rss_over_time,
    pooler_throughput_by_version,
    pooler_throughput_dots,
    throughput_by_version,
    usl_simulator,
    usl_start,
    version_rows,
    wrapped_label,
)

FIT = {"fit_lambda": 2065.16, "fit_sigma": 0.3678, "fit_kappa": 0.004152}
CLIENTS = (1, 2, 4, 8, 16, 32, 50, 100, 200, 400)
# Functions vega-interpreter implements itself (charts.js has vega-embed evaluate expressions with it, so
# the page works under a Content-Security-Policy without 'unsafe-eval').
INTERPRETER_SAFE_CALLS = {"pow", "sqrt", "round"}


def usl_records(**fit: float) -> list[dict[str, Any]]:
    """Measured points on the USL curve of the fit, ±5 % as the min–max of the passes."""
    values = {**FIT, **fit}
    lam, sigma, kappa = values["fit_lambda"], values["fit_sigma"], values["fit_kappa"]
    rows = []
    for n in CLIENTS:
        tps = lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))
        rows.append(
            {
                "machine": "test-box",
                "workload": "tpcb-like",
                "clients": n,
                "tps_median": tps,
                "tps_min": 0.95 * tps,
                "tps_max": 1.05 * tps,
                **values,
            }
        )
    return rows


def params_by_name(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {param["name"]: param for param in spec.get("params", [])}


def test_usl_simulator_has_three_sliders_starting_at_the_fit() -> None:
    params = params_by_name(usl_simulator(usl_records()))
    # Three sliders; the axes' reach is two params without a control (the scales and the curve read them).
    assert set(params) == {"lambda_", "sigma", "kappa", "n_max", "y_top"}
    assert "bind" not in params["n_max"] and "bind" not in params["y_top"]
    for name, fitted in (("lambda_", "fit_lambda"), ("sigma", "fit_sigma"), ("kappa", "fit_kappa")):
        param = params[name]
        bind = param["bind"]
        # The fitted value, rounded to the slider's step so the readout stays short.
        assert param["value"] == pytest.approx(FIT[fitted], abs=bind["step"] / 2 + 1e-15), name
        assert len(repr(param["value"])) <= 12, name
        assert bind["input"] == "range", name
        assert bind["min"] == 0 and bind["max"] > param["value"], name
        assert 0 < bind["step"] <= bind["max"] / 100, f"{name}: the slider is too coarse"


def test_kappa_slider_has_room_when_the_fit_has_no_crosstalk() -> None:
    params = params_by_name(usl_simulator(usl_records(fit_kappa=0.0)))
    assert params["kappa"]["value"] == 0.0
    assert params["kappa"]["bind"]["max"] >= 0.01


def test_usl_simulator_expressions_are_interpreter_safe() -> None:
    """The chart's own expressions call only functions vega-interpreter implements itself."""
    spec = usl_simulator(usl_records())
    expressions = [
        step.get("calculate") or step.get("filter")
        for layer in spec["layer"]
        for step in layer.get("transform", [])
    ]
    assert "sqrt((1 - sigma) / kappa)" in expressions
    called = set()
    for expr in expressions:
        assert isinstance(expr, str), expr
        without_strings = re.sub(r"'[^']*'|\"[^\"]*\"", "''", expr)
        called |= set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", without_strings))
    assert called <= INTERPRETER_SAFE_CALLS, called


@pytest.mark.parametrize(
    "fit", [{}, {"fit_kappa": 0.0}, {"fit_sigma": 0.0}], ids=["fit", "no-kappa", "no-sigma"]
)
def test_usl_simulator_renders_to_svg(fit: dict[str, float]) -> None:
    spec = usl_simulator(usl_records(**fit))
    svg = vl_convert.vegalite_to_svg(vl_spec=spec, vl_version=VL_VERSION, allowed_base_urls=[])
    assert svg.startswith("<svg") and "</svg>" in svg
    assert render_svg(spec).startswith("<svg")  # the site's own fallback rendering works too
    peak = math.sqrt((1 - FIT["fit_sigma"]) / FIT["fit_kappa"])
    if not fit:
        assert f"N* ≈ {round(peak * 10) / 10:g}" in svg
    elif "fit_kappa" in fit:
        assert "N* ≈" not in svg  # no crosstalk, no peak: the marker is hidden


def test_usl_simulator_needs_points() -> None:
    with pytest.raises(ValueError):
        usl_simulator([])


def test_normalised_chart_names_its_sources_in_words() -> None:
    """The dash legend tells measured curves from published ones in words, not as true and false."""
    records = [
        {"machine": machine, "published": published, "workload": "mixed", "clients": n,
         "clients_per_core": n / 2, "tps_share": share}
        for machine, published in (("test-box", False), ("published-seed", True))
        for n, share in ((1, 0.5), (4, 1.0))
    ]  # fmt: skip
    spec = normalised_throughput(records)
    encodings = [layer["encoding"] for layer in spec["layer"]]
    (dash,) = [encoding["strokeDash"] for encoding in encodings if "strokeDash" in encoding]
    assert dash["title"] == "figures"
    assert {row[dash["field"]] for row in spec["data"]["values"]} == {MEASURED_HERE, PUBLISHED_ARTICLE}
    for encoding in encodings:
        color = encoding["color"]
        assert (color["field"], color["title"], color["type"]) == ("machine", "machine", "nominal")
        # The legend marks a machine as its curve is drawn, a stroke with a point, not a faded swatch.
        assert color["legend"]["symbolType"] == LINE_AND_POINT and color["legend"]["symbolOpacity"] == 1
    svg = render_svg(spec)
    assert PUBLISHED_ARTICLE in svg and MEASURED_HERE in svg
    assert not re.search(r">(true|false)<", svg), "a raw boolean in the legend"


def test_version_chart_has_one_curve_and_band_per_server() -> None:
    """Each version's curve is named by its exact server, and its band spans the passes."""
    records = [
        {"postgres_version": version, "clients": n, "clients_per_core": n, "tps_median": tps,
         "tps_min": tps * 0.9, "tps_max": tps * 1.1}
        for version in ("15.18", "18.6")
        for n, tps in ((1, 100.0), (4, 300.0), (32, 150.0))
    ]  # fmt: skip
    spec = throughput_by_version(records)
    (band, line) = spec["layer"]
    assert band["encoding"]["y2"]["field"] == "tps_max"
    assert line["encoding"]["y"]["field"] == "tps_median"
    svg = render_svg(spec)
    assert "PostgreSQL 15.18" in svg and "PostgreSQL 18.6" in svg


def test_pool_chart_draws_the_ratio_with_its_range_against_a_rule_at_direct() -> None:
    """Below the dashed rule at 1 the pooler costs throughput; the band is the passes' range of the ratio."""
    records = [
        {"builtin": builtin, "clients": 200, "pool_size": pool, "pooled_over_direct": ratio,
         "pooled_over_direct_low": ratio * 0.8, "pooled_over_direct_high": ratio * 1.2,
         "pooled_tps": 1000 * ratio, "direct_tps": 1000.0}
        for builtin, ratio in (("select-only", 0.45), ("tpcb-like", 0.47))
        for pool in (4, 16, 100)
    ]  # fmt: skip
    spec = pooled_over_direct_by_pool(records)
    band, line, direct = spec["layer"]
    assert (band["encoding"]["y"]["field"], band["encoding"]["y2"]["field"]) == (
        "pooled_over_direct_low", "pooled_over_direct_high",
    )  # fmt: skip
    assert line["encoding"]["x"]["scale"]["type"] == "log"
    assert direct["mark"]["type"] == "rule" and direct["data"]["values"] == [{"direct": 1}]
    svg = render_svg(spec)
    assert "select-only" in svg and "tpcb-like" in svg


def test_sustained_chart_draws_a_line_per_pooler_over_time_with_tooltips() -> None:
    records = [
        {"pooler": pooler, "seconds": seconds, "rss_mib": base + min(seconds, 60) / 10}
        for pooler, base in (("pgbouncer", 4.0), ("pgpool", 560.0))
        for seconds in range(0, 130, 10)
    ]
    spec = pooler_rss_over_time(records)
    assert (spec["encoding"]["x"]["field"], spec["encoding"]["y"]["field"]) == ("seconds", "rss_mib")
    # A colour per pooler kind, a line per pooler and pass (connlab.site.charts.colours).
    assert (spec["encoding"]["color"]["field"], spec["encoding"]["detail"]["field"]) == ("kind", "pooler")
    assert {tip["field"] for tip in spec["encoding"]["tooltip"]} == {"pooler", "seconds", "rss_mib"}
    svg = render_svg(spec)
    assert "pgbouncer" in svg and "pgpool" in svg


# -- the charts across machines (connlab.data.chart_rows' rows) ---------------------------------------------


def latency_rows() -> list[dict[str, Any]]:
    return [
        {"series": machine, "statistic": statistic, "clients": n, "clients_per_core": n / 2, "machines": 1,
         "latency_ms": factor * n, "latency_ms_low": 0.9 * factor * n, "latency_ms_high": 1.1 * factor * n}
        for machine in ("box-a", "box-b")
        for statistic, factor in (("mean", 1.0), ("95th percentile", 3.0), ("99th percentile", 5.0))
        for n in (1, 4, 16)
    ]  # fmt: skip


def test_latency_across_machines_marks_its_legend_as_its_lines_are_drawn() -> None:
    spec = latency_across_machines(latency_rows())
    band, line, points = spec["layer"]
    assert band["mark"]["type"] == "area" and band["encoding"]["y2"]["field"] == "latency_ms_high"
    # One band per machine and statistic, not one smeared over a machine's three statistics.
    assert band["encoding"]["detail"]["field"] == "statistic"
    assert line["encoding"]["x"]["field"] == "clients_per_core"
    assert line["encoding"]["y"]["scale"]["type"] == "log"
    legend = line["encoding"]["color"]["legend"]
    # A stroke with a point on it, at full opacity: not the bands' faded swatch.
    assert legend["symbolType"] == LINE_AND_POINT and legend["symbolOpacity"] == 1
    dash = line["encoding"]["strokeDash"]
    assert dash["sort"] is None  # the rows' order: the mean first, so it takes the solid line
    assert points["mark"]["type"] == "point"
    svg = render_svg(spec)
    for word in ("box-a", "box-b", "mean", "95th percentile", "99th percentile"):
        assert word in svg


def test_the_band_modes_legend_label_is_drawn_whole_beside_a_wide_plot() -> None:
    """Past a handful of machines the one series is the machines' median with its band: a long name, which
    Vega's default label limit cut to an ellipsis at 1280 px."""
    label = median_label(6)
    rows = [{**row, "series": label} for row in latency_rows() if row["series"] == "box-a"]
    svg = render_svg(latency_across_machines(rows))
    assert label in svg and "…" not in svg


def test_the_version_chart_is_the_band_and_line_kind_against_clients_per_core() -> None:
    """throughput_by_version is metric_vs_clients with another x and colour, not an encoding of its own."""
    records = [
        {"postgres_version": "15.18", "clients": n, "clients_per_core": n, "tps_median": 1.0, "tps_min": 0.9,
         "tps_max": 1.1}
        for n in (1, 4)
    ]  # fmt: skip
    by_version = throughput_by_version(records)
    by_clients = metric_vs_clients(
        version_rows(records), "tps_median", "tps_min", "tps_max", "transactions per second", color="server",
        x="clients_per_core",
    )  # fmt: skip
    assert by_version == by_clients
    assert [layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
            for layer in by_version["layer"]] == ["area", "line"]  # fmt: skip


# The pooler kind of each connection-cost path (chart_rows.CONNECTION_PATHS).
PATH_KINDS = {"straight to the server": "direct", "through PgBouncer": "pgbouncer"}


def dot_rows(series: tuple[str, ...]) -> list[dict[str, Any]]:
    return [
        {"point": f"{machine}, {clients} clients", "series": name, "pooler": PATH_KINDS.get(name, name),
         "published": False, "machines": 1, "value": value, "low": 0.9 * value, "high": 1.2 * value}
        for machine in ("box-a", "box-b")
        for clients in (10, 100)
        for name, value in zip(series, (8000.0, 5000.0, 7000.0), strict=False)
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "series"),
    [
        (pooler_throughput_dots, ("pgbouncer", "pgpool", "odyssey")),
        (pooler_memory_dots, ("pgbouncer", "pgpool", "odyssey")),
        (connection_cost_dots, ("straight to the server", "through PgBouncer")),
    ],
    ids=["pooler-throughput", "pooler-memory", "connection-cost"],
)
def test_dots_across_machines_draw_a_median_and_a_range_per_series_side_by_side(
    kind: Any, series: tuple[str, ...]
) -> None:
    spec = kind(dot_rows(series))
    ranges, dots = spec["layer"]
    assert (ranges["encoding"]["x"]["field"], ranges["encoding"]["x2"]["field"]) == ("low", "high")
    assert dots["encoding"]["x"]["field"] == "value" and dots["encoding"]["x"]["scale"]["type"] == "log"
    for layer in (ranges, dots):
        assert layer["encoding"]["yOffset"]["field"] == "series"  # side by side, not on top of each other
        assert layer["encoding"]["y"]["field"] == "label"  # the category wrapped for a narrow column
    # A category's label on a line per part: a phone's column keeps room for the plot.
    assert dots["encoding"]["y"]["axis"]["labelExpr"] == "split(datum.label, '\\n')"
    svg = render_svg(spec)
    for name in series:
        assert name in svg
    assert "<tspan>box-b</tspan>" in svg and ">100 clients</tspan>" in svg
    assert dots["encoding"]["tooltip"][0]["field"] == "point"  # the tooltip names it unwrapped


def test_the_connection_cost_chart_draws_the_seeds_figures_as_diamonds_beside_the_measured() -> None:
    seed = {"point": "published article, 8 cores, 16 clients", "series": "through PgBouncer",
            "pooler": "pgbouncer", "published": True, "machines": 1, "value": 17950.0, "low": 17950.0,
            "high": 17950.0}  # fmt: skip
    spec = connection_cost_dots([*dot_rows(tuple(PATH_KINDS)), seed])
    _, dots = spec["layer"]
    assert dots["encoding"]["shape"]["field"] == "figures"
    rows = {(r["point"], r["series"]): r for r in dots["data"]["values"]}
    drawn = rows[("published article, 8 cores, 16 clients", "through PgBouncer")]
    assert (drawn["figures"], drawn["shape"]) == (PUBLISHED_ARTICLE, "diamond")
    assert rows[("box-a, 10 clients", "through PgBouncer")]["figures"] == MEASURED_HERE
    svg = render_svg(spec)
    # Named on the axis, not in a second legend (which made the chart too wide for a phone).
    assert dots["encoding"]["shape"]["legend"] is None
    # The seed's dot is a diamond (Vega's path: left, top, right, bottom), the measured ones are not.
    assert len(re.findall(r'aria-roledescription="point"[^>]*d="M-[\d.]+,0L0,-', svg)) == 1
    assert "<tspan>published</tspan>" in svg and ">article</tspan>" in svg and ">8 cores</tspan>" in svg


# -- the answers' charts: pooled against direct by clients per core, the poolers by version ---------------


def trade_rows(machine: str, profile: str, scale: float = 1.0) -> list[dict[str, Any]]:
    """pgbouncer_trade.trade_curve's rows of one machine, as a machine's page gives them."""
    return [
        {"machine": machine, "profile": profile, "connect": connect, "builtin": builtin, "clients": clients,
         "server_cores": 1.0, "clients_per_core": float(clients), "pool_size": 2, "pools": 1,
         "pooled_tps": 100.0 * ratio * scale, "direct_tps": 100.0, "ratio": ratio * scale,
         "ratio_low": 0.9 * ratio * scale, "ratio_high": 1.1 * ratio * scale, "client_saturated": bound}
        for connect, builtin, clients, ratio, bound in (
            ("per-transaction", "select-only", 2, 3.0, True),
            ("per-transaction", "select-only", 8, 2.0, False),
            ("persistent", "tpcb-like", 25, 0.9, False),
            ("persistent", "tpcb-like", 200, 1.8, False),
        )
    ]  # fmt: skip


def test_the_trade_chart_draws_the_ratio_by_clients_per_core_against_a_rule_at_direct() -> None:
    """A colour per way of connecting and workload, a curve per machine with its passes' band, the dashed
    rule at 1 for direct; a quick run's machine dashed and lighter, a point pgbench bounded a triangle."""
    spec = pooled_over_direct_by_clients([*trade_rows("box-a", "full"), *trade_rows("box-b", "quick", 0.7)])
    band, line, points, direct = spec["layer"]
    assert (band["encoding"]["y"]["field"], band["encoding"]["y2"]["field"]) == ("ratio_low", "ratio_high")
    for layer in (band, line, points):
        assert layer["encoding"]["x"]["field"] == "clients_per_core"
        assert layer["encoding"]["x"]["scale"]["type"] == "log"
        assert layer["encoding"]["color"]["field"] == "series"
    assert line["encoding"]["y"]["scale"]["type"] == "log"
    assert line["encoding"]["detail"]["field"] == "curve"  # a line per machine, not one through them all
    assert line["encoding"]["strokeDash"]["field"] == "runs"
    assert line["encoding"]["opacity"]["condition"]["test"] == "datum.decides"
    assert direct["mark"]["type"] == "rule" and direct["data"]["values"] == [{"direct": 1}]
    rows = {(r["curve"], r["series"], r["clients"]): r for r in line["data"]["values"]}
    quick = rows[("box-b, 1 server core", "held connections, tpcb-like", 200)]
    assert (quick["runs"], quick["decides"]) == ("quick profile: indicates", False)
    full = rows[("box-a, 1 server core", "a new connection per transaction, select-only", 2)]
    assert (full["runs"], full["decides"], full["bound"]) == ("full profile: decides", True, kinds.BOUND)
    svg = render_svg(spec)
    for words in ("a new connection per transaction, select-only", "held connections, tpcb-like"):
        assert words in svg
    assert "clients per server core" in svg and not re.search(r">(true|false)<", svg)
    # Quick runs lighter: some of the drawn marks are at the indicative opacity.
    assert f'opacity="{kinds.INDICATIVE_OPACITY}"' in svg or f"opacity: {kinds.INDICATIVE_OPACITY}" in svg


def version_rows_of(measure: str) -> list[dict[str, Any]]:
    """connlab.data.chart_rows.pooler_side_by_side's rows of one figure, two machines, one of a quick run."""
    return [
        {"measure": measure, "label": label, "pooler": pooler, "curve": curve, "profile": profile,
         "clients": 10, "machines": 1, "value": value, "low": value * 0.9, "high": value * 1.1}
        for label, pooler, value in (
            ("PgBouncer 1.18.0", "pgbouncer", 15.5), ("PgPool-II 4.3.5", "pgpool", 1012.0)
        )
        for curve, profile in (("box-a, 1 server core", "full"), ("box-b, 2 server cores", "quick"))
    ]  # fmt: skip


@pytest.mark.parametrize(
    "kind", [pooler_memory_by_version, pooler_throughput_by_version], ids=["memory", "throughput"]
)
def test_the_poolers_by_version_draw_a_row_per_version_and_a_dot_per_machine(kind: Any) -> None:
    spec = kind(version_rows_of("memory"))
    ranges, dots = spec["layer"]
    assert (ranges["encoding"]["x"]["field"], ranges["encoding"]["x2"]["field"]) == ("low", "high")
    assert dots["encoding"]["x"]["field"] == "value" and dots["encoding"]["x"]["scale"]["type"] == "log"
    for layer in (ranges, dots):
        assert layer["encoding"]["y"]["field"] == "label"  # the version's label, wrapped
        assert layer["encoding"]["yOffset"]["field"] == "curve"  # each machine's dot beside the others
        # The axis names the pooler: its colour needs no legend.
        assert layer["encoding"]["color"]["field"] == "pooler"
        assert layer["encoding"]["color"]["legend"] is None
    assert dots["encoding"]["shape"]["field"] == "curve" and dots["encoding"]["shape"]["title"] == "machine"
    # The layers' rows are one dataset, the chart's own (Altair moves it up from two equal layers).
    rows = {(r["version_label"], r["curve"]): r for r in spec["data"]["values"]}
    quick = rows[("PgBouncer 1.18.0", "box-b, 2 server cores (quick profile: indicates)")]
    assert quick["decides"] is False and quick["label"] == "PgBouncer\n1.18.0"
    assert {r["colour"] for r in rows.values() if r["version_label"].startswith("PgPool-II")} == {
        POOLER_COLOURS["pgpool"]
    }
    svg = render_svg(spec)
    assert "<tspan>PgBouncer</tspan>" in svg and ">1.18.0</tspan>" in svg and ">4.3.5</tspan>" in svg
    assert "box-a, 1 server core" in svg and "(quick profile: indicates)" in svg


def test_the_simulators_legend_marks_a_stroke_with_a_point_as_every_line_chart() -> None:
    layers = usl_simulator(usl_records())["layer"]
    legends = [layer["encoding"]["color"].get("legend") for layer in layers if "color" in layer["encoding"]]
    assert legends and all(legend is not None for legend in legends)
    assert {legend["symbolType"] for legend in legends} == {LINE_AND_POINT}
    assert {legend["symbolOpacity"] for legend in legends} == {1}


def test_the_simulator_text_is_what_its_sliders_and_label_show() -> None:
    """usl_start prints each slider's starting value with the slider's digits, and N* as the chart's label
    computes it from those same values."""
    records = usl_records()
    start = usl_start(records)
    params = params_by_name(usl_simulator(records))
    for name in ("lambda_", "sigma", "kappa"):
        assert float(start[name]) == params[name]["value"], name
        assert not start[name].endswith(".0"), name  # JavaScript prints 2065, not 2065.0
    label_peak = math.sqrt((1 - params["sigma"]["value"]) / params["kappa"]["value"])
    assert start["n_star"] == f"{math.floor(label_peak * 10 + 0.5) / 10:g}"
    svg = render_svg(usl_simulator(records))
    assert f"N* ≈ {start['n_star']}" in svg
    assert usl_start(usl_records(fit_kappa=0.0))["n_star"] is None


def test_a_category_label_is_wrapped_at_its_commas_and_long_parts_after_a_dash() -> None:
    assert wrapped_label("amd-epyc-2c-24g-2, 10 clients") == "amd-epyc-2c-\n24g-2\n10 clients"
    assert wrapped_label("box-a, 10 clients") == "box-a\n10 clients"
    assert wrapped_label("10 clients, 6 machines' median") == "10 clients\n6 machines'\nmedian"
    # A word longer than a line stays whole (the axis' label limit ends it in an ellipsis).
    assert wrapped_label("averyveryverylongname, 2 clients") == "averyveryverylongname\n2 clients"


def test_the_kinds_are_the_mapping_and_nothing_else_of_the_module() -> None:
    """A page names a kind of KINDS; any other name, a helper or a constant of the module among them, is
    refused in one line that names the kinds there are."""
    assert chart_kind("usl_simulator") is usl_simulator
    for name in ("no_such_chart", "metric_vs_clients", "CATEGORY_LABEL_LIMIT", "__name__"):
        assert hasattr(kinds, name) or name == "no_such_chart"
        with pytest.raises(LabError, match=rf"chart kind '{name}': no such kind \(.*throughput_vs_clients"):
            chart_kind(name)


def test_every_kind_a_page_names_or_a_template_serves_is_a_kind() -> None:
    named = {
        match
        for path in SITE_SRC_DIR.rglob("*.j2")
        for match in re.findall(r'chart\(\s*[^,]+,\s*"([a-z_]+)"', path.read_text(encoding="utf-8"))
    }
    assert named and named <= set(KINDS)
    assert set(KINDS) >= kinds.TEMPLATED
