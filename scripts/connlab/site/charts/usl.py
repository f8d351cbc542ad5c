"""The Universal Scalability Law simulator: λ, σ and κ on sliders over one machine's measured throughput.

Kept apart from kinds.py (one chart, one purpose) with the same conventions: container width, no colours
for text or background (charts.js themes them).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from connlab.contract.usl_formula import peak_clients, throughput
from connlab.site.charts.frame import HEIGHT, WIDTH, Records, chart_over, range_tooltips
from connlab.site.charts.lazy import lazy_import
from connlab.site.charts.legends import line_legend
from connlab.site.charts.spec_template import emptied, with_rows

if TYPE_CHECKING:
    import altair as alt
else:
    alt = lazy_import("altair")

# Points of the model curve: spaced geometrically, so the line is smooth on the log clients axis.
USL_CURVE_POINTS = 120
# The curve runs this far past the largest measured client count, so a fall after the data shows.
USL_CURVE_REACH = 1.5
# Slider steps: about this many steps over a slider's range, rounded down to a power of ten.
USL_SLIDER_STEPS = 1000
USL_MODEL = "model (sliders)"
USL_MEASURED = "measured (median, min–max)"
USL_PEAK = "N*, where the model peaks"
# The sliders' params in the formula's order (λ, σ, κ): the model curve's expression reads these names.
USL_SLIDERS = ("lambda_", "sigma", "kappa")


def _operator(symbol: str, *, reflected: bool = False) -> Callable[[VegaTerm, object], VegaTerm]:
    """A VegaTerm's method for the operator: self on its left, or on its right where reflected (2 - term)."""
    if reflected:
        return lambda term, other: _combined(other, symbol, term)
    return lambda term, other: _combined(term, symbol, other)


@dataclass(frozen=True)
class VegaTerm:
    """A Vega expression made by running Python's + - * / on names and numbers, so that a formula written
    once in Python is also the expression the browser evaluates. It is bracketed as Python groups it: an
    operand that binds less tightly than its operator, and a right-hand one that binds as tightly (in floats
    a + (b + c) is not (a + b) + c), so the browser computes what Python does, in the same order."""

    text: str
    binding: int = 3  # a name or a number; + and - bind at 1, * and / at 2

    __add__, __radd__ = _operator("+"), _operator("+", reflected=True)
    __sub__, __rsub__ = _operator("-"), _operator("-", reflected=True)
    __mul__, __rmul__ = _operator("*"), _operator("*", reflected=True)
    __truediv__, __rtruediv__ = _operator("/"), _operator("/", reflected=True)


def _term(value: object) -> VegaTerm | None:
    if isinstance(value, VegaTerm):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return VegaTerm(repr(value))
    return None


def _combined(left: object, operator: str, right: object) -> VegaTerm:
    left_term, right_term = _term(left), _term(right)
    if left_term is None or right_term is None:
        return NotImplemented
    binding = 1 if operator in "+-" else 2
    left_text = left_term.text if left_term.binding >= binding else f"({left_term.text})"
    right_text = right_term.text if right_term.binding > binding else f"({right_term.text})"
    return VegaTerm(f"{left_text} {operator} {right_text}", binding)


# X(N) at a point of the model curve, as the browser evaluates it whenever a slider moves: the one formula
# (connlab.contract.usl_formula) run on the curve point's clients and the sliders' names.
USL_MODEL_TPS = throughput(VegaTerm("datum.clients"), *map(VegaTerm, USL_SLIDERS)).text
# N*, where the model peaks, from the same module, with Vega's sqrt.
USL_PEAK_CLIENTS = peak_clients(
    VegaTerm("sigma"), VegaTerm("kappa"), lambda term: VegaTerm(f"sqrt({term.text})")
).text


