"""The peak's client count against the server's cores, every machine and CPU budget on one chart.

Kept apart from charts.py (one chart, one purpose); it follows the same conventions: container width, no
colours for text or background (charts.js themes them), log scales where values span orders of magnitude.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt

Records = Sequence[dict[str, object]]
HEIGHT = 300
# The seed's rule of thumb, drawn as a reference line: four clients per core.
REFERENCE_PER_CORE = 4


def peaks_by_cores(records: Records) -> dict:
    """A dot per machine and budget at its peak, a rule over the range of its passes' own peaks, and the
    line of four clients per core through the whole chart."""
    labelled = [
        {
            **record,
            "source": f"{record['machine']} ({'published' if record['published'] else record['experiment']})",
        }
        for record in records
    ]
    cores = [float(r["server_cores"]) for r in records if r.get("server_cores")]  # type: ignore[arg-type]
    span = [min(cores, default=0.5), max(cores, default=8.0)]
    reference = [{"server_cores": c, "clients": REFERENCE_PER_CORE * c} for c in span]
    x = alt.X("server_cores:Q", scale=alt.Scale(type="log"), title="server cores (log scale)")
    y_scale = alt.Scale(type="log")
    color = alt.Color("source:N", title="machine (experiment)")
    base = alt.Chart(alt.Data(values=labelled)).properties(width="container", height=HEIGHT)
    ranges = base.mark_rule(strokeWidth=2).encode(
        x=x, y=alt.Y("peak_clients_low:Q", scale=y_scale, title="clients at the peak (log scale)"),
        y2="peak_clients_high:Q", color=color,
    )  # fmt: skip
    dots = base.mark_point(filled=True, size=70).encode(
        x=x,
        y=alt.Y("peak_clients:Q", scale=y_scale),
        color=color,
        shape=alt.Shape("experiment:N", title="experiment"),
        tooltip=[
            alt.Tooltip("source:N", title="machine"),
            alt.Tooltip("server_cores:Q", title="server cores", format=".3~f"),
            alt.Tooltip("peak_clients:Q", title="peak clients"),
            alt.Tooltip("peak_clients_low:Q", title="passes: lowest peak"),
            alt.Tooltip("peak_clients_high:Q", title="passes: highest peak"),
            alt.Tooltip("peak_clients_per_core:Q", title="per core", format=".3~f"),
        ],
    )
    line = (
        alt.Chart(alt.Data(values=reference))
        .mark_line(strokeDash=[4, 4], opacity=0.6)
        .encode(x=x, y=alt.Y("clients:Q", scale=y_scale))
    )
    return alt.layer(line, ranges, dots).to_dict()
