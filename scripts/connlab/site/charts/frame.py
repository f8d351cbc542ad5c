"""What every chart is drawn in: its rows, the container's width and the one height, and the tooltip's lines
for a range, shared by the chart kinds (kinds.py), the scaling chart (scaling.py) and the USL simulator
(usl.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from connlab.site.charts.lazy import lazy_import

if TYPE_CHECKING:
    import altair as alt
else:
    alt = lazy_import("altair")

Records = Sequence[dict[str, object]]
WIDTH = "container"
HEIGHT = 300


def chart_over(records: Records) -> alt.Chart:
    """A chart of these rows at the container's width and the one height."""
    return alt.Chart(alt.Data(values=list(records))).properties(width=WIDTH, height=HEIGHT)


def range_tooltips(
    low: str, high: str, number_format: str | None = None, titles: tuple[str, str] = ("min", "max")
) -> list[alt.Tooltip]:
    """The tooltip's lines for the two ends of a range (the passes', or the machines'), quantitative fields
    in one format (None: Vega-Lite's)."""
    formatted = {} if number_format is None else {"format": number_format}
    return [
        alt.Tooltip(f"{low}:Q", title=titles[0], **formatted),
        alt.Tooltip(f"{high}:Q", title=titles[1], **formatted),
    ]
