"""What every chart is drawn in: its rows, the container's width and the one height, shared by the chart
kinds (kinds.py), the scaling chart (scaling.py) and the USL simulator (usl.py)."""

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