def _usl_slider(name: str, label: str, value: float, top: float) -> dict:
    """A variable bound to a range slider from 0 to top, starting at the fitted value rounded to the
    slider's step (the slider shows its value: 2065, not 2065.1602130005567)."""
    decimals = -math.floor(math.log10(top / USL_SLIDER_STEPS))
    step = 10.0**-decimals
    start = round(value, max(decimals, 0))
    return {"name": name, "value": start, "bind": {"input": "range", "min": 0, "max": top, "step": step,
                                                   "name": label}}  # fmt: skip


def usl_params(records: Records) -> list[dict]:
    """Everything of the chart that depends on the machine besides its rows, as Vega-Lite params: λ, σ and
    κ on sliders with room to explore well past the fit (σ below 1, where the model holds), and the
    axes' reach (n_max, y_top), which the scales and the model curve read."""
    if not records:
        raise ValueError("usl_simulator needs at least one measured point")
    first = records[0]
    fit = (float(first["fit_lambda"]), float(first["fit_sigma"]), float(first["fit_kappa"]))
    lambda_, sigma, kappa = fit
    n_max = USL_CURVE_REACH * max(float(record["clients"]) for record in records)
    curve_n = [n_max ** (i / (USL_CURVE_POINTS - 1)) for i in range(USL_CURVE_POINTS)]
    y_top = 1.2 * max(max(float(r["tps_max"]) for r in records), *(throughput(n, *fit) for n in curve_n))
    return [
        # Each slider's track is centred on the fitted value (twice it at the end), so the fit sits mid-track
        # and its last digits survive the step; σ stops at 1, where the model ends, and a zero fit gets room.
        _usl_slider("lambda_", "λ, one client's tps ", lambda_, 2 * lambda_ if lambda_ > 0 else 1.0),
        _usl_slider("sigma", "σ, contention ", sigma, min(2 * sigma, 1.0) if sigma > 0 else 0.5),
        _usl_slider("kappa", "κ, crosstalk ", kappa, 2 * kappa if kappa > 0 else 0.01),
        {"name": "n_max", "value": n_max},
        {"name": "y_top", "value": y_top},
    ]


