"""Altair charts built from aggregated records; the renderer embeds their specs in the pages.

Charts set no colours for text or background: charts.js applies the light or dark theme in the browser,
so a chart follows the reader's palette toggle.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import altair as alt

Records = Sequence[dict[str, object]]
WIDTH = "container"
HEIGHT = 300


def _base(records: Records) -> alt.Chart:
    return alt.Chart(alt.Data(values=list(records))).properties(width=WIDTH, height=HEIGHT)


def _clients_axis(title: str = "clients (log scale)") -> alt.X:
    return alt.X("clients:Q", scale=alt.Scale(type="log"), title=title)


def metric_vs_clients(
    records: Records,
    median: str,
    low: str,
    high: str,
    title: str,
    log_y: bool = False,
    color: str = "workload",
) -> dict:
    """A median line per series with a shaded min–max band: the run-to-run range stays visible."""
    y_scale = alt.Scale(type="log") if log_y else alt.Scale(zero=True)
    color_enc = alt.Color(f"{color}:N", title=color)
    band = (
        _base(records)
        .mark_area(opacity=0.2)
        .encode(
            x=_clients_axis(),
            y=alt.Y(f"{low}:Q", scale=y_scale, title=title),
            y2=f"{high}:Q",
            color=color_enc,
        )
    )
    tooltip = [
        alt.Tooltip(f"{color}:N"),
        alt.Tooltip("clients:Q"),
        alt.Tooltip(f"{median}:Q", title="median", format=",.3~f"),
        alt.Tooltip(f"{low}:Q", title="min", format=",.3~f"),
        alt.Tooltip(f"{high}:Q", title="max", format=",.3~f"),
    ]
    line = (
        _base(records)
        .mark_line(point=True)
        .encode(
            x=_clients_axis(),
            y=alt.Y(f"{median}:Q", scale=y_scale, title=title),
            color=color_enc,
            tooltip=tooltip,
        )
    )
    return alt.layer(band, line).to_dict()


def throughput_vs_clients(records: Records) -> dict:
    return metric_vs_clients(records, "tps_median", "tps_min", "tps_max", "transactions per second")


def latency_vs_clients(records: Records) -> dict:
    return metric_vs_clients(
        records,
        "latency_avg_median",
        "latency_avg_min",
        "latency_avg_max",
        "mean latency, ms (log scale)",
        log_y=True,
    )


# Where a curve's figures come from, in the words its legend shows (never the raw boolean).
MEASURED_HERE = "measured here"
PUBLISHED_ARTICLE = "published article"


def normalised_throughput(records: Records) -> dict:
    """Every machine on one chart: clients per server core against throughput as a share of that machine's
    peak. Published curves are dashed, and the dash legend says which curves come from an article."""
    labelled = [
        {**record, "figures": PUBLISHED_ARTICLE if record["published"] else MEASURED_HERE}
        for record in records
    ]
    base = _base(labelled).encode(
        x=alt.X(
            "clients_per_core:Q", scale=alt.Scale(type="log"), title="clients per server core (log scale)"
        ),
        y=alt.Y("tps_share:Q", title="throughput, share of the machine's peak", axis=alt.Axis(format="%")),
        color=alt.Color("machine:N", title="machine"),
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


def connect_cost_dots(records: Records) -> dict:
    """Time per transaction for each way of connecting: a dot at the median, a rule over the range of the
    passes. The scale is logarithmic (the ways differ by orders of magnitude), where bars cannot start."""
    x_scale = alt.Scale(type="log")
    y = alt.Y("workload:N", title=None, sort=None)
    color = alt.Color("transport:N")
    tooltip = [
        alt.Tooltip("workload:N"),
        alt.Tooltip("clients:Q"),
        alt.Tooltip("ms_per_tx_median:Q", title="median ms", format=".3~f"),
        alt.Tooltip("ms_per_tx_min:Q", title="min ms", format=".3~f"),
        alt.Tooltip("ms_per_tx_max:Q", title="max ms", format=".3~f"),
        alt.Tooltip("connection_ms_median:Q", title="connection ms", format=".3~f"),
    ]
    ranges = (
        _base(records)
        .mark_rule(strokeWidth=3)
        .encode(y=y, x=alt.X("ms_per_tx_min:Q", scale=x_scale), x2="ms_per_tx_max:Q", color=color)
    )
    dots = (
        _base(records)
        .mark_point(filled=True, size=90)
        .encode(
            y=y,
            x=alt.X("ms_per_tx_median:Q", scale=x_scale, title="ms per transaction, log scale"),
            color=color,
            tooltip=tooltip,
        )
    )
    return alt.layer(ranges, dots).properties(height=200).to_dict()


def throughput_by_budget(records: Records) -> dict:
    """One line per server CPU budget, against clients per core of that budget."""
    labelled = [{**record, "budget_cores": f"{record['budget']:g} core(s)"} for record in records]
    return (
        _base(labelled)
        .mark_line(point=True)
        .encode(
            x=alt.X(
                "clients_per_core:Q", scale=alt.Scale(type="log"), title="clients per core of the budget"
            ),
            y=alt.Y("tps_median:Q", title="transactions per second"),
            color=alt.Color("budget_cores:N", title="server budget"),
            tooltip=[
                alt.Tooltip("budget_cores:N", title="budget"),
                alt.Tooltip("clients:Q"),
                alt.Tooltip("tps_median:Q", title="median", format=",.0f"),
                alt.Tooltip("tps_min:Q", title="min", format=",.0f"),
                alt.Tooltip("tps_max:Q", title="max", format=",.0f"),
            ],
        )
        .to_dict()
    )


def wait_event_shares(records: Records) -> dict:
    """Stacked bars: each client count's active-backend samples split into running and the most frequent
    waits (the rest pooled as "other"), one row of bars per workload."""
    labelled = [
        {**record, "point": f"{record['workload']}, {record['clients']} clients"} for record in records
    ]
    return (
        _base(labelled)
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
                alt.Tooltip("share_min:Q", title="min of passes", format=".1%"),
                alt.Tooltip("share_max:Q", title="max of passes", format=".1%"),
                alt.Tooltip("samples:Q", format=","),
            ],
        )
        .properties(height=alt.Step(28))
        .to_dict()
    )


def idle_memory_measures(records: Records) -> dict:
    """Each way of counting the server's memory against the number of idle connections."""
    return (
        _base(records)
        .mark_line(point=True)
        .encode(
            x=alt.X("clients:Q", title="idle connections"),
            y=alt.Y("mib:Q", scale=alt.Scale(type="log"), title="MiB (log scale)"),
            color=alt.Color("measure:N", title="measure"),
            tooltip=[
                alt.Tooltip("measure:N"),
                alt.Tooltip("clients:Q", title="connections"),
                alt.Tooltip("mib:Q", title="MiB (median)", format=",.1f"),
            ],
        )
        .to_dict()
    )


