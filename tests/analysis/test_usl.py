"""The Universal Scalability Law fit: parameters recovered from synthetic curves, the derived peak and
ceiling, the anchored variant, the confidence warning, and the input checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from connlab.analysis import usl
from connlab.analysis.usl import (
    MIN_POINTS_FOR_CONFIDENCE,
    UslFit,
    fit_usl,
    folk_formula_connections,
    littles_law_latency_ms,
    usl_throughput,
)

CLIENTS = [1, 2, 4, 8, 16, 32, 64, 128]
LAMBDA, SIGMA, KAPPA = 1000.0, 0.05, 0.002


def noisy(clients: list[float], kappa: float, seed: int, spread: float = 0.02) -> np.ndarray:
    rng = np.random.default_rng(seed)
    clean = usl_throughput(clients, LAMBDA, SIGMA, kappa)
    return clean * (1.0 + spread * rng.standard_normal(len(clients)))


def test_formula_matches_hand_computation() -> None:
    # N = 10: 1000·10 / (1 + 0.05·9 + 0.002·10·9) = 10000 / 1.63
    assert usl_throughput(10, LAMBDA, SIGMA, KAPPA) == pytest.approx(10000 / 1.63)
    assert usl_throughput([1, 10], LAMBDA, SIGMA, KAPPA).tolist() == pytest.approx([1000.0, 10000 / 1.63])


def test_noise_free_curve_recovers_parameters() -> None:
    fit = fit_usl(CLIENTS, usl_throughput(CLIENTS, LAMBDA, SIGMA, KAPPA))
    assert fit.lambda_ == pytest.approx(LAMBDA, rel=1e-6)
    assert fit.sigma == pytest.approx(SIGMA, rel=1e-6)
    assert fit.kappa == pytest.approx(KAPPA, rel=1e-6)
    assert fit.r_squared == pytest.approx(1.0, abs=1e-9)
    assert fit.points == len(CLIENTS)
    assert not fit.anchored
    assert fit.peak_clients == pytest.approx(math.sqrt((1 - SIGMA) / KAPPA), rel=1e-6)


def test_noise_free_curve_without_coherency_has_no_peak() -> None:
    fit = fit_usl(CLIENTS, usl_throughput(CLIENTS, LAMBDA, SIGMA, 0.0))
    assert fit.lambda_ == pytest.approx(LAMBDA, rel=1e-6)
    assert fit.sigma == pytest.approx(SIGMA, rel=1e-6)
    assert fit.kappa < 1e-12
    assert fit.peak_clients is None
    assert fit.ceiling_tps == pytest.approx(LAMBDA / SIGMA, rel=1e-6)


def test_noisy_curve_recovers_parameters_loosely() -> None:
    fit = fit_usl(CLIENTS, noisy(CLIENTS, KAPPA, seed=7))
    assert fit.lambda_ == pytest.approx(LAMBDA, rel=0.10)
    assert fit.sigma == pytest.approx(SIGMA, abs=0.02)
    assert fit.kappa == pytest.approx(KAPPA, rel=0.20)
    assert fit.r_squared > 0.95
    assert fit.peak_clients == pytest.approx(math.sqrt((1 - SIGMA) / KAPPA), rel=0.15)


def test_noisy_curve_without_coherency_recovers_parameters_loosely() -> None:
    fit = fit_usl(CLIENTS, noisy(CLIENTS, 0.0, seed=11))
    assert fit.lambda_ == pytest.approx(LAMBDA, rel=0.10)
    assert fit.sigma == pytest.approx(SIGMA, abs=0.02)
    assert fit.kappa < 1e-4
    assert fit.ceiling_tps is not None
    assert fit.ceiling_tps == pytest.approx(LAMBDA / SIGMA, rel=0.35)


def test_anchored_fit_keeps_lambda_and_fits_no_better() -> None:
    tps = noisy(CLIENTS, KAPPA, seed=3)
    anchor = float(tps[0])
    free = fit_usl(CLIENTS, tps)
    anchored = fit_usl(CLIENTS, tps, anchor_lambda=anchor)
    assert anchored.anchored
    assert anchored.lambda_ == anchor
    assert anchored.lambda_ != free.lambda_
    # The free fit can choose λ = anchor too, so it is never worse on the same points.
    assert anchored.r_squared <= free.r_squared
    assert anchored.r_squared > 0.9


def test_anchored_fit_on_exact_lambda_recovers_sigma_and_kappa() -> None:
    fit = fit_usl(CLIENTS, usl_throughput(CLIENTS, LAMBDA, SIGMA, KAPPA), anchor_lambda=LAMBDA)
    assert fit.lambda_ == LAMBDA
    assert fit.sigma == pytest.approx(SIGMA, rel=1e-6)
    assert fit.kappa == pytest.approx(KAPPA, rel=1e-6)


@pytest.mark.parametrize("count", [3, 4, 5])
def test_warning_below_minimum_points(count: int) -> None:
    clients = CLIENTS[:count]
    fit = fit_usl(clients, usl_throughput(clients, LAMBDA, SIGMA, KAPPA))
    assert fit.warning is not None
    assert f"only {count} points" in fit.warning
    assert str(MIN_POINTS_FOR_CONFIDENCE) in fit.warning


@pytest.mark.parametrize("count", [MIN_POINTS_FOR_CONFIDENCE, len(CLIENTS)])
def test_no_warning_from_minimum_points(count: int) -> None:
    clients = CLIENTS[:count]
    assert fit_usl(clients, usl_throughput(clients, LAMBDA, SIGMA, KAPPA)).warning is None


def test_repeated_passes_count_distinct_client_counts_for_the_warning() -> None:
    clients = [1, 4, 16, 64] * 3
    fit = fit_usl(clients, usl_throughput(clients, LAMBDA, SIGMA, KAPPA))
    assert fit.points == 12
    assert fit.warning is not None
    assert "4 distinct client counts (12 points)" in fit.warning


def test_fit_on_all_passes() -> None:
    clients = CLIENTS * 3
    tps = np.concatenate([noisy(CLIENTS, KAPPA, seed=seed) for seed in (21, 22, 23)])
    fit = fit_usl(clients, tps)
    assert fit.points == 3 * len(CLIENTS)
    assert fit.warning is None
    assert fit.lambda_ == pytest.approx(LAMBDA, rel=0.10)
    assert fit.sigma == pytest.approx(SIGMA, abs=0.02)
    assert fit.kappa == pytest.approx(KAPPA, rel=0.20)
    assert fit.r_squared > 0.9


def test_realistic_curve() -> None:
    clients = [1, 2, 4, 8, 16, 32, 50, 100, 200, 400]
    tps = [3500, 7000, 12000, 21000, 20000, 17000, 15500, 11000, 9000, 8000]
    fit = fit_usl(clients, tps)
    assert fit.r_squared > 0.8
    assert fit.peak_clients is not None
    assert 4 < fit.peak_clients < 40
    # The peak of the fitted curve is where the formula puts it.
    grid = np.arange(1, 401)
    assert abs(int(grid[np.argmax(fit.predict(grid))]) - fit.peak_clients) <= 1


def test_predict_returns_float_for_a_number_and_array_for_a_sequence() -> None:
    fit = UslFit(LAMBDA, SIGMA, KAPPA, r_squared=1.0, points=8, anchored=False, warning=None)
    single = fit.predict(10)
    assert isinstance(single, float)
    assert single == pytest.approx(10000 / 1.63)
    many = fit.predict([1, 10])
    assert isinstance(many, np.ndarray)
    assert many.tolist() == pytest.approx([1000.0, 10000 / 1.63])


def test_peak_and_ceiling_edge_cases() -> None:
    no_contention = UslFit(LAMBDA, 0.0, KAPPA, r_squared=1.0, points=8, anchored=False, warning=None)
    assert no_contention.ceiling_tps is None
    assert no_contention.peak_clients == pytest.approx(math.sqrt(1 / KAPPA))
    serial = UslFit(LAMBDA, 1.0, KAPPA, r_squared=1.0, points=8, anchored=False, warning=None)
    assert serial.peak_clients is None
    assert serial.ceiling_tps == pytest.approx(LAMBDA)


@pytest.mark.parametrize(
    ("clients", "tps", "message"),
    [
        ([1, 2], [1000, 1900], "at least 3"),
        ([1, 2, 4], [1000, 1900], "differ in length"),
        ([0, 2, 4], [1000, 1900, 3500], "positive"),
        ([-1, 2, 4], [1000, 1900, 3500], "positive"),
        ([1, 2, 4], [1000, float("nan"), 3500], "finite"),
        ([1, 2, 4], [1000, float("inf"), 3500], "finite"),
        ([1, 1, 4], [1000, 1000, 3500], "distinct"),
    ],
)
def test_bad_input_raises(clients: list[float], tps: list[float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fit_usl(clients, tps)


@pytest.mark.parametrize("anchor", [0.0, -5.0, float("nan")])
def test_bad_anchor_raises(anchor: float) -> None:
    with pytest.raises(ValueError, match="anchor_lambda"):
        fit_usl(CLIENTS, usl_throughput(CLIENTS, LAMBDA, SIGMA, KAPPA), anchor_lambda=anchor)


def test_folk_formula() -> None:
    assert folk_formula_connections(8) == 16
    assert folk_formula_connections(8, effective_spindles=1) == 17
    assert folk_formula_connections(2.5, 0.5) == pytest.approx(5.5)


def test_littles_law() -> None:
    # 100 clients at 20,000 tps: each transaction takes 100 / 20000 s = 5 ms.
    assert littles_law_latency_ms(100, 20000) == pytest.approx(5.0)
    assert littles_law_latency_ms(1, 1000) == pytest.approx(1.0)


# -- the solver against scipy's ---------------------------------------------------------------------------
def _scipy_fit(n: np.ndarray, x: np.ndarray, anchor: float | None) -> tuple[float, float, float]:
    """The same fit by scipy.optimize.least_squares (trust-region reflective, tolerances of 1e-12) from the
    same grid starts, the better of κ free and κ = 0 kept as the solver keeps it."""
    from scipy.optimize import least_squares

    lam0 = anchor if anchor is not None else usl._lambda_start(n, x)
    answers = []
    for fixed_kappa in (None, 0.0):
        sigma0, kappa0 = usl._grid_start(usl._grid(n, fixed_kappa), x, lam0, anchor is not None)

        def unpack(p: np.ndarray, fixed_kappa: float | None = fixed_kappa) -> tuple[float, float, float]:
            values = list(p)
            lam = lam0 if anchor is not None else values.pop(0)
            sigma = values.pop(0)
            kappa = fixed_kappa if fixed_kappa is not None else values.pop(0)
            return float(lam), float(sigma), float(kappa)

        free = ([(lam0, lam0 * 1e-9, np.inf, lam0)] if anchor is None else []) + [(sigma0, 0.0, 1.0, 0.05)]
        free += [(kappa0, 0.0, np.inf, 1e-3)] if fixed_kappa is None else []
        x0, lower, upper, typical = (np.array(column) for column in zip(*free, strict=True))
        result = least_squares(
            lambda p, unpack=unpack: (usl_throughput(n, *unpack(p)) - x) / x.max(),
            x0, bounds=(lower, upper), x_scale=typical, method="trf", ftol=1e-12, xtol=1e-12, gtol=1e-12,
        )  # fmt: skip
        params = unpack(result.x)
        answers.append((usl._cost(n, x, params), params))
    return usl._better(answers[0], answers[1])[1]


def _random_curves(count: int) -> list[tuple[list[float], list[float], float | None]]:
    """Curves of every shape the lab measures: rising to a ceiling, peaking early or late, flat, noisy,
    with repeated passes, some anchored at their one-client point."""
    rng = np.random.default_rng(2026)
    curves = []
    for index in range(count):
        clients = sorted(
            rng.choice(
                [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256], rng.integers(3, 12), replace=False
            )
        )
        clients = [float(c) for c in clients] * int(rng.integers(1, 4))
        lam, sigma = 10 ** rng.uniform(1, 4.5), rng.choice([0.0, 10 ** rng.uniform(-4, -0.1)])
        kappa = rng.choice([0.0, 10 ** rng.uniform(-7, -1)])
        tps = usl_throughput(clients, lam, sigma, kappa) * (
            1 + rng.uniform(0, 0.1) * rng.standard_normal(len(clients))
        )
        tps = np.abs(tps) + 1e-3
        anchor = float(tps[0]) if clients[0] == 1 and index % 2 else None
        curves.append((clients, tps.tolist(), anchor))
    return curves


@pytest.mark.slow
def test_the_solver_finds_the_optimum_scipy_finds() -> None:
    """Every fit, solved together, costs no more than scipy's least_squares from the same starts (which the
    solver replaced for speed), and lands on the same parameters."""
    curves = _random_curves(300)
    fits = usl.fit_usl_many(curves)
    for (clients, tps, anchor), fit in zip(curves, fits, strict=True):
        n, x = np.asarray(clients), np.asarray(tps)
        reference = _scipy_fit(n, x, anchor)
        ours = (fit.lambda_, fit.sigma, fit.kappa)
        assert usl._cost(n, x, ours) <= usl._cost(n, x, reference) * (1 + 1e-9) + 1e-18, (
            clients,
            tps,
            anchor,
        )
        # Where σ and κ trade off along a flat valley the parameters may differ in far digits; the curve the
        # site draws and the peak it names do not.
        assert fit.predict(n) == pytest.approx(usl_throughput(n, *reference), rel=1e-4)
        if reference[2] > 1e-6:
            assert fit.kappa == pytest.approx(reference[2], rel=1e-2)


def test_fits_solved_together_are_the_fits_solved_one_by_one() -> None:
    curves = _random_curves(40)
    together = usl.fit_usl_many(curves)
    assert together == [fit_usl(*curve) for curve in curves]


def test_fits_solved_together_raise_for_the_first_problem_that_cannot_be_fitted() -> None:
    """Problems are solved in batches of one length, yet the error is the first invalid problem's, as fitting
    them one by one would raise it."""
    good = ([1.0, 2.0, 4.0, 8.0], [10.0, 19.0, 35.0, 60.0], None)
    uneven = ([1.0, 2.0, 4.0], [1.0, 2.0], None)
    negative = ([1.0, 2.0, 4.0, 8.0], [1.0, -2.0, 3.0, 4.0], None)
    with pytest.raises(ValueError, match="differ in length"):
        usl.fit_usl_many([good, uneven, negative])
    with pytest.raises(ValueError, match="non-negative"):
        usl.fit_usl_many([good, negative, uneven])
    with pytest.raises(ValueError, match="anchor_lambda"):
        usl.fit_usl_many([good, (good[0], good[1], -1.0), negative])
    assert usl.fit_usl_many([good, good]) == [fit_usl(*good)] * 2
