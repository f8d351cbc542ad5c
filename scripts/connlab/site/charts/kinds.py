"""Altair charts built from aggregated records; the renderer embeds their specs in the pages. The kinds a
page may name are KINDS, and only those (chart_kind looks a name up there).

Charts set no colours for text or background: charts.js applies the light or dark theme in the browser,
so a chart follows the reader's palette toggle.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from connlab.contract.names import machine_with_cores
from connlab.errors import LabError
from connlab.site.charts.colours import COLOUR_FIELD, coloured, kind_in
from connlab.site.charts.frame import Records, chart_over, range_tooltips
from connlab.site.charts.lazy import lazy_import
from connlab.site.charts.legends import LEGEND_LABEL_LIMIT, line_legend
from connlab.site.charts.legends import LINE_AND_POINT as LINE_AND_POINT

# LINE_PER_MACHINE_UP_TO: the templates read it here, with the chart kinds.
from connlab.site.charts.scaling import LINE_PER_MACHINE_UP_TO as LINE_PER_MACHINE_UP_TO
from connlab.site.charts.scaling import peak_rows, peaks_by_cores
from connlab.site.charts.usl import filled_usl, usl_simulator, usl_start, usl_template

if TYPE_CHECKING:
    import altair as alt
else:
    alt = lazy_import("altair")

# Built in a module of its own; named here so that a template finds every chart kind in one place.
__all__ = ["usl_simulator", "usl_start"]


def _clients_axis(title: str = "clients (log scale)") -> alt.X:
    return alt.X("clients:Q", scale=alt.Scale(type="log"), title=title)


# The x axes a line chart is drawn against: the field and its title.
X_AXES = {
    "clients": "clients (log scale)",
    "clients_per_core": "clients per server core (log scale)",
}


def metric_vs_clients(
    records: Records,
    median: str,
    low: str,
    high: str,
    title: str,
    log_y: bool = False,
    color: str = "workload",
    x: str = "clients",
    dash: str | None = None,
    color_title: str | None = None,
    colours: bool = False,
) -> dict:
    """A median line per series with a shaded min–max band: the run-to-run range (or the machines' range)
    stays visible. x: a field of X_AXES. dash: a second series field drawn as the line's dashes (one band
    and line per colour and dash). colours: each row's colour is its COLOUR_FIELD (charts.colours)."""
    y_scale = alt.Scale(type="log") if log_y else alt.Scale(zero=True)
    x_enc = alt.X(f"{x}:Q", scale=alt.Scale(type="log"), title=X_AXES[x])
    color_enc = alt.Color(f"{color}:N", title=color_title or color, legend=line_legend())
    # The field range on the band alone: two layers' ranges would be a conflict Vega-Lite warns of.
    band_color = (
        alt.Color(
            f"{color}:N",
            title=color_title or color,
            legend=line_legend(),
            scale=alt.Scale(range=alt.FieldRange(COLOUR_FIELD)),
        )
        if colours
        else color_enc
    )
    detail = [alt.Detail(f"{dash}:N")] if dash else []
    band = (
        chart_over(records)
        .mark_area(opacity=0.2)
        .encode(
            x_enc, alt.Y(f"{low}:Q", scale=y_scale, title=title), alt.Y2(f"{high}:Q"), band_color, *detail
        )
    )
    tooltip = [
        alt.Tooltip(f"{color}:N"),
        *([alt.Tooltip(f"{dash}:N")] if dash else []),
        alt.Tooltip(f"{x}:Q", format=",.3~f"),
        alt.Tooltip(f"{median}:Q", title="median", format=",.3~f"),
        *range_tooltips(low, high, ",.3~f"),
    ]
    y_enc = alt.Y(f"{median}:Q", scale=y_scale, title=title)
    if dash is None:
        line = chart_over(records).mark_line(point=True).encode(x_enc, y_enc, color_enc, tooltip=tooltip)
        return alt.layer(band, line).to_dict()
    # The dashes on a plain line, the points a layer of their own: on a line with points, Vega-Lite draws
    # the dash legend's symbols as dots, which cannot show a dash.
    dash_enc = alt.StrokeDash(
        f"{dash}:N",
        title=dash,
        sort=None,
        legend=alt.Legend(symbolType="stroke", symbolStrokeWidth=2, symbolOpacity=1),
    )
    line = chart_over(records).mark_line().encode(x_enc, y_enc, color_enc, dash_enc)
    points = (
        chart_over(records).mark_point(filled=True).encode(x_enc, y_enc, color_enc, *detail, tooltip=tooltip)
    )
    return alt.layer(band, line, points).to_dict()


def throughput_vs_clients(records: Records) -> dict:
    return metric_vs_clients(records, "tps_median", "tps_min", "tps_max", "transactions per second")


