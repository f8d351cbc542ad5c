"""Fit of Gunther's Universal Scalability Law to throughput measurements: how many connections before
throughput falls, and what ceiling it approaches when it never does.

X(N) = λN / (1 + σ(N−1) + κN(N−1)), with λ the throughput of one client, σ the contention (the serial
share of the work) and κ the coherency cost (crosstalk between clients, which is what makes throughput fall).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import OptimizeResult, least_squares

Array = NDArray[np.float64]

MIN_POINTS_FOR_CONFIDENCE = 6
MIN_POINTS = 3

# Below this κ (or σ) the term is treated as absent: a bounded solver approaches zero asymptotically, and a
# κ of 1e-15 would otherwise report a "peak" at millions of clients that nothing in the data supports.
NEGLIGIBLE = 1e-12

SIGMA_MAX = 1.0

# A parameter pinned at its bound by the data is as good as the solver's near-bound value when the costs
# differ by no more than this (relative), and the simpler answer is then preferred.
BOUNDARY_COST_TOLERANCE = 1e-9

# The coarse grid that finds the basin before the solver polishes: σ from 0 to just under 1 and κ from 0
# over ten decades. λ is profiled out (for fixed σ and κ the model is linear in λ), so the grid is 2-D and one
# vectorised evaluation replaces the many blind solver starts an unprofiled search would need.
SIGMA_GRID = np.concatenate([[0.0], np.geomspace(1e-4, 0.99, 40)])
KAPPA_GRID = np.concatenate([[0.0], np.geomspace(1e-9, 1.0, 55)])


def usl_throughput(clients: ArrayLike, lambda_: float, sigma: float, kappa: float) -> Array:
    """X(N) for every N in `clients` (vectorised; a scalar gives a 0-d array)."""
    n = np.asarray(clients, dtype=float)
    return lambda_ * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))


@dataclass(frozen=True)
class UslFit:
    lambda_: float  # throughput of one client (tps)
    sigma: float  # contention
    kappa: float  # coherency (crosstalk)
    r_squared: float  # of the fit on the points it was fitted to
    points: int  # number of (N, X) points fitted
    anchored: bool  # True when λ was fixed to the measured single-client throughput
    warning: str | None  # why the fit is only indicative; None otherwise

    @property
    def peak_clients(self) -> float | None:
        """N* = sqrt((1 − σ)/κ), where throughput peaks; None when it never falls (κ ≈ 0) or σ ≥ 1."""
        if self.kappa < NEGLIGIBLE or self.sigma >= 1.0:
            return None
        return math.sqrt((1.0 - self.sigma) / self.kappa)

    @property
    def ceiling_tps(self) -> float | None:
        """λ/σ, the throughput approached as N grows when κ = 0; None without contention."""
        if self.sigma < NEGLIGIBLE:
            return None
        return self.lambda_ / self.sigma

    @overload
    def predict(self, clients: float) -> float: ...

    @overload
    def predict(self, clients: Sequence[float] | NDArray[np.floating]) -> Array: ...

    def predict(self, clients: float | Sequence[float] | NDArray[np.floating]) -> float | Array:
        """Throughput the fitted curve gives at `clients`: a float for a number, an array otherwise."""
        x = usl_throughput(clients, self.lambda_, self.sigma, self.kappa)
        return float(x) if x.ndim == 0 else x


def fit_usl(clients: Sequence[float], tps: Sequence[float], anchor_lambda: float | None = None) -> UslFit:
    """Bounded non-linear least squares; with anchor_lambda, λ is fixed and only σ, κ are fitted.

    Every pass may be given (repeated N values), not only medians: each (N, X) pair is one residual.
    """
    n, x = _validated(clients, tps)
    if anchor_lambda is not None and not (math.isfinite(anchor_lambda) and anchor_lambda > 0):
        raise ValueError(f"anchor_lambda must be a finite positive throughput, got {anchor_lambda!r}")
    lam0 = anchor_lambda if anchor_lambda is not None else _lambda_start(n, x)
    lam, sigma, kappa = _best_fit(n, x, lam0, anchored=anchor_lambda is not None)
    return UslFit(
        lambda_=lam,
        sigma=sigma,
        kappa=kappa,
        r_squared=_r_squared(x, usl_throughput(n, lam, sigma, kappa)),
        points=int(n.size),
        anchored=anchor_lambda is not None,
        warning=_warning(n),
    )


def folk_formula_connections(cores: float, effective_spindles: float = 0) -> float:
    """The folk rule of thumb for a pool size: connections = cores × 2 + effective spindles."""
    return cores * 2 + effective_spindles


def littles_law_latency_ms(clients: float, tps: float) -> float:
    """Mean latency implied by Little's law for a closed loop of `clients` at `tps`: L = N / X."""
    return clients / tps * 1000.0


