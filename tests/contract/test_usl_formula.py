"""The one USL formula (connlab.contract.usl_formula) and what is made of it: the fit's vectorised form and
the Vega expression the simulator chart's browser evaluates (connlab.site.charts.usl) give its numbers."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from connlab.analysis.usl import UslFit, usl_throughput
from connlab.contract.usl_formula import peak_clients, throughput
from connlab.site.charts.usl import USL_MODEL_TPS, USL_PEAK_CLIENTS, USL_SLIDERS, VegaTerm, peak_label

# Fits as the site shows them, with no crosstalk, no contention and σ at its bound.
FITS = [(2065.16, 0.3678, 0.004152), (1000.0, 0.05, 0.0), (812.5, 0.0, 1e-5), (10.0, 1.0, 0.02)]
CLIENTS = [1, 1.5, 2, 7, 50, 333.3, 1e4]


def test_the_formula_by_hand() -> None:
    # N = 10: 1000·10 / (1 + 0.05·9 + 0.002·10·9) = 10000 / 1.63
    assert throughput(10, 1000.0, 0.05, 0.002) == pytest.approx(10000 / 1.63)


@pytest.mark.parametrize("fit", FITS)
def test_the_vectorised_form_is_the_formula(fit: tuple[float, float, float]) -> None:
    assert usl_throughput(CLIENTS, *fit).tolist() == [throughput(float(n), *fit) for n in CLIENTS]


def test_the_chart_expression_is_the_formula_written_for_vega() -> None:
    assert USL_MODEL_TPS == (
        "lambda_ * datum.clients"
        " / (1 + sigma * (datum.clients - 1) + kappa * datum.clients * (datum.clients - 1))"
    )


@pytest.mark.parametrize("fit", FITS)
def test_the_chart_expression_gives_the_formulas_numbers(fit: tuple[float, float, float]) -> None:
    """Vega's + - * / and brackets are Python's, on the same doubles in the same order: evaluated on the
    sliders' values, the expression gives the formula's numbers exactly."""
    for n in CLIENTS:
        names = {"datum": SimpleNamespace(clients=n), **dict(zip(USL_SLIDERS, fit, strict=True))}
        assert eval(USL_MODEL_TPS, {"__builtins__": {}}, names) == throughput(n, *fit)


def test_the_peak_by_hand() -> None:
    # σ = 0.19, κ = 0.0001: sqrt(0.81 / 0.0001) = 90
    assert peak_clients(0.19, 0.0001) == pytest.approx(90.0)


def test_the_chart_peak_is_the_formula_written_for_vega() -> None:
    assert USL_PEAK_CLIENTS == "sqrt((1 - sigma) / kappa)"
    sigma, kappa = 0.3678, 0.004152
    names = {"sqrt": math.sqrt, "sigma": sigma, "kappa": kappa}
    assert eval(USL_PEAK_CLIENTS, {"__builtins__": {}}, names) == peak_clients(sigma, kappa)


def test_the_fit_the_label_and_the_formula_agree_on_the_peak() -> None:
    fit = UslFit(2065.16, 0.3678, 0.004152, 0.99, 8, anchored=True, warning=None)
    assert fit.peak_clients == peak_clients(0.3678, 0.004152)
    assert peak_label(0.3678, 0.004152) == f"{round(peak_clients(0.3678, 0.004152), 1):.1f}"


def test_terms_are_bracketed_as_python_groups_them() -> None:
    a, b, c = VegaTerm("a"), VegaTerm("b"), VegaTerm("c")
    assert (a + (b + c)).text == "a + (b + c)"
    assert (a + b + c).text == "a + b + c"
    assert (a - (b - c)).text == "a - (b - c)"
    assert ((a + b) * c).text == "(a + b) * c"
    assert (a / (b * c)).text == "a / (b * c)"
    assert (a * b / c).text == "a * b / c"
    assert (2 - a / 0.5).text == "2 - a / 0.5"
    with pytest.raises(TypeError):
        a + float("nan")  # not a number Vega can read