def pooler_path_rows(records: Records) -> list[dict[str, object]]:
    """Rows whose workload goes straight to the server or through a pooler, each in its kind's colour."""
    return coloured(
        [{**record, "kind": kind_in(str(record["workload"]))} for record in records], "kind", "workload"
    )


def throughput_by_pooler(records: Records) -> dict:
    """throughput_vs_clients for workloads that differ by the way to the server (direct, PgBouncer): each
    line in its pooler kind's colour, the one it has on every chart."""
    return metric_vs_clients(
        pooler_path_rows(records), "tps_median", "tps_min", "tps_max", "transactions per second", colours=True
    )


def latency_vs_clients(records: Records) -> dict:
    return metric_vs_clients(
        records,
        "latency_avg_median",
        "latency_avg_min",
        "latency_avg_max",
        "mean latency, ms (log scale)",
        log_y=True,
    )


def latency_across_machines(records: Records) -> dict:
    """Mean, 95th and 99th percentile latency against clients per server core: a colour per machine (or,
    past a handful, one for the machines' median with a band from the lowest to the highest), a dash per
    statistic (connlab.data.chart_rows.latency_across makes the rows)."""
    return metric_vs_clients(
        records,
        "latency_ms",
        "latency_ms_low",
        "latency_ms_high",
        "latency, ms (log scale)",
        log_y=True,
        color="series",
        x="clients_per_core",
        dash="statistic",
        color_title="machine",
    )


# Where a curve's figures come from, in the words its legend shows (never the raw boolean).
MEASURED_HERE = "measured here"
PUBLISHED_ARTICLE = "published article"
NORMALISED_FIELDS = ("machine", "workload", "clients", "clients_per_core", "tps_share")


def _drawn_fields(records: Records, fields: tuple[str, ...]) -> list[dict[str, object]]:
    """Only the fields drawn or shown in the tooltip, and where the figures come from in words: a chart
    across machines would otherwise carry each unused field once per point (the CSV keeps them all)."""
    return [
        {
            **{name: record[name] for name in fields},
            "figures": PUBLISHED_ARTICLE if record["published"] else MEASURED_HERE,
        }
        for record in records
    ]


def normalised_rows(records: Records) -> list[dict[str, object]]:
    return _drawn_fields(records, NORMALISED_FIELDS)


def normalised_throughput(records: Records) -> dict:
    """Every machine on one chart: clients per server core against throughput as a share of that machine's
    peak. Published curves are dashed, and the dash legend says which curves come from an article."""
    base = chart_over(normalised_rows(records)).encode(
        x=alt.X(
            "clients_per_core:Q", scale=alt.Scale(type="log"), title="clients per server core (log scale)"
        ),
        y=alt.Y("tps_share:Q", title="throughput, share of the machine's peak", axis=alt.Axis(format="%")),
        color=alt.Color("machine:N", title="machine", legend=line_legend()),
        detail="workload:N",
    )
    # The dashes on a plain line, the points a layer of their own: on a line with points, Vega-Lite draws
    # the dash legend's symbols as dots, which cannot show a dash.
    lines = base.mark_line().encode(
        strokeDash=alt.StrokeDash("figures:N", title="figures", sort=[MEASURED_HERE, PUBLISHED_ARTICLE])
    )
    points = base.mark_point(filled=True).encode(
        tooltip=[
            alt.Tooltip("machine:N"),
            alt.Tooltip("figures:N"),
            alt.Tooltip("workload:N"),
            alt.Tooltip("clients:Q"),
            alt.Tooltip("clients_per_core:Q", title="per core", format=".3~f"),
            alt.Tooltip("tps_share:Q", title="share of peak", format=".0%"),
        ],
    )
    return alt.layer(lines, points).to_dict()


SPREAD_FIELDS = ("series", "clients_per_core", "machines", "tps_share", "tps_share_low", "tps_share_high")


def spread_rows(records: Records) -> list[dict[str, object]]:
    return _drawn_fields(records, SPREAD_FIELDS)


def normalised_spread(records: Records) -> dict:
    """Many machines on one chart: the measured machines' median share of their peak with a band from the
    lowest to the highest, and each published curve dashed. Its size does not grow with the machines."""
    x = alt.X("clients_per_core:Q", scale=alt.Scale(type="log"), title="clients per server core (log scale)")
    y_title = "throughput, share of the machine's peak"
    color = alt.Color("series:N", title="curve", legend=line_legend())
    base = chart_over(spread_rows(records))
    band = base.mark_area(opacity=0.2).encode(
        x=x, y=alt.Y("tps_share_low:Q", title=y_title), y2="tps_share_high:Q", color=color
    )
    lines = base.mark_line(point=True).encode(
        x=x,
        y=alt.Y("tps_share:Q", title=y_title, axis=alt.Axis(format="%")),
        color=color,
        strokeDash=alt.StrokeDash("figures:N", title="figures", sort=[MEASURED_HERE, PUBLISHED_ARTICLE]),
        tooltip=[
            alt.Tooltip("series:N", title="curve"),
            alt.Tooltip("clients_per_core:Q", title="per core", format=".3~f"),
            alt.Tooltip("machines:Q"),
            alt.Tooltip("tps_share:Q", title="share of peak", format=".0%"),
            *range_tooltips("tps_share_low", "tps_share_high", ".0%", ("lowest", "highest")),
        ],
    )
    return alt.layer(band, lines).to_dict()