def _validated(clients: Sequence[float], tps: Sequence[float]) -> tuple[Array, Array]:
    n = np.asarray(clients, dtype=float).ravel()
    x = np.asarray(tps, dtype=float).ravel()
    if n.size != x.size:
        raise ValueError(f"clients and tps differ in length: {n.size} client counts, {x.size} throughputs")
    if n.size < MIN_POINTS:
        raise ValueError(f"a USL fit needs at least {MIN_POINTS} (clients, tps) points, got {n.size}")
    if not np.all(np.isfinite(n)) or np.any(n <= 0):
        raise ValueError(f"client counts must be finite and positive, got {n.tolist()}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"throughputs must be finite numbers, got {x.tolist()}")
    if np.any(x < 0) or not np.any(x > 0):
        raise ValueError(f"throughputs must be non-negative and not all zero, got {x.tolist()}")
    # Three parameters cannot be told apart on fewer distinct client counts, however many passes each has.
    distinct = np.unique(n).size
    if distinct < MIN_POINTS:
        raise ValueError(f"a USL fit needs at least {MIN_POINTS} distinct client counts, got {distinct}")
    return n, x


def _lambda_start(n: Array, x: Array) -> float:
    # At the smallest N contention has had least effect, so X/N there is the best guess at one client's
    # throughput; the mean covers repeated passes at that N.
    smallest = n == n.min()
    guess = float(np.mean(x[smallest] / n[smallest]))
    return guess if guess > 0 else float(np.max(x / n))


def _grid_start(
    n: Array, x: Array, lam0: float, anchored: bool, fixed_kappa: float | None
) -> tuple[float, float]:
    """The (σ, κ) of the grid with the lowest cost, λ at its best value for each (or the anchor)."""
    kappas = KAPPA_GRID if fixed_kappa is None else np.array([fixed_kappa])
    sigma, kappa = (grid.ravel()[:, None] for grid in np.meshgrid(SIGMA_GRID, kappas, indexing="ij"))
    shape = n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))  # X(N) / λ, one row per grid point
    if anchored:
        lam = np.full((shape.shape[0], 1), lam0)
    else:
        lam = np.maximum((shape @ x) / np.einsum("ij,ij->i", shape, shape), lam0 * 1e-9)[:, None]
    best = int(np.argmin(np.sum((lam * shape - x) ** 2, axis=1)))
    return float(sigma[best, 0]), float(kappa[best, 0])


def _best_fit(n: Array, x: Array, lam0: float, anchored: bool) -> tuple[float, float, float]:
    best: tuple[float, tuple[float, float, float]] | None = None
    for fixed_kappa in (None, 0.0):
        # One start per shape of model: the grid has already crossed the long flat valleys of the USL
        # surface (σ and κ trade off against each other) that once took many blind starts.
        sigma0, kappa0 = _grid_start(n, x, lam0, anchored, fixed_kappa)
        result = _solve(n, x, lam0, sigma0, kappa0, anchored, fixed_kappa)
        candidate = (_cost(n, x, result), result)
        best = candidate if best is None else _better(best, candidate)
    assert best is not None
    return best[1]