# Points of the model curve: spaced geometrically, so the line is smooth on the log clients axis.
USL_CURVE_POINTS = 120
# The curve runs this far past the largest measured client count, so a fall after the data shows.
USL_CURVE_REACH = 1.5
# Slider steps: about this many steps over a slider's range, rounded down to a power of ten.
USL_SLIDER_STEPS = 1000
USL_MODEL = "model (sliders)"
USL_MEASURED = "measured (median, min–max)"
USL_PEAK = "N*, where the model peaks"


def _usl(n: float, lambda_: float, sigma: float, kappa: float) -> float:
    return lambda_ * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def _usl_slider(name: str, label: str, value: float, top: float) -> alt.Parameter:
    """A variable bound to a range slider from 0 to top, starting at the fitted value rounded to the
    slider's step (the slider shows its value: 2065, not 2065.1602130005567)."""
    decimals = -math.floor(math.log10(top / USL_SLIDER_STEPS))
    step = 10.0**-decimals
    start = round(value, max(decimals, 0))
    return alt.param(name=name, value=start, bind=alt.binding_range(min=0, max=top, step=step, name=label))


def _usl_sliders(lambda_: float, sigma: float, kappa: float) -> list[alt.Parameter]:
    """λ, σ and κ, each with room to explore well past the fit (σ below 1, where the model holds)."""
    return [
        _usl_slider("lambda_", "λ, one client's tps ", lambda_, max(3 * lambda_, 1.0)),
        _usl_slider("sigma", "σ, contention ", sigma, min(max(0.5, 2 * sigma), 1.0)),
        _usl_slider("kappa", "κ, crosstalk ", kappa, max(5 * kappa, 0.01)),
    ]