def dots_with_ranges(
    records: Records,
    category: str,
    median: str,
    low: str,
    high: str,
    x_title: str | list[str],
    color: str,
    color_title: str,
    tooltip: Sequence[alt.Tooltip] = (),
    offset: bool = False,
    height: object = 200,
    colours: bool = False,
    shape: alt.Shape | None = None,
    category_tooltip: str | None = None,
) -> dict:
    """A dot at each row's median and a rule over its range, one row of the chart per category on a
    logarithmic scale (the values differ by orders of magnitude, where bars cannot start). offset: the
    colours of one category side by side (yOffset) instead of on one line. colours: each row's colour is
    its COLOUR_FIELD (connlab.site.charts.colours). shape: the dots' shape encoding. A category's label is
    written a line per line break in it (wrapped_label), so that a narrow column holds the plot beside it;
    category_tooltip: the field the tooltip names the category by (the label unwrapped)."""
    x_scale = alt.Scale(type="log")
    y = _category_axis(category)
    color_enc = alt.Color(f"{color}:N", title=color_title)
    # The field range on one layer only: Vega-Lite merges the layers' scales, and two layers' ranges (the
    # same field of the same rows) would be a conflict it warns of.
    ranged = alt.Color(f"{color}:N", title=color_title, scale=alt.Scale(range=alt.FieldRange(COLOUR_FIELD)))
    shifted = [alt.YOffset(f"{color}:N", sort=None)] if offset else []
    tips = [
        alt.Tooltip(f"{category_tooltip or category}:N", title=category_tooltip or category),
        alt.Tooltip(f"{color}:N", title=color_title),
        alt.Tooltip(f"{median}:Q", title="median", format=",.3~f"),
        *range_tooltips(low, high, ",.3~f"),
        *tooltip,
    ]
    ranges = (
        chart_over(records)
        .mark_rule(strokeWidth=3)
        .encode(
            y,
            alt.X(f"{low}:Q", scale=x_scale),
            alt.X2(f"{high}:Q"),
            ranged if colours else color_enc,
            *shifted,
        )
    )
    dots = (
        chart_over(records)
        .mark_point(filled=True, size=90, opacity=1)
        .encode(
            y,
            # The end labels inside the plot's width: the last one would stick out past a phone's column.
            alt.X(f"{median}:Q", scale=x_scale, title=x_title, axis=alt.Axis(labelFlush=True)),
            color_enc,
            *shifted,
            *([shape] if shape is not None else []),
            tooltip=tips,
        )
    )
    return alt.layer(ranges, dots).properties(height=height).to_dict()


def connect_cost_dots(records: Records) -> dict:
    """Time per transaction for each way of connecting: a dot at the median, a rule over the range of the
    passes."""
    return dots_with_ranges(
        records, "workload", "ms_per_tx_median", "ms_per_tx_min", "ms_per_tx_max",
        "ms per transaction, log scale", "transport", "transport",
        tooltip=[alt.Tooltip("clients:Q"),
                 alt.Tooltip("connection_ms_median:Q", title="connection ms", format=".3~f")],
    )  # fmt: skip


# A row per category and colour in the charts across machines (chart_rows' pooler and connection rows):
# tall enough for a label of three lines (a machine id broken in two, its client count) beside two colours.
ACROSS_STEP = 18
# A category's label a line per line break in it (wrapped_label's).
WRAPPED_LABEL = "split(datum.label, '\\n')"
# Vega draws a label's first line at its tick: each label moved up by half its lines after the first, so that
# the block is centred on its row (the axis' labels are 12 px a line).
CENTRED_LABEL_OFFSET = "-6 * (length(split(datum.label, '\\n')) - 1)"
# The most characters of a label's line: about 75 px at the axis' 10 px font, which with the narrowest plot
# (MIN_PLOT_WIDTH) and the axes fits a 390 px phone's column.
LABEL_LINE_CHARS = 14
# The widest a line is drawn even so (px): a word longer than a line ends in an ellipsis (the tooltip holds
# the label whole) rather than widening the chart past a phone's column.
CATEGORY_LABEL_LIMIT = 90


