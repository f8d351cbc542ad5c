"""Points where the answer is: what a run measures after its grid, decided from the rows already written.

For each curve (a workload on one server budget) whose grid is complete:

- **peak**: while the peak's measured neighbours are more than a factor of `PEAK_BRACKET_RATIO` apart (each
  side then within its square root), one more client count between the peak and its farther neighbour: the
  geometric mean of the two, rounded to a count not yet measured, measured at every pass of the profile. The
  peak is the count with the highest median tps over the grid's passes, leaving out windows that failed or
  where pgbench was client-saturated. A count is decided only once the previous one has all its passes.
- **spread**: once the peak needs nothing more, each point whose grid passes spread more than the profile's
  share (max - min over the median tps) gets up to `max_extra_passes` more passes, the widest spread first.

Every decision is a function of the curve's own rows (its grid passes and its peak points), never of the
order they were written in or of another curve's, and the extra passes never enter one: an interrupted run
recomputes what is missing from its file and measures exactly that, neither repeating nor losing a point. A
curve's extra windows stay within its budget (connlab.contract.experiment.Plan.refinement_windows_per_curve).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from connlab.contract.columns import ADDED_FOR_PEAK, ADDED_FOR_SPREAD
from connlab.contract.experiment import Plan, Window, pass_order
from connlab.contract.spec_parts import Refine

# The peak is bracketed when its measured neighbours are at most this factor apart: each within √2 of a
# point between them.
PEAK_BRACKET_RATIO = 2.0

Row = Mapping[str, str]


@dataclass(frozen=True)
class Extra:
    """One window refinement asks for, and why: between which measured counts, or how wide the spread."""

    workload: str
    budget: float
    clients: int
    pass_no: int
    added_for: str
    lower: int | None = None  # peak: the measured counts the new one lies between
    upper: int | None = None
    spread: float | None = None  # spread: the point's grid passes' spread, as a share of their median

    @property
    def key(self) -> tuple[int, str, int, float]:
        """As connlab.contract.experiment.Window.key and the results file's done keys."""
        return (self.pass_no, self.workload, self.clients, self.budget)

    def describe(self) -> str:
        """What the progress line says of it: 'refining: 11 clients between 8 and 16'."""
        if self.added_for == ADDED_FOR_PEAK:
            return f"refining: {self.clients} clients between {self.lower} and {self.upper}"
        return f"refining: pass {self.pass_no} at {self.clients} clients (passes spread {self.spread:.0%})"


@dataclass(frozen=True)
class Refinement:
    """What refinement needs of a plan: its settings, passes, grid, curves and budget per curve."""

    settings: Refine
    passes: int
    grid: tuple[int, ...]
    workloads: tuple[str, ...]  # the curves' workloads, in the spec's order
    budgets: tuple[float, ...]
    windows_per_curve: int


def refinement_of(plan: Plan, only_workloads: Sequence[str] = ()) -> Refinement | None:
    """The plan's refinement (None where its profile has none), for these workloads only where named."""
    if plan.refine is None:
        return None
    workloads = tuple(
        workload.id
        for workload in plan.curve_workloads()
        if not only_workloads or workload.id in only_workloads
    )
    return Refinement(
        plan.refine, plan.profile.passes, tuple(plan.client_counts), workloads, tuple(plan.budgets),
        plan.refinement_windows_per_curve(),
    )  # fmt: skip


@dataclass(frozen=True)
class _Reading:
    tps: float | None  # None: failed, or pgbench was client-saturated
    added_for: str


def next_points(rows: Sequence[Row], refinement: Refinement) -> list[Extra]:
    """The windows to measure next, in pass order (ascending and descending counts alternating as the
    grid's passes do, workloads interleaved at each count); empty once every curve needs nothing more."""
    curves: dict[tuple[str, float], dict[int, dict[int, _Reading]]] = defaultdict(lambda: defaultdict(dict))
    for row in rows:
        curve = (row["workload"], float(row["server_cpu_budget"]))
        curves[curve][int(row["clients"])][int(row["pass_no"])] = _reading(row)
    extras = [
        extra
        for budget in refinement.budgets
        for workload in refinement.workloads
        for extra in _curve_next(workload, budget, curves.get((workload, budget), {}), refinement)
    ]
    order = {workload: index for index, workload in enumerate(refinement.workloads)}

    def in_pass_order(extra: Extra) -> tuple[int, int, float, int]:
        clients = extra.clients if pass_order(extra.pass_no) == "asc" else -extra.clients
        return (extra.pass_no, clients, extra.budget, order[extra.workload])

    return sorted(extras, key=in_pass_order)


def _reading(row: Row) -> _Reading:
    usable = row.get("ok") == "true" and row.get("tps") and row.get("client_saturated") != "true"
    return _Reading(float(row["tps"]) if usable else None, row.get("added_for") or "")


