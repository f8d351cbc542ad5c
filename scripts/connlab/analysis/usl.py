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

from connlab.contract.usl_formula import peak_clients, throughput

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
# The grid's (σ, κ) pairs as columns, made once: with κ free, and with κ fixed at 0.
_GRID_FREE_KAPPA = tuple(grid.ravel()[:, None] for grid in np.meshgrid(SIGMA_GRID, KAPPA_GRID, indexing="ij"))
_GRID_NO_KAPPA = (SIGMA_GRID[:, None], np.zeros((SIGMA_GRID.size, 1)))

# The solver stops a fit when an accepted step lowers the cost by less than this share of it (scipy's ftol of
# the fits before), or when its damping has grown past MAX_DAMPING without a step that lowers the cost.
RELATIVE_COST_TOLERANCE = 1e-15
MAX_DAMPING = 1e12
MAX_ITERATIONS = 2000
# Fits solved together: the arrays of a chunk stay a few megabytes.
CHUNK = 4096


def usl_throughput(clients: ArrayLike, lambda_: float, sigma: float, kappa: float) -> Array:
    """X(N) for every N in `clients` (vectorised; a scalar gives a 0-d array)."""
    return throughput(np.asarray(clients, dtype=float), lambda_, sigma, kappa)


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
        return peak_clients(self.sigma, self.kappa)

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
    return fit_usl_many([(clients, tps, anchor_lambda)])[0]


Problem = tuple[Sequence[float], Sequence[float], "float | None"]  # clients, tps, anchor_lambda


def fit_usl_many(problems: Sequence[Problem]) -> list[UslFit]:
    """fit_usl for each problem, solved together: a thousand machines' sweeps are tens of thousands of fits,
    and one vectorised solver step for all of them costs what a step of one costs (connlab.analysis.fits
    hands every machine's fits over at once). Everything around the solver (the checks, the starts, the
    costs, R², the warnings) is made for all fits of one length at once too: done fit by fit, it cost twice
    the solver at a thousand machines.

    Fits are solved in batches of one length: a fit then has no padding, and its every sum runs along its own
    row, made the same way whichever fits it is solved with, so a machine's fits do not depend on the other
    machines'. Where problems are invalid, the first of them raises the error fit_usl would."""
    batches, refused = _batches(problems)
    for index in sorted(refused):
        batches.append(_Batch.of_one(index, _prepared(*problems[index])))  # raises where it is invalid
    fits: list[UslFit | None] = [None] * len(problems)
    for batch in batches:
        for index, fit in zip(batch.indexes, _fit_batch(batch), strict=True):
            fits[index] = fit
    return fits  # type: ignore[return-value]


@dataclass(frozen=True)
class _Batch:
    """Fits of one length, a row each: the problems' indexes, client counts, throughputs, λ starts, and
    whether λ is anchored (fixed at its start)."""

    indexes: list[int]
    n: Array
    x: Array
    lam0: Array
    anchored: NDArray[np.bool_]

    @staticmethod
    def of_one(index: int, prepared: tuple[Array, Array, float, bool]) -> _Batch:
        n, x, lam0, anchored = prepared
        return _Batch([index], n[None, :], x[None, :], np.array([lam0]), np.array([anchored]))


def _prepared(
    clients: Sequence[float], tps: Sequence[float], anchor_lambda: float | None
) -> tuple[Array, Array, float, bool]:
    """One problem checked, as arrays with its λ start; ValueError where it cannot be fitted."""
    n, x = _validated(clients, tps)
    if anchor_lambda is not None and not (math.isfinite(anchor_lambda) and anchor_lambda > 0):
        raise ValueError(f"anchor_lambda must be a finite positive throughput, got {anchor_lambda!r}")
    lam0 = anchor_lambda if anchor_lambda is not None else _lambda_start(n, x)
    return n, x, lam0, anchor_lambda is not None