def _category_axis(field: str) -> alt.Y:
    """A row per category of the field, its label a line per line break in it, centred on its row."""
    return alt.Y(
        f"{field}:N",
        title=None,
        sort=None,
        axis=alt.Axis(
            labelExpr=WRAPPED_LABEL,
            labelLimit=CATEGORY_LABEL_LIMIT,
            labelOffset=alt.ExprRef(expr=CENTRED_LABEL_OFFSET),
        ),
    )


def wrapped_label(text: str, width: int = LABEL_LINE_CHARS) -> str:
    """text on lines of at most width characters: a line per comma-separated part ("machine, 10 clients"),
    a part longer than a line broken after a dash or a space ("amd-epyc-2c-" / "24g-2")."""
    lines = []
    for part in text.split(", "):
        line = ""
        for piece in re.split(r"(?<=[- ])", part):
            if line and len(line) + len(piece.rstrip()) > width:
                lines.append(line.rstrip())
                line = ""
            line += piece
        lines.append(line.rstrip())
    return "\n".join(lines)


def across_rows(records: Records) -> list[dict[str, object]]:
    """chart_rows' rows with their pooler kind's colour (`pooler`: the kind, or "direct" for no pooler) and
    their category's label wrapped for a narrow column (`label`)."""
    return [
        {**record, "label": wrapped_label(str(record["point"]))}
        for record in coloured(records, "pooler", "series")
    ]


def _dots_across(
    records: Records, x_title: list[str], color_title: str, shape: alt.Shape | None = None
) -> dict:
    """connlab.data.chart_rows' rows: a category (`point`: machine and clients, or clients past a handful
    of machines), a colour (`series`, in its pooler kind's colour) with its dot and range side by side, and
    `machines` in the tooltip."""
    return dots_with_ranges(
        records, "label", "value", "low", "high", x_title, "series", color_title,
        tooltip=[alt.Tooltip("machines:Q", title="machines")], offset=True, height=alt.Step(ACROSS_STEP),
        colours=True, shape=shape, category_tooltip="point",
    )  # fmt: skip


def pooler_throughput_dots(records: Records) -> dict:
    """The poolers head to head: each one's throughput with the range of the passes, per machine."""
    return _dots_across(across_rows(records), ["transactions per second", "(log scale)"], "pooler")


def pooler_memory_dots(records: Records) -> dict:
    """The poolers head to head: the resident memory of each one's processes, with the range of the passes."""
    return _dots_across(across_rows(records), ["RSS of the pooler's processes,", "MiB (log scale)"], "pooler")


# The dots' shape says where a figure comes from: the seed's printed figures are drawn beside the measured
# ones, never as one of them.
FIGURE_SHAPES = {MEASURED_HERE: "circle", PUBLISHED_ARTICLE: "diamond"}
SHAPE_FIELD = "shape"


def connection_rows(records: Records) -> list[dict[str, object]]:
    """across_rows' rows, each saying in words where its figures come from (`published`: the seed's) and
    with the shape they are drawn with."""
    return [
        {**record, "figures": figures, SHAPE_FIELD: FIGURE_SHAPES[figures]}
        for record in across_rows(records)
        for figures in [PUBLISHED_ARTICLE if record.get("published") else MEASURED_HERE]
    ]


def connection_cost_dots(records: Records) -> dict:
    """The cost of a new connection: transactions per second when every transaction opens one, straight to
    the server and through PgBouncer, with the range of the passes; the seed's published figures beside
    them in another shape."""
    # No legend of its own: the seed's rows are named "published article" on the axis, and a second legend
    # beside the paths' under a phone's plot made the chart wider than its column.
    shape = alt.Shape(
        "figures:N", title="figures", scale=alt.Scale(range=alt.FieldRange(SHAPE_FIELD)), legend=None
    )
    return _dots_across(
        connection_rows(records),
        ["transactions per second,", "a new connection each (log scale)"],
        "path",
        shape,
    )


def budget_rows(records: Records) -> list[dict[str, object]]:
    # The legend's words, its number agreeing with it (1 core, 0.5 cores).
    return [
        {**record, "budget_cores": f"{record['budget']:g} core{'' if record['budget'] == 1 else 's'}"}
        for record in records
    ]


def throughput_by_budget(records: Records) -> dict:
    """One line per server CPU budget, against clients per core of that budget."""
    return (
        chart_over(budget_rows(records))
        .mark_line(point=True)
        .encode(
            x=alt.X(
                "clients_per_core:Q", scale=alt.Scale(type="log"), title="clients per core of the budget"
            ),
            y=alt.Y("tps_median:Q", title="transactions per second"),
            color=alt.Color("budget_cores:N", title="server budget", legend=line_legend()),
            tooltip=[
                alt.Tooltip("budget_cores:N", title="budget"),
                alt.Tooltip("clients:Q"),
                alt.Tooltip("tps_median:Q", title="median", format=",.0f"),
                *range_tooltips("tps_min", "tps_max", ",.0f"),
            ],
        )
        .to_dict()
    )


