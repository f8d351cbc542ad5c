"""Whether the measured points resolve a claim about where a curve peaks (issue 52, "Decidable or not").

A curve measured at a few client counts peaks at one of them, and the true peak lies somewhere between that
point's measured neighbours on the same curve (connlab.data.views: `measured_below`, `measured_above`). A
claim about the peak is judged only where those neighbours resolve it; elsewhere it cannot be evaluated, and
the reason names the gap: "no point measured between 1 and 32 per server core but the peak's own 4".

Two kinds of claim (the claim's `decidable_by`):

- `peak-bracket`: the value is the peak's own place (clients per core at the peak). Judged where its
  neighbours lie inside the threshold's band or wholly outside it; for a one-sided threshold, wholly on one
  side of it, or within a factor of PEAK_RESOLUTION of the peak.
- `peak-resolution`: the value is read from one or two peaks (a ratio of two peaks, a figure over a peak, a
  peak over a formula). Judged where every peak's neighbours lie within a factor of PEAK_RESOLUTION of it, or
  where the range the neighbours leave the value already lies wholly inside, outside or on one side of the
  threshold.

A peak at a curve's first or last point has no neighbour on that side, and the reason says so ("the peak is
the lowest point measured"). Values read from peaks are positive (client counts and their ratios).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Literal, NamedTuple, Protocol

from connlab.contract.names import PEAK_RESOLUTION

DecidableBy = Literal["peak-bracket", "peak-resolution"]

# Bands and factors are written rounded (2.83 for 4/√2, 0.71 for 1/√2): a neighbour this close to an edge,
# relative, lies on it.
EDGE_TOLERANCE = 0.01
# The columns a query returns for a claim decided by its peaks: the peak the value is read from (and, for a
# value divided by a second peak, that one as over_peak), each with its measured neighbours and, optionally,
# the words that name its curve ('select-only', 'PostgreSQL 18') and the words for its gap where the
# neighbours are not one curve's points (a median over machines' neighbours).
PEAK_COLUMNS = ("peak", "peak_below", "peak_above", "peak_of", "peak_gap")
OVER_PEAK_COLUMNS = ("over_peak", "over_peak_below", "over_peak_above", "over_peak_of", "over_peak_gap")


class ThresholdLike(Protocol):
    """What a claim's threshold offers (connlab.data.claims.Threshold)."""

    value: float | tuple[float, float]

    def met(self, x: float) -> bool: ...

    def text(self) -> str: ...


class Peak(NamedTuple):
    """A peak measured at `at`, its nearest measured neighbours on the same curve (None where there is none
    on that side), the words naming its curve and, where the query gives them, the words for its gap."""

    at: float
    below: float | None
    above: float | None
    of: str | None = None
    words: str | None = None

    def resolved(self) -> bool:
        """Both neighbours within PEAK_RESOLUTION of the peak."""
        reach = PEAK_RESOLUTION * (1 + EDGE_TOLERANCE)
        return (
            self.below is not None
            and self.above is not None
            and self.below * reach >= self.at
            and self.above <= self.at * reach
        )

    def gap(self, unit: str) -> str:
        """Where nothing was measured around the peak, in words."""
        if self.words:
            return self.words
        whose = f"the {self.of} peak" if self.of else "the peak"
        at = f"{self.at:g} {unit}"
        if self.below is None and self.above is None:
            return f"{whose} is the only point measured ({at})"
        if self.below is None:
            return f"{whose} is the lowest point measured ({at}): nothing was measured below it"
        if self.above is None:
            return f"{whose} is the highest point measured ({at}): nothing was measured above it"
        between = f"between {self.below:g} and {self.above:g} {unit}"
        return f"no point measured {between} but {whose}'s own {self.at:g}"


def read_peak(row: Mapping[str, object], prefix: str) -> Peak | None:
    """The peak a row gives under a prefix ('peak' or 'over_peak'); None where the row gives none (a source's
    printed figure, whose curve is not known)."""
    at = _positive(row.get(prefix))
    if at is None:
        return None
    below, above = _positive(row.get(f"{prefix}_below")), _positive(row.get(f"{prefix}_above"))
    return Peak(at, below, above, _text(row.get(f"{prefix}_of")), _text(row.get(f"{prefix}_gap")))


def _positive(value: object) -> float | None:
    if value is None:
        return None
    number = float(value)  # type: ignore[arg-type]
    return None if math.isnan(number) else number


def _text(value: object) -> str | None:
    return None if value is None or str(value) == "" else str(value)


def decides(threshold: ThresholdLike, low: float, high: float) -> bool:
    """Whether every value from low to high gets the same verdict: the range inside the band or wholly
    outside it; for a one-sided threshold, wholly on one side."""
    if isinstance(threshold.value, tuple):
        edge_low, edge_high = threshold.value
        inside = edge_low * (1 - EDGE_TOLERANCE) <= low and high <= edge_high * (1 + EDGE_TOLERANCE)
        outside = high <= edge_low or low >= edge_high
        return inside or outside
    return threshold.met(low) == threshold.met(high)


def value_range(value: float, peak: Peak | None, over_peak: Peak | None) -> tuple[float, float]:
    """Where a value proportional to peak ÷ over_peak may lie, the true peaks being anywhere between their
    neighbours (no neighbour on a side: unbounded on that side)."""
    low, high = value, value
    if peak is not None:
        low *= 0.0 if peak.below is None else peak.below / peak.at
        high *= math.inf if peak.above is None else peak.above / peak.at
    if over_peak is not None:
        low *= 0.0 if over_peak.above is None else over_peak.at / over_peak.above
        high *= math.inf if not over_peak.below else over_peak.at / over_peak.below
    return low, high


def _span(low: float, high: float) -> str:
    if low <= 0 and math.isinf(high):
        return "anywhere"
    if low <= 0:
        return f"anywhere below {high:.3g}"
    if math.isinf(high):
        return f"anywhere above {low:.3g}"
    return f"anywhere between {low:.3g} and {high:.3g}"


def unresolved(
    kind: DecidableBy,
    threshold: ThresholdLike,
    value: float,
    peak: Peak | None,
    over_peak: Peak | None,
    unit: str,
) -> str | None:
    """Why the measured points cannot decide the claim, in words; None where they can."""
    peaks = [p for p in (peak, over_peak) if p is not None]
    if not peaks:
        return None
    if kind == "peak-bracket":
        if peak is None:
            return None
        low, high = value_range(peak.at, peak, None)
        band = isinstance(threshold.value, tuple)
        if decides(threshold, low, high) or (not band and peak.resolved()):
            return None
        subject = "the peak"
    else:
        low, high = value_range(value, peak, over_peak)
        if decides(threshold, low, high) or all(p.resolved() for p in peaks):
            return None
        subject = "the value"
    gaps = "; ".join(p.gap(unit) for p in peaks if kind == "peak-bracket" or not p.resolved())
    return (
        f"{gaps}, so {subject} may lie {_span(low, high)}: the points measured cannot tell whether it is "
        f"{threshold.text()}"
    )