def _batches(problems: Sequence[Problem]) -> tuple[list[_Batch], list[int]]:
    """The problems in batches of one length, each checked as _validated checks one; and the problems any
    check refused (or that could not be stacked), for _prepared to say why."""
    by_length: dict[int, list[int]] = {}
    for index, (clients, _, _) in enumerate(problems):
        by_length.setdefault(len(clients), []).append(index)
    batches: list[_Batch] = []
    refused: list[int] = []
    for width, indexes in by_length.items():
        try:
            n = np.array([problems[i][0] for i in indexes], dtype=float).reshape(len(indexes), width)
            x = np.array([problems[i][1] for i in indexes], dtype=float).reshape(len(indexes), width)
            anchors = np.array([problems[i][2] for i in indexes], dtype=float)  # None is NaN
        except (TypeError, ValueError):
            refused += indexes
            continue
        anchored = np.array([problems[i][2] is not None for i in indexes])
        with np.errstate(invalid="ignore"):
            valid = (
                (width >= MIN_POINTS)
                & np.all(np.isfinite(n) & (n > 0), axis=1)
                & np.all(np.isfinite(x) & (x >= 0), axis=1)
                & np.any(x > 0, axis=1)
                & (_distinct(n) >= MIN_POINTS)
                & (~anchored | (np.isfinite(anchors) & (anchors > 0)))
            )
        refused += [index for index, ok in zip(indexes, valid, strict=True) if not ok]
        if not valid.any():
            continue
        n, x, anchors, anchored = n[valid], x[valid], anchors[valid], anchored[valid]
        kept = [index for index, ok in zip(indexes, valid, strict=True) if ok]
        batches.append(_Batch(kept, n, x, np.where(anchored, anchors, _lambda_starts(n, x)), anchored))
    return batches, refused


def _fit_batch(batch: _Batch) -> list[UslFit]:
    """Each row's fit: the better of a start with κ free and one with κ = 0, both from the grid."""
    count = len(batch.indexes)
    sigma0, kappa0 = np.empty((2, count)), np.empty((2, count))
    # Rows that share their client counts share their grids (most sweeps share theirs).
    rows_of: dict[bytes, list[int]] = {}
    for row, counts in enumerate(batch.n):
        rows_of.setdefault(counts.tobytes(), []).append(row)
    for rows in rows_of.values():
        for kind, fixed_kappa in enumerate((None, 0.0)):
            grid = _grid(batch.n[rows[0]], fixed_kappa)
            sigma0[kind, rows], kappa0[kind, rows] = _grid_starts(
                grid, batch.x[rows], batch.lam0[rows], batch.anchored[rows]
            )
    # The starts with κ free, then those with κ fixed at 0; solved in chunks of CHUNK rows.
    n, x = np.concatenate([batch.n, batch.n]), np.concatenate([batch.x, batch.x])
    lam0, anchored = (
        np.concatenate([batch.lam0, batch.lam0]),
        np.concatenate([batch.anchored, batch.anchored]),
    )
    fixed = np.repeat([False, True], count)
    solved = np.concatenate([
        _solve(n[rows], x[rows], lam0[rows], sigma0.ravel()[rows], kappa0.ravel()[rows], anchored[rows],
               fixed[rows])
        for rows in (slice(first, first + CHUNK) for first in range(0, 2 * count, CHUNK))
    ])  # fmt: skip
    free_kappa, no_kappa = solved[:count], solved[count:]
    free_cost, no_cost = _costs(batch.n, batch.x, free_kappa), _costs(batch.n, batch.x, no_kappa)
    params = np.array([
        _better((float(a), tuple(p)), (float(b), tuple(q)))[1]
        for a, p, b, q in zip(free_cost, free_kappa.tolist(), no_cost, no_kappa.tolist(), strict=True)
    ])  # fmt: skip
    r_squared = _r_squared_rows(batch.x, _throughputs(batch.n, params))
    distinct = _distinct(batch.n)
    width = batch.n.shape[1]
    return [
        UslFit(
            lambda_=lam, sigma=sigma, kappa=kappa, r_squared=r2, points=width, anchored=anchored_row,
            warning=_warning(distinct_row, width),
        )
        for (lam, sigma, kappa), r2, anchored_row, distinct_row in zip(
            params.tolist(), r_squared.tolist(), batch.anchored.tolist(), distinct.tolist(), strict=True
        )
    ]  # fmt: skip


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
    return float(_lambda_starts(n[None, :], x[None, :])[0])


def _lambda_starts(n: Array, x: Array) -> Array:
    """Each row's λ start. At the smallest N contention has had least effect, so X/N there is the best guess
    at one client's throughput; the mean covers repeated passes at that N."""
    smallest = n == n.min(axis=1, keepdims=True)
    ratio = x / n
    guess = np.sum(np.where(smallest, ratio, 0.0), axis=1) / np.count_nonzero(smallest, axis=1)
    return np.where(guess > 0, guess, ratio.max(axis=1))