def version_rows(records: Records) -> list[dict[str, object]]:
    return [{**record, "server": f"PostgreSQL {record['postgres_version']}"} for record in records]


def throughput_by_version(records: Records) -> dict:
    """One line per PostgreSQL version (its exact server in the legend), against clients per core, with a
    band from the slowest to the fastest pass: two versions' curves read side by side."""
    return metric_vs_clients(
        version_rows(records),
        "tps_median",
        "tps_min",
        "tps_max",
        "transactions per second",
        color="server",
        x="clients_per_core",
    )


def wait_event_rows(records: Records) -> list[dict[str, object]]:
    return [{**record, "point": f"{record['workload']}, {record['clients']} clients"} for record in records]


def wait_event_shares(records: Records) -> dict:
    """Stacked bars: each client count's active-backend samples split into running and the most frequent
    waits (the rest pooled as "other"), one row of bars per workload."""
    return (
        chart_over(wait_event_rows(records))
        .mark_bar()
        .encode(
            y=alt.Y("point:N", title=None, sort=None),
            x=alt.X(
                "share:Q",
                stack="normalize",
                title="share of active-backend samples",
                axis=alt.Axis(format="%"),
            ),
            color=alt.Color("state:N", title="state"),
            order=alt.Order("state_order:Q"),
            tooltip=[
                alt.Tooltip("point:N", title="point"),
                alt.Tooltip("state:N"),
                alt.Tooltip("share:Q", format=".1%"),
                *range_tooltips("share_min", "share_max", ".1%", ("min of passes", "max of passes")),
                alt.Tooltip("samples:Q", format=","),
            ],
        )
        .properties(height=alt.Step(28))
        .to_dict()
    )


def idle_memory_measures(records: Records) -> dict:
    """Each way of counting the server's memory against the number of idle connections."""
    return (
        chart_over(records)
        .mark_line(point=True)
        .encode(
            x=alt.X("clients:Q", title="idle connections"),
            y=alt.Y("mib:Q", scale=alt.Scale(type="log"), title="MiB (log scale)"),
            color=alt.Color("measure:N", title="measure", legend=line_legend()),
            tooltip=[
                alt.Tooltip("measure:N"),
                alt.Tooltip("clients:Q", title="connections"),
                alt.Tooltip("mib:Q", title="MiB (median)", format=",.1f"),
            ],
        )
        .to_dict()
    )


def pooled_over_direct_by_pool(records: Records) -> dict:
    """Through the pooler ÷ straight to the server against the pool size, one line per workload with the
    range of the passes; the rule at 1 is the direct throughput, so a line below it is the pooler's cost."""
    x = alt.X("pool_size:Q", scale=alt.Scale(type="log"), title="server connections in the pool (log scale)")
    color = alt.Color("builtin:N", title="workload", legend=line_legend())
    tooltip = [
        alt.Tooltip("builtin:N", title="workload"),
        alt.Tooltip("clients:Q"),
        alt.Tooltip("pool_size:Q", title="pool size"),
        alt.Tooltip("pooled_over_direct:Q", title="pooled ÷ direct", format=".2f"),
        *range_tooltips("pooled_over_direct_low", "pooled_over_direct_high", ".2f", ("low", "high")),
        alt.Tooltip("pooled_tps:Q", title="pooled tps", format=",.0f"),
        alt.Tooltip("direct_tps:Q", title="direct tps", format=",.0f"),
    ]
    band = (
        chart_over(records)
        .mark_area(opacity=0.2)
        .encode(x=x, y=alt.Y("pooled_over_direct_low:Q"), y2="pooled_over_direct_high:Q", color=color)
    )
    line = (
        chart_over(records)
        .mark_line(point=True)
        .encode(
            x=x,
            y=alt.Y("pooled_over_direct:Q", scale=alt.Scale(zero=True), title="through PgBouncer ÷ direct"),
            color=color,
            tooltip=tooltip,
        )
    )
    direct = alt.Chart(alt.Data(values=[{"direct": 1}])).mark_rule(strokeDash=[4, 4]).encode(y="direct:Q")
    return alt.layer(band, line, direct).to_dict()


def sustained_rows(records: Records) -> list[dict[str, object]]:
    """The sustained readings with their pooler's kind (`pooler` names the pass too where a machine ran
    several: "pgbouncer, pass 2", four-poolers.facts.sql's rss_series) and its colour."""
    kinds = [{**record, "kind": str(record["pooler"]).split(", ")[0]} for record in records]
    return coloured(kinds, "kind", "kind")


