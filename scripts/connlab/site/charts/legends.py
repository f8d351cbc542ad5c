"""The legend mark of every line chart, in a module of its own so that the chart kinds (kinds.py) and the
simulator (usl.py), which kinds.py imports, share it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from connlab.site.charts.lazy import lazy_import

if TYPE_CHECKING:
    import altair as alt
else:
    alt = lazy_import("altair")

# A legend's mark drawn as the chart's lines are: a stroke with a point on it, at full opacity (not the
# bands' pale fill). An SVG path in the symbol's unit square, which Vega scales to the symbol size.
LINE_AND_POINT = "M-1,0H-0.35M0.35,0H1M-0.35,0A0.35,0.35,0,1,1,0.35,0A0.35,0.35,0,1,1,-0.35,0"


# Room for the longest series name a line chart gives, "median of 6 machines (band: lowest to highest)" at
# the legend's 10 px font (about 230 px), which Vega's default of 160 px cut short beside a wide plot.
LEGEND_LABEL_LIMIT = 260


def line_legend() -> alt.Legend:
    return alt.Legend(
        symbolType=LINE_AND_POINT,
        symbolOpacity=1,
        symbolStrokeWidth=2,
        symbolSize=200,
        labelLimit=LEGEND_LABEL_LIMIT,
    )