def _distinct(n: Array) -> NDArray[np.int_]:
    """How many distinct client counts each row has."""
    if n.shape[1] == 0:
        return np.zeros(n.shape[0], dtype=int)
    return 1 + np.count_nonzero(np.diff(np.sort(n, axis=1), axis=1), axis=1)


def _grid(n: Array, fixed_kappa: float | None) -> tuple[Array, Array, Array, Array]:
    """The grid's σ and κ, the curve shape X(N)/λ at each grid point (a row each) and its sum of squares. It
    depends on the client counts alone, and most sweeps share theirs, so one serves many fits."""
    if fixed_kappa not in (None, 0.0):
        raise ValueError(f"κ is fitted or fixed at 0, not at {fixed_kappa}")
    sigma, kappa = _GRID_FREE_KAPPA if fixed_kappa is None else _GRID_NO_KAPPA
    shape = throughput(n, 1.0, sigma, kappa)
    return sigma[:, 0], kappa[:, 0], shape, np.einsum("ij,ij->i", shape, shape)


def _grid_start(
    grid: tuple[Array, Array, Array, Array], x: Array, lam0: float, anchored: bool
) -> tuple[float, float]:
    sigma, kappa = _grid_starts(grid, x[None, :], np.array([lam0]), np.array([anchored]))
    return float(sigma[0]), float(kappa[0])


def _grid_starts(
    grid: tuple[Array, Array, Array, Array], x: Array, lam0: Array, anchored: NDArray[np.bool_]
) -> tuple[Array, Array]:
    """For each row of throughputs (all with the grid's client counts), the (σ, κ) of the grid with the
    lowest cost, λ at its best value for each (or the anchor). The cost Σ(λ·shape − x)² is expanded
    (λ²·Σshape² − 2λ·Σshape·x + Σx²), so that a fit costs one product. Row by row: the grid's arrays fit
    the processor's cache, where all the rows' at once took longer."""
    sigma, kappa, shape, squares = grid
    best = np.empty(len(x), dtype=int)
    for row, (tps, start, fixed) in enumerate(zip(x, lam0.tolist(), anchored.tolist(), strict=True)):
        products = shape @ tps
        lam = np.full(squares.shape, start) if fixed else np.maximum(products / squares, start * 1e-9)
        best[row] = np.argmin(lam * lam * squares - 2.0 * lam * products + float(tps @ tps))
    return sigma[best], kappa[best]


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
    lam0: Array,
    sigma0: Array,
    kappa0: Array,
    anchored: NDArray[np.bool_],
    fixed_kappa: NDArray[np.bool_],
) -> Array:
    """Levenberg-Marquardt with bounds (λ > 0, 0 ≤ σ ≤ 1, κ ≥ 0) on every start at once (all of one length),
    each fit a row of the arrays, its fixed parameters (λ where anchored, κ where fixed at 0) never stepped.
    Every sum runs along a row, so a row's answer depends on its own numbers alone. Returns (λ, σ, κ) rows.

    A parameter at a bound that the gradient pushes outward is held there for that step (the step is taken
    in the others), and a step is clipped into the bounds. Residuals are divided by the fit's largest
    throughput and each parameter by its typical size, so that one damping suits 20 tps and 20,000 tps, and
    λ ~ 10^4 beside κ ~ 10^-3. tests/analysis/test_usl.py checks the answers against scipy's least_squares.
    """
    count, width = n.shape
    params = np.column_stack([lam0, sigma0, np.where(fixed_kappa, 0.0, kappa0)])
    free = np.column_stack([~anchored, np.ones(count, dtype=bool), ~fixed_kappa])
    # λ must stay positive; a tiny fraction of the start stands in for the open bound λ > 0.
    lower = np.column_stack([lam0 * 1e-9, np.zeros(count), np.zeros(count)])
    upper = np.column_stack([np.full(count, np.inf), np.full(count, SIGMA_MAX), np.full(count, np.inf)])
    typical = np.column_stack([lam0, np.full(count, 0.05), np.full(count, 1e-3)])
    scale = np.max(x, axis=1)
    contention, crosstalk = n - 1.0, n * (n - 1.0)

    def residuals(p: Array, rows: Array) -> tuple[Array, Array]:
        denominator = 1.0 + p[:, 1:2] * contention[rows] + p[:, 2:3] * crosstalk[rows]
        return (p[:, 0:1] * n[rows] / denominator - x[rows]) / scale[rows, None], denominator

    everything = np.arange(count)
    r, denominator = residuals(params, everything)
    cost = np.sum(r * r, axis=1)
    damping = np.full(count, 1e-3)
    running = np.ones(count, dtype=bool)
    identity = np.eye(3)
    for _ in range(MAX_ITERATIONS):
        rows = np.flatnonzero(running)
        if rows.size == 0:
            break
        p, d = params[rows], denominator[rows]
        # X = λN/D with D = 1 + σ(N−1) + κN(N−1): ∂X/∂λ = N/D, ∂X/∂σ = −λN(N−1)/D², ∂X/∂κ = −λN²(N−1)/D².
        jacobian = np.empty((rows.size, width, 3))
        jacobian[:, :, 0] = n[rows] / d
        jacobian[:, :, 1] = -p[:, 0:1] * contention[rows] / d**2 * n[rows]
        jacobian[:, :, 2] = jacobian[:, :, 1] * n[rows]
        jacobian *= (1.0 / scale[rows])[:, None, None] * typical[rows][:, None, :]
        gradient = np.stack([np.sum(jacobian[:, :, k] * r[rows], axis=1) for k in range(3)], axis=1)
        normal = np.empty((rows.size, 3, 3))
        for k in range(3):
            for j in range(k + 1):
                normal[:, k, j] = normal[:, j, k] = np.sum(jacobian[:, :, k] * jacobian[:, :, j], axis=1)
        held = ((p <= lower[rows]) & (gradient > 0)) | ((p >= upper[rows]) & (gradient < 0))
        moving = free[rows] & ~held
        diagonal = np.maximum(np.diagonal(normal, axis1=1, axis2=2), 1e-30)
        system = normal + (damping[rows, None] * diagonal)[:, :, None] * identity
        system = np.where(moving[:, :, None] & moving[:, None, :], system, identity)
        step = -np.linalg.solve(system, np.where(moving, gradient, 0.0)[:, :, None])[:, :, 0]
        trial = np.clip(p + step * typical[rows], lower[rows], upper[rows])
        trial_r, trial_denominator = residuals(trial, rows)
        trial_cost = np.sum(trial_r * trial_r, axis=1)
        lower_cost = trial_cost < cost[rows]
        gained = (cost[rows] - trial_cost) / np.maximum(cost[rows], 1e-300)
        taken = rows[lower_cost]
        params[taken], r[taken], denominator[taken] = (
            trial[lower_cost],
            trial_r[lower_cost],
            trial_denominator[lower_cost],
        )
        cost[taken] = trial_cost[lower_cost]
        damping[taken] = np.maximum(damping[taken] / 3.0, 1e-12)
        damping[rows[~lower_cost]] *= 4.0
        finished = (
            (lower_cost & (gained < RELATIVE_COST_TOLERANCE))
            | (~lower_cost & (damping[rows] > MAX_DAMPING))
            | ~moving.any(axis=1)
        )
        running[rows[finished]] = False
    return params