def pooler_rss_over_time(records: Records) -> dict:
    """Each pooler's resident memory every 10 s of a steady load from a cold start: warm-up, then a plateau
    or a drift. A colour per pooler kind (each pass of it a line of that colour)."""
    return (
        chart_over(sustained_rows(records))
        .mark_line(point=True)
        .encode(
            x=alt.X("seconds:Q", title="seconds since the load started"),
            y=alt.Y("rss_mib:Q", scale=alt.Scale(zero=True), title="RSS of the pooler's processes, MiB"),
            color=alt.Color(
                "kind:N",
                title="pooler",
                legend=line_legend(),
                scale=alt.Scale(range=alt.FieldRange(COLOUR_FIELD)),
            ),
            detail="pooler:N",
            tooltip=[
                alt.Tooltip("pooler:N"),
                alt.Tooltip("seconds:Q", title="seconds"),
                alt.Tooltip("rss_mib:Q", title="RSS MiB", format=",.1f"),
            ],
        )
        .to_dict()
    )


# -- the answers' charts: PgBouncer's trade by clients per core, the poolers by version --------------------

# How the clients connected, in the legend's words (pgbouncer_trade.trade_curve's `connect`).
CONNECT_WORDS = {"per-transaction": "a new connection per transaction", "persistent": "held connections"}
# Quick runs indicate, full runs decide: an indicative machine's marks are drawn this much lighter.
INDICATIVE_OPACITY = 0.4
FULL_PROFILE = "full"
# A point where pgbench was at its limit on either side: the ratio is a bound there, not the pooler's.
BOUND = "pgbench at its limit: a bound"
NOT_BOUND = "no"


def profile_words(profile: object) -> str:
    """Whether a machine's figures decide (a full-profile run) or indicate (quick, tiny), in words."""
    return f"{profile} profile: {'decides' if profile == FULL_PROFILE else 'indicates'}"


# The dashes by runs: a full run's curve solid, a quick or tiny one's dashed, whichever are drawn.
RUNS_DASHES = {
    profile_words(FULL_PROFILE): [1, 0],
    profile_words("quick"): [5, 3],
    profile_words("tiny"): [2, 2],
}
TRADE_DRAWN = (
    "series", "curve", "runs", "decides", "bound", "clients", "clients_per_core", "pool_size", "pools",
    "machines", "ratio", "ratio_low", "ratio_high", "pooled_tps", "direct_tps",
)  # fmt: skip


def trade_rows(records: Records) -> list[dict[str, object]]:
    """pgbouncer_trade.trade_curve's rows (a machine's, or connlab.data.chart_rows.trade_curve's across
    machines) in words: the series (how the clients connected, the workload), the curve (the machine, or the
    machines' median), the runs (its profile: decides or indicates) and whether pgbench bounded the point;
    only the fields drawn or shown in the tooltip."""
    worded = [
        {
            **record,
            "series": f"{CONNECT_WORDS.get(str(record['connect']), record['connect'])}, {record['builtin']}",
            # A machine's page gives its own rows: the machine named with its server cores, as elsewhere.
            "curve": record.get("curve")
            or machine_with_cores(str(record["machine"]), record.get("server_cores")),
            "runs": profile_words(record.get("profile")),
            "decides": record.get("profile") == FULL_PROFILE,
            "bound": BOUND if record.get("client_saturated") else NOT_BOUND,
            "machines": record.get("machines") or 1,
        }
        for record in records
    ]
    return [{name: record.get(name) for name in TRADE_DRAWN} for record in worded]