def _curve_next(
    workload: str, budget: float, points: Mapping[int, Mapping[int, _Reading]], refinement: Refinement
) -> list[Extra]:
    base = range(1, refinement.passes + 1)
    if any(pass_no not in points.get(count, {}) for count in refinement.grid for pass_no in base):
        return []  # the grid first: a curve left to a later run, or one still being measured
    settings = refinement.settings
    peak_counts = sorted(
        count
        for count, passes in points.items()
        if any(reading.added_for == ADDED_FOR_PEAK for reading in passes.values())
    )
    medians = {
        count: statistics.median(rates)
        for count, passes in points.items()
        if (rates := [passes[p].tps for p in base if p in passes and passes[p].tps is not None])
    }
    for count in peak_counts:  # a count decided before an interruption: its passes still missing
        missing = [pass_no for pass_no in base if pass_no not in points[count]]
        if missing:
            lower, upper = _around(count, points)
            return [Extra(workload, budget, count, p, ADDED_FOR_PEAK, lower, upper) for p in missing]
    remaining = refinement.windows_per_curve - len(peak_counts) * refinement.passes
    more_points = settings.max_extra_points is None or len(peak_counts) < settings.max_extra_points
    if settings.peak and more_points and remaining >= refinement.passes:
        found = bisection(medians, set(points))
        if found is not None:
            clients, lower, upper = found
            return [Extra(workload, budget, clients, p, ADDED_FOR_PEAK, lower, upper) for p in base]
    return [
        extra
        for extra in _spread_passes(workload, budget, points, refinement, remaining)
        if extra.pass_no not in points[extra.clients]
    ]


def _around(count: int, points: Mapping[int, object]) -> tuple[int | None, int | None]:
    below = [other for other in points if other < count]
    above = [other for other in points if other > count]
    return (max(below) if below else None, min(above) if above else None)


def bisection(medians: Mapping[int, float], measured: set[int]) -> tuple[int, int, int] | None:
    """The next client count for a curve's peak, with the measured counts it lies between, or None where
    the peak is bracketed (its neighbours at most PEAK_BRACKET_RATIO apart), at an end of the curve, or no
    count is left between. medians: the median tps at each count with a usable window."""
    counts = sorted(medians)
    if len(counts) < 3:
        return None
    peak_at = max(range(len(counts)), key=lambda index: (medians[counts[index]], -index))
    if peak_at in (0, len(counts) - 1):
        return None
    lower, peak, upper = counts[peak_at - 1], counts[peak_at], counts[peak_at + 1]
    if upper / lower <= PEAK_BRACKET_RATIO:
        return None
    sides = [(lower, peak), (peak, upper)]
    sides.sort(key=lambda side: side[1] / side[0], reverse=True)  # the wider side first
    for low, high in sides:
        count = _between(low, high, measured)
        if count is not None:
            return count, low, high
    return None


def _between(low: int, high: int, measured: set[int]) -> int | None:
    """The integer nearest the geometric mean of low and high on a log scale, strictly between them and
    not yet measured; None where there is none."""
    middle = math.sqrt(low * high)
    candidates = {math.floor(middle), math.ceil(middle)}
    for count in sorted(candidates, key=lambda c: (abs(math.log(c / middle)), c)):
        if low < count < high and count not in measured:
            return count
    return None


def _spread_passes(
    workload: str,
    budget: float,
    points: Mapping[int, Mapping[int, _Reading]],
    refinement: Refinement,
    remaining: int,
) -> list[Extra]:
    """Every extra pass the curve's spread asks for within what its budget leaves after its peak points,
    measured or not: a function of the grid passes and the peak points only, so the same after each pass."""
    settings = refinement.settings
    if settings.spread is None or settings.max_extra_passes == 0:
        return []
    base = range(1, refinement.passes + 1)
    spreads = []
    for count, passes in points.items():
        rates = [passes[p].tps for p in base if p in passes and passes[p].tps is not None]
        if len(rates) >= 2 and (median := statistics.median(rates)) > 0:
            spread = (max(rates) - min(rates)) / median
            if spread > settings.spread:
                spreads.append((spread, count))
    extras = []
    for spread, count in sorted(spreads, key=lambda item: (-item[0], item[1])):
        passes = min(settings.max_extra_passes, remaining)
        if passes <= 0:
            break
        remaining -= passes
        for extra_pass in range(refinement.passes + 1, refinement.passes + passes + 1):
            extras.append(Extra(workload, budget, count, extra_pass, ADDED_FOR_SPREAD, spread=spread))
    return extras


def window_of(plan: Plan, extra: Extra) -> Window:
    """The plan's window for an extra: its workload at the count, in its pass's order."""
    workload = next(w for w in plan.spec.workloads if w.id == extra.workload)
    return Window(extra.pass_no, pass_order(extra.pass_no), workload, extra.clients, extra.budget)


def refinement_done(rows: Sequence[Row], refinement: Refinement | None) -> bool:
    """Whether refinement needs nothing more of these rows (a run without refinement: always)."""
    return refinement is None or not next_points(rows, refinement)