def shown(value: float, step: float) -> str:
    """A slider's value as the page shows it (JavaScript's number to text): the digits its step keeps, no
    trailing zeros, no exponent."""
    decimals = max(-math.floor(math.log10(step) + 1e-9), 0)
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def peak_label(sigma: float, kappa: float) -> str | None:
    """N* as the chart's label writes it (_usl_peak: round(N* × 10) / 10, half up, in JavaScript's
    digits); None where the model has no peak."""
    if kappa <= 0 or sigma >= 1:
        return None
    tenths = math.floor(peak_clients(sigma, kappa) * 10 + 0.5)
    return str(tenths // 10) if tenths % 10 == 0 else f"{tenths / 10:.1f}"


def usl_start(records: Records) -> dict[str, str | None]:
    """What the simulator shows before a slider moves, as text: each slider's starting value as the slider
    prints it, and N* as the chart's label does from those same values. The page's sentence above the
    chart prints these, so the sentence, the sliders and the label never disagree by a rounding."""
    params = {p["name"]: p for p in usl_params(records)}
    values = {name: (params[name]["value"], params[name]["bind"]["step"]) for name in USL_SLIDERS}
    return {
        **{name: shown(value, step) for name, (value, step) in values.items()},
        "n_star": peak_label(values["sigma"][0], values["kappa"][0]),
    }


def usl_rows(records: Records) -> list[dict[str, object]]:
    return [{**record, "series": USL_MEASURED} for record in records]


def usl_simulator(records: Records) -> dict:
    """The Universal Scalability Law with λ, σ and κ on sliders, over one machine's measured throughput.

    records: the measured points of one machine and workload, with the fit (fit_lambda, fit_sigma,
    fit_kappa) repeated on every row; the sliders start at the fit. Both axes keep a fixed domain, so
    moving a slider moves the model curve against measurements that stay put. Every expression is
    plain arithmetic, pow, sqrt and round on the params: charts.js evaluates them with vega-interpreter
    (no `new Function`), which supports only such expressions. Whatever depends on the machine is a param
    or a row (usl_params, usl_rows), so one spec serves every machine with those two put in (filled_usl).
    """
    params = usl_params(records)
    x = alt.X(
        "clients:Q",
        scale=alt.Scale(type="log", domain=[1, alt.ExprRef("n_max")], nice=False),
        title="clients (log scale)",
    )
    y_scale = alt.Scale(domain=[0, alt.ExprRef("y_top")])
    # Marked as every line chart's legend is: a stroke with a point (charts.legends).
    color = alt.Color("series:N", title=None, sort=[USL_MODEL, USL_MEASURED, USL_PEAK], legend=line_legend())
    layers = [
        _usl_model_line(x, y_scale, color),
        *_usl_measured(usl_rows(records), x, y_scale, color),
        *_usl_peak(color),
    ]
    return {**alt.layer(*layers).to_dict(), "params": params}


# Any machine's figures make the template: what depends on them is put in again for every chart.
USL_SAMPLE = (
    {"clients": 1, "fit_lambda": 1.0, "fit_sigma": 0.1, "fit_kappa": 0.01, "tps_median": 1.0, "tps_min": 1.0,
     "tps_max": 1.0},
)  # fmt: skip


@functools.cache
def usl_template() -> dict:
    return emptied(usl_simulator(USL_SAMPLE), usl_rows(USL_SAMPLE))


def filled_usl(records: Records, template: dict) -> dict:
    """What usl_simulator returns, without running Altair: the template (usl_template's) given this machine's
    params and rows."""
    return {**with_rows(template, usl_rows(records)), "params": usl_params(records)}


def _usl_model_line(x: alt.X, y_scale: alt.Scale, color: alt.Color) -> alt.Chart:
    """X(N) = λN / (1 + σ(N−1) + κN(N−1)) for N from 1 to n_max, recomputed whenever a slider moves."""
    return (
        alt.Chart(alt.sequence(0, USL_CURVE_POINTS, as_="i"))
        .transform_calculate(
            clients=f"pow(n_max, datum.i / {USL_CURVE_POINTS - 1})",
            series=json.dumps(USL_MODEL),
        )
        .transform_calculate(tps=USL_MODEL_TPS)
        .mark_line(clip=True)
        .encode(x=x, y=alt.Y("tps:Q", scale=y_scale, title="transactions per second"), color=color)
        .properties(name="usl_model", width=WIDTH, height=HEIGHT)
    )


def _usl_measured(labelled: Records, x: alt.X, y_scale: alt.Scale, color: alt.Color) -> list[alt.Chart]:
    """The measured medians as points, with a rule over the min–max of the passes."""
    tooltip = [
        alt.Tooltip("clients:Q"),
        alt.Tooltip("tps_median:Q", title="median", format=",.0f"),
        *range_tooltips("tps_min", "tps_max", ",.0f"),
    ]
    ranges = (
        chart_over(labelled)
        .mark_rule()
        .encode(x=x, y=alt.Y("tps_min:Q", scale=y_scale), y2="tps_max:Q", color=color, tooltip=tooltip)
        .properties(name="usl_ranges")
    )
    medians = (
        chart_over(labelled)
        .mark_point(filled=True, size=50)
        .encode(x=x, y=alt.Y("tps_median:Q", scale=y_scale), color=color, tooltip=tooltip)
        .properties(name="usl_measured")
    )
    return [ranges, medians]


def _usl_peak(color: alt.Color) -> list[alt.Chart]:
    """N* = sqrt((1 − σ)/κ), where the model peaks: a rule and a label, absent when the model has no peak
    (κ = 0 or σ ≥ 1) or the peak lies outside the clients axis. They take a series colour: the default
    colour of rules and text is black, unreadable on the dark palette."""
    peak = (
        alt.Chart(alt.Data(values=[{"at": "peak"}]))
        .transform_filter("kappa > 0 && sigma < 1")
        .transform_calculate(peak_clients=USL_PEAK_CLIENTS, series=json.dumps(USL_PEAK))
        .transform_filter("datum.peak_clients >= 1 && datum.peak_clients <= n_max")
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