def pooled_over_direct_by_clients(records: Records) -> dict:
    """PgBouncer's trade at a glance: through PgBouncer ÷ straight to the server against clients per server
    core, a colour per way of connecting (a new connection per transaction, held connections) and workload,
    a curve per machine (or the machines' median) with the range of the passes (or of the machines). The
    dashed rule at 1 is direct: above it PgBouncer gave more. Machines of a quick run are drawn dashed and
    lighter (they indicate; the full-profile ones decide); a triangle is a point pgbench bounded."""
    x = alt.X("clients_per_core:Q", scale=alt.Scale(type="log"), title=X_AXES["clients_per_core"])
    y_scale = alt.Scale(type="log")
    y_title = "through PgBouncer ÷ direct (log scale)"
    color = alt.Color("series:N", title="connections", sort=None, legend=line_legend())
    lighter = alt.condition(alt.datum.decides, alt.value(1), alt.value(INDICATIVE_OPACITY))
    # A band and points per machine (or median) and profile; the line's dashes split it by profile already.
    detail = [alt.Detail("curve:N"), alt.Detail("runs:N")]
    base = chart_over(trade_rows(records))
    band = base.mark_area().encode(
        x,
        alt.Y("ratio_low:Q", scale=y_scale, title=y_title),
        alt.Y2("ratio_high:Q"),
        color,
        detail=detail,
        opacity=alt.condition(alt.datum.decides, alt.value(0.18), alt.value(0.07)),
    )
    y = alt.Y("ratio:Q", scale=y_scale, title=y_title)
    # A quick run's curve dashed (and lighter), a full one's solid. Named in the caption, not in a second
    # legend: under a phone's plot the two legends side by side were wider than its column.
    dash = alt.StrokeDash(
        "runs:N",
        title="runs",
        scale=alt.Scale(domain=list(RUNS_DASHES), range=list(RUNS_DASHES.values())),
        legend=None,
    )
    line = base.mark_line().encode(x, y, color, dash, alt.Detail("curve:N"), opacity=lighter)
    points = base.mark_point(filled=True, size=60).encode(
        x,
        y,
        color,
        detail=detail,
        # Named in the caption too, not in a legend of its own.
        shape=alt.Shape(
            "bound:N",
            scale=alt.Scale(domain=[NOT_BOUND, BOUND], range=["circle", "triangle-up"]),
            legend=None,
        ),
        opacity=lighter,
        tooltip=[
            alt.Tooltip("series:N", title="connections"),
            alt.Tooltip("curve:N", title="machine"),
            alt.Tooltip("runs:N"),
            alt.Tooltip("clients:Q"),
            alt.Tooltip("clients_per_core:Q", title="per core", format=",.3~f"),
            alt.Tooltip("pool_size:Q", title="pool size"),
            alt.Tooltip("ratio:Q", title="pooled ÷ direct", format=".3~f"),
            *range_tooltips("ratio_low", "ratio_high", ".3~f", ("low", "high")),
            alt.Tooltip("pooled_tps:Q", title="pooled tps", format=",.0f"),
            alt.Tooltip("direct_tps:Q", title="direct tps", format=",.0f"),
            alt.Tooltip("bound:N", title="pgbench bound"),
            alt.Tooltip("machines:Q"),
        ],
    )
    direct = alt.Chart(alt.Data(values=[{"direct": 1}])).mark_rule(strokeDash=[4, 4]).encode(y="direct:Q")
    return alt.layer(band, line, points, direct).to_dict()


POOLER_VERSION_DRAWN = (
    "label", "version_label", "pooler", COLOUR_FIELD, "curve", "runs", "decides", "clients", "machines",
    "value", "low", "high",
)  # fmt: skip


def pooler_version_rows(records: Records) -> list[dict[str, object]]:
    """connlab.data.chart_rows.pooler_side_by_side's rows of one figure: each pooler version's label wrapped
    for a narrow column (`label`; whole in `version_label`), its pooler kind's colour, and the machine's
    runs in words (a quick run's machine named so, and drawn lighter)."""
    worded = [
        {
            **record,
            "version_label": record["label"],
            "label": wrapped_label(str(record["label"])),
            "curve": record["curve"]
            if record.get("profile") == FULL_PROFILE
            else f"{record['curve']} ({profile_words(record.get('profile'))})",
            "runs": profile_words(record.get("profile")),
            "decides": record.get("profile") == FULL_PROFILE,
        }
        for record in coloured(records, "pooler", "pooler")
    ]
    return [{name: record.get(name) for name in POOLER_VERSION_DRAWN} for record in worded]


def _pooler_version_dots(records: Records, x_title: list[str]) -> dict:
    """A row per pooler version (its label on the axis), a dot per machine beside the others (its shape
    in the legend) at the median of the passes with a rule over their range, in the pooler kind's colour;
    a quick run's machine lighter."""
    x_scale = alt.Scale(type="log")
    y = _category_axis("label")
    # The machines in their names' order, on every row and in the legend alike.
    offset = alt.YOffset("curve:N", sort="ascending")
    # The axis names each row's pooler: no colour legend. The field range on one layer only (two layers'
    # ranges of the same field would be a conflict Vega-Lite warns of).
    ranged = alt.Color(
        "pooler:N", title="pooler", scale=alt.Scale(range=alt.FieldRange(COLOUR_FIELD)), legend=None
    )
    color = alt.Color("pooler:N", title="pooler", legend=None)
    lighter = alt.condition(alt.datum.decides, alt.value(1), alt.value(INDICATIVE_OPACITY))
    base = chart_over(pooler_version_rows(records))
    ranges = base.mark_rule(strokeWidth=3).encode(
        y, alt.X("low:Q", scale=x_scale), alt.X2("high:Q"), ranged, offset, opacity=lighter
    )
    dots = base.mark_point(filled=True, size=90).encode(
        y,
        # The end labels inside the plot's width: the last one would stick out past a phone's column.
        alt.X("value:Q", scale=x_scale, title=x_title, axis=alt.Axis(labelFlush=True)),
        color,
        offset,
        alt.Shape(
            "curve:N", title="machine", sort="ascending", legend=alt.Legend(labelLimit=LEGEND_LABEL_LIMIT)
        ),
        opacity=lighter,
        tooltip=[
            alt.Tooltip("version_label:N", title="pooler"),
            alt.Tooltip("curve:N", title="machine"),
            alt.Tooltip("clients:Q"),
            alt.Tooltip("value:Q", title="median", format=",.3~f"),
            alt.Tooltip("low:Q", title="min", format=",.3~f"),
            alt.Tooltip("high:Q", title="max", format=",.3~f"),
            alt.Tooltip("machines:Q"),
        ],
    )
    return alt.layer(ranges, dots).properties(height=alt.Step(ACROSS_STEP)).to_dict()