def _throughputs(n: Array, params: Array) -> Array:
    """X(N) of each row's (λ, σ, κ)."""
    return throughput(n, params[:, 0:1], params[:, 1:2], params[:, 2:3])


def _costs(n: Array, x: Array, params: Array) -> Array:
    return np.sum((_throughputs(n, params) - x) ** 2, axis=1)


def _cost(n: Array, x: Array, params: tuple[float, float, float]) -> float:
    return float(_costs(n[None, :], x[None, :], np.array([params]))[0])


def _r_squared_rows(observed: Array, fitted: Array) -> Array:
    ss_res = np.sum((observed - fitted) ** 2, axis=1)
    ss_tot = np.sum((observed - observed.mean(axis=1, keepdims=True)) ** 2, axis=1)
    # Flat data leave nothing to explain: a curve through them is perfect, any other explains nothing.
    with np.errstate(divide="ignore", invalid="ignore"):
        explained = 1.0 - ss_res / ss_tot
    return np.where(ss_tot == 0.0, np.where(ss_res == 0.0, 1.0, 0.0), explained)


def _warning(distinct: int, size: int) -> str | None:
    if distinct >= MIN_POINTS_FOR_CONFIDENCE:
        return None
    # Repeated passes at one N narrow the noise there but say nothing about the curve between client
    # counts, so confidence is judged on distinct client counts.
    if distinct == size:
        counted = f"{distinct} points"
    else:
        counted = f"{distinct} distinct client counts ({size} points)"
    return f"only {counted}: fewer than {MIN_POINTS_FOR_CONFIDENCE}, the fit is indicative"