def _better(
    a: tuple[float, tuple[float, float, float]], b: tuple[float, tuple[float, float, float]]
) -> tuple[float, tuple[float, float, float]]:
    # Lower cost wins, but when two answers fit equally well the one with κ = 0 is kept: the solver's
    # near-zero κ would claim a peak the data do not show. The absolute floor makes two exact fits (cost 0)
    # count as equal.
    (cost_a, params_a), (cost_b, params_b) = a, b
    slack = BOUNDARY_COST_TOLERANCE * max(cost_a, cost_b) + 1e-24
    if abs(cost_a - cost_b) <= slack:
        return a if params_a[2] <= params_b[2] else b
    return a if cost_a < cost_b else b


def _solve(
    n: Array,
    x: Array,
    lam0: float,
    sigma0: float,
    kappa0: float,
    anchored: bool,
    fixed_kappa: float | None,
) -> tuple[float, float, float]:
    # Residuals are divided by the largest throughput so that the cost is of order one whatever the units,
    # which keeps the solver's tolerances meaningful at 20,000 tps as at 20.
    scale = float(np.max(x))

    def unpack(p: Array) -> tuple[float, float, float]:
        values = list(p)
        lam = lam0 if anchored else values.pop(0)
        sigma = values.pop(0)
        kappa = fixed_kappa if fixed_kappa is not None else values.pop(0)
        return float(lam), float(sigma), float(kappa)

    def residuals(p: Array) -> Array:
        return (usl_throughput(n, *unpack(p)) - x) / scale

    def jacobian(p: Array) -> Array:
        # X = λN/D with D = 1 + σ(N−1) + κN(N−1): ∂X/∂λ = N/D, ∂X/∂σ = −λN(N−1)/D², ∂X/∂κ = −λN²(N−1)/D².
        # Exact derivatives spare the solver a finite-difference evaluation per parameter and step.
        lam, sigma, kappa = unpack(p)
        denominator = 1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0)
        d_sigma = -lam * n * (n - 1.0) / denominator**2
        columns = [] if anchored else [n / denominator]
        columns.append(d_sigma)
        if fixed_kappa is None:
            columns.append(d_sigma * n)
        return np.column_stack(columns) / scale

    # One (start, lower, upper, typical size) per free parameter; the typical sizes let the solver step
    # sensibly on λ ~ 10^4 and κ ~ 10^-3 at once.
    free: list[tuple[float, float, float, float]] = []
    if not anchored:
        # λ must stay positive; a tiny fraction of the start stands in for the open bound λ > 0.
        free.append((lam0, lam0 * 1e-9, np.inf, lam0))
    free.append((sigma0, 0.0, SIGMA_MAX, 0.05))
    if fixed_kappa is None:
        free.append((kappa0, 0.0, np.inf, 1e-3))
    x0, lower, upper, x_scale = (np.array(column) for column in zip(*free, strict=True))

    result: OptimizeResult = least_squares(
        residuals,
        x0,
        jac=jacobian,
        bounds=(lower, upper),
        x_scale=x_scale,
        method="trf",
        ftol=1e-12,
        xtol=1e-12,
        gtol=1e-12,
        max_nfev=2000,
    )
    return unpack(result.x)


def _cost(n: Array, x: Array, params: tuple[float, float, float]) -> float:
    return float(np.sum((usl_throughput(n, *params) - x) ** 2))


def _r_squared(observed: Array, fitted: Array) -> float:
    ss_res = float(np.sum((observed - fitted) ** 2))
    ss_tot = float(np.sum((observed - observed.mean()) ** 2))
    # Flat data leave nothing to explain: a curve through them is perfect, any other explains nothing.
    if ss_tot == 0.0:
        return 1.0 if ss_res == 0.0 else 0.0
    return 1.0 - ss_res / ss_tot


def _warning(n: Array) -> str | None:
    distinct = int(np.unique(n).size)
    if distinct >= MIN_POINTS_FOR_CONFIDENCE:
        return None
    # Repeated passes at one N narrow the noise there but say nothing about the curve between client
    # counts, so confidence is judged on distinct client counts.
    if distinct == n.size:
        counted = f"{distinct} points"
    else:
        counted = f"{distinct} distinct client counts ({n.size} points)"
    return f"only {counted}: fewer than {MIN_POINTS_FOR_CONFIDENCE}, the fit is indicative"