def pooler_memory_by_version(records: Records) -> dict:
    """Each pooler version's resident memory, its whole process tree under load (chart_rows'
    pooler_side_by_side, `memory`)."""
    return _pooler_version_dots(
        records, ["resident memory of the whole pooler", "under load, MiB (log scale)"]
    )


def pooler_throughput_by_version(records: Records) -> dict:
    """Each pooler version's throughput at the source article's client count (chart_rows'
    pooler_side_by_side, `throughput`)."""
    return _pooler_version_dots(
        records, ["transactions per second at the source", "article's client count (log scale)"]
    )


def _as_given(records: Records) -> list[dict[str, object]]:
    return [dict(record) for record in records]


def _peak_rows(records: Records) -> list[dict[str, object]]:
    return peak_rows(records)


# Chart kinds whose spec is the same whatever the rows, but for the rows themselves: each with the function
# that makes its rows. The cache builds such a spec once, from no rows, and puts each chart's rows in it,
# instead of running Altair for every chart (a thousand machines draw thousands). A kind listed nowhere
# here is built in full.
ROWS_INTO_TEMPLATE: dict[str, Callable[[Records], list[dict[str, object]]]] = {
    "throughput_vs_clients": _as_given,
    "latency_vs_clients": _as_given,
    "throughput_by_pooler": pooler_path_rows,
    "normalised_throughput": normalised_rows,
    "normalised_spread": spread_rows,
    "connect_cost_dots": _as_given,
    "latency_across_machines": _as_given,
    "pooler_throughput_dots": across_rows,
    "pooler_memory_dots": across_rows,
    "connection_cost_dots": connection_rows,
    "throughput_by_budget": budget_rows,
    "throughput_by_version": version_rows,
    "wait_event_shares": wait_event_rows,
    "idle_memory_measures": _as_given,
    "pooled_over_direct_by_pool": _as_given,
    "pooler_rss_over_time": sustained_rows,
    "peaks_by_cores": _peak_rows,
    "pooled_over_direct_by_clients": trade_rows,
    "pooler_memory_by_version": pooler_version_rows,
    "pooler_throughput_by_version": pooler_version_rows,
}

# Kinds whose spec also reads the machine's figures beyond its rows (the simulator's sliders start at the
# fit), each with the function that makes its template and the one that puts both into it.
FILLED_FROM_TEMPLATE: dict[str, tuple[Callable[[], dict], Callable[[Records, dict], dict]]] = {
    "usl_simulator": (usl_template, filled_usl)
}
TEMPLATED = frozenset(ROWS_INTO_TEMPLATE) | frozenset(FILLED_FROM_TEMPLATE)

# Every chart kind a page may name (a template's `chart(id, kind, rows, ...)`), with the function that builds
# its spec in full from its rows. Nothing else of this module is a kind, however it is named.
KINDS: dict[str, Callable[[Records], dict]] = {
    "throughput_vs_clients": throughput_vs_clients,
    "latency_vs_clients": latency_vs_clients,
    "throughput_by_pooler": throughput_by_pooler,
    "normalised_throughput": normalised_throughput,
    "normalised_spread": normalised_spread,
    "connect_cost_dots": connect_cost_dots,
    "latency_across_machines": latency_across_machines,
    "pooler_throughput_dots": pooler_throughput_dots,
    "pooler_memory_dots": pooler_memory_dots,
    "connection_cost_dots": connection_cost_dots,
    "throughput_by_budget": throughput_by_budget,
    "throughput_by_version": throughput_by_version,
    "wait_event_shares": wait_event_shares,
    "idle_memory_measures": idle_memory_measures,
    "pooled_over_direct_by_pool": pooled_over_direct_by_pool,
    "pooler_rss_over_time": pooler_rss_over_time,
    "peaks_by_cores": peaks_by_cores,
    "pooled_over_direct_by_clients": pooled_over_direct_by_clients,
    "pooler_memory_by_version": pooler_memory_by_version,
    "pooler_throughput_by_version": pooler_throughput_by_version,
    "usl_simulator": usl_simulator,
}


def chart_kind(name: str) -> Callable[[Records], dict]:
    """The function that builds the kind's spec; a name that is not a kind is refused in one line."""
    kind = KINDS.get(name)
    if kind is None:
        known = ", ".join(sorted(KINDS))
        raise LabError(f"chart kind {name!r}: no such kind (connlab.site.charts.kinds.KINDS has {known})")
    return kind