def usl_simulator(records: Records) -> dict:
    """The Universal Scalability Law with λ, σ and κ on sliders, over one machine's measured throughput.

    records: the measured points of one machine and workload, with the fit (fit_lambda, fit_sigma,
    fit_kappa) repeated on every row; the sliders start at the fit. Both axes keep a fixed domain, so
    moving a slider moves the model curve against measurements that stay put. Every expression is
    plain arithmetic, pow, sqrt and round on the params: charts.js evaluates them with vega-interpreter
    (no `new Function`), which supports only such expressions.
    """
    if not records:
        raise ValueError("usl_simulator needs at least one measured point")
    first = records[0]
    fit = (float(first["fit_lambda"]), float(first["fit_sigma"]), float(first["fit_kappa"]))
    n_max = USL_CURVE_REACH * max(float(record["clients"]) for record in records)
    curve_n = [n_max ** (i / (USL_CURVE_POINTS - 1)) for i in range(USL_CURVE_POINTS)]
    y_top = 1.2 * max(max(float(r["tps_max"]) for r in records), *(_usl(n, *fit) for n in curve_n))
    x = alt.X(
        "clients:Q", scale=alt.Scale(type="log", domain=[1, n_max], nice=False), title="clients (log scale)"
    )
    y_scale = alt.Scale(domain=[0, y_top])
    color = alt.Color("series:N", title=None, sort=[USL_MODEL, USL_MEASURED, USL_PEAK])
    layers = [
        _usl_model_line(n_max, x, y_scale, color),
        *_usl_measured(records, x, y_scale, color),
        *_usl_peak(n_max, color),
    ]
    return alt.layer(*layers).add_params(*_usl_sliders(*fit)).to_dict()


def _usl_model_line(n_max: float, x: alt.X, y_scale: alt.Scale, color: alt.Color) -> alt.Chart:
    """X(N) = λN / (1 + σ(N−1) + κN(N−1)) for N from 1 to n_max, recomputed whenever a slider moves."""
    return (
        alt.Chart(alt.sequence(0, USL_CURVE_POINTS, as_="i"))
        .transform_calculate(
            clients=f"pow({n_max!r}, datum.i / {USL_CURVE_POINTS - 1})",
            series=json.dumps(USL_MODEL),
        )
        .transform_calculate(
            tps="lambda_ * datum.clients"
            " / (1 + sigma * (datum.clients - 1) + kappa * datum.clients * (datum.clients - 1))"
        )
        .mark_line(clip=True)
        .encode(x=x, y=alt.Y("tps:Q", scale=y_scale, title="transactions per second"), color=color)
        .properties(name="usl_model", width=WIDTH, height=HEIGHT)
    )


def _usl_measured(records: Records, x: alt.X, y_scale: alt.Scale, color: alt.Color) -> list[alt.Chart]:
    """The measured medians as points, with a rule over the min–max of the passes."""
    labelled = [{**record, "series": USL_MEASURED} for record in records]
    tooltip = [
        alt.Tooltip("clients:Q"),
        alt.Tooltip("tps_median:Q", title="median", format=",.0f"),
        alt.Tooltip("tps_min:Q", title="min", format=",.0f"),
        alt.Tooltip("tps_max:Q", title="max", format=",.0f"),
    ]
    ranges = (
        _base(labelled)
        .mark_rule()
        .encode(x=x, y=alt.Y("tps_min:Q", scale=y_scale), y2="tps_max:Q", color=color, tooltip=tooltip)
        .properties(name="usl_ranges")
    )
    medians = (
        _base(labelled)
        .mark_point(filled=True, size=50)
        .encode(x=x, y=alt.Y("tps_median:Q", scale=y_scale), color=color, tooltip=tooltip)
        .properties(name="usl_measured")
    )
    return [ranges, medians]


def _usl_peak(n_max: float, color: alt.Color) -> list[alt.Chart]:
    """N* = sqrt((1 − σ)/κ), where the model peaks: a rule and a label, absent when the model has no peak
    (κ = 0 or σ ≥ 1) or the peak lies outside the clients axis. They take a series colour: the default
    colour of rules and text is black, unreadable on the dark palette."""
    peak = (
        alt.Chart(alt.Data(values=[{"at": "peak"}]))
        .transform_filter("kappa > 0 && sigma < 1")
        .transform_calculate(peak_clients="sqrt((1 - sigma) / kappa)", series=json.dumps(USL_PEAK))
        .transform_filter(f"datum.peak_clients >= 1 && datum.peak_clients <= {n_max!r}")
        .transform_calculate(label="'N* ≈ ' + round(datum.peak_clients * 10) / 10")
        .properties(width=WIDTH, height=HEIGHT)
    )
    x = alt.X("peak_clients:Q")
    rule = peak.mark_rule(strokeDash=[4, 4]).encode(x=x, color=color).properties(name="usl_peak_rule")
    label = (
        peak.mark_text(align="left", baseline="top", dx=4, dy=4)
        .encode(x=x, y=alt.value(0), text="label:N", color=color)
        .properties(name="usl_peak_label")
    )
    return [rule, label]
