"""The peak's client count against the server's cores, every machine and CPU budget on one chart.

Kept apart from kinds.py (one chart, one purpose); it follows the same conventions: container width, no
colours for text or background (charts.js themes them), log scales where values span orders of magnitude.
"""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

from connlab.site.charts.frame import Records, chart_over, range_tooltips
from connlab.site.charts.lazy import lazy_import

if TYPE_CHECKING:
    import altair as alt
else:
    alt = lazy_import("altair")

# The seed's rule of thumb, drawn as a reference line: four clients per core.
REFERENCE_PER_CORE = 4


# Up to this many measured machines, the normalised chart (charts.kinds) draws a line per machine;
# past it, their spread.
LINE_PER_MACHINE_UP_TO = 12
# Up to this many measured machines, a dot each; past it, one dot per experiment and core count (the
# median of the machines' peaks, the rule from the lowest to the highest), so the chart and its legend keep
# their size whatever the number of machines. Published machines always keep their own dot.
DOT_PER_MACHINE_UP_TO = LINE_PER_MACHINE_UP_TO
CHART_FIELDS = (
    "server_cores",
    "peak_clients",
    "peak_clients_low",
    "peak_clients_high",
    "peak_clients_per_core",
)


def _labelled(record: dict[str, object]) -> dict[str, object]:
    where = "published" if record["published"] else record["experiment"]
    return {
        **{name: record[name] for name in CHART_FIELDS},
        "experiment": record["experiment"],
        "source": f"{record['machine']} ({where})",
        "machines": 1,
    }


def _summarised(records: Records) -> list[dict[str, object]]:
    groups: dict[tuple[object, object], list[dict[str, object]]] = {}
    for record in records:
        groups.setdefault((record["experiment"], record["server_cores"]), []).append(dict(record))
    rows: list[dict[str, object]] = []
    for (experiment, cores), group in sorted(groups.items(), key=lambda item: str(item[0])):
        peaks = [float(r["peak_clients"]) for r in group]  # type: ignore[arg-type]
        median = statistics.median(peaks)
        rows.append({
            "server_cores": cores, "peak_clients": median, "experiment": experiment,
            "peak_clients_low": min(float(r["peak_clients_low"]) for r in group),  # type: ignore[arg-type]
            "peak_clients_high": max(float(r["peak_clients_high"]) for r in group),  # type: ignore[arg-type]
            "peak_clients_per_core": median / float(cores),  # type: ignore[arg-type]
            "source": f"measured machines ({experiment})", "machines": len(group),
        })  # fmt: skip
    return rows


def peak_rows(records: Records) -> list[dict[str, object]]:
    """The chart's rows: a dot per machine and budget, or past DOT_PER_MACHINE_UP_TO measured machines, their
    median per experiment and core count beside each published machine's own."""
    measured = [r for r in records if not r["published"]]
    published = [_labelled(dict(r)) for r in records if r["published"]]
    if len({r["machine"] for r in measured}) <= DOT_PER_MACHINE_UP_TO:
        return [_labelled(dict(r)) for r in measured] + published
    return _summarised(measured) + published


def peaks_by_cores(records: Records) -> dict:
    """A dot per machine and budget at its peak (or per group of many machines, peak_rows), a rule over the
    range of its passes' own peaks, and the line of four clients per core from the fewest cores drawn to
    the most."""
    labelled = peak_rows(records)
    x = alt.X("server_cores:Q", scale=alt.Scale(type="log"), title="server cores (log scale)")
    y_scale = alt.Scale(type="log")
    color = alt.Color("source:N", title="machine (experiment)")
    base = chart_over(labelled)
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
            alt.Tooltip("machines:Q", title="machines"),
            alt.Tooltip("server_cores:Q", title="server cores", format=".3~f"),
            alt.Tooltip("peak_clients:Q", title="peak clients"),
            *range_tooltips(
                "peak_clients_low",
                "peak_clients_high",
                titles=("passes: lowest peak", "passes: highest peak"),
            ),
            alt.Tooltip("peak_clients_per_core:Q", title="per core", format=".3~f"),
        ],
    )
    # The line spans the rows' core counts, computed from the rows themselves: the spec is then the same
    # whatever the rows, and made once as a template (connlab.site.charts.cache).
    line = (
        base.transform_aggregate(fewest="min(server_cores)", most="max(server_cores)")
        .transform_fold(["fewest", "most"], as_=["end", "server_cores"])
        .transform_calculate(clients=f"{REFERENCE_PER_CORE} * datum.server_cores")
        .mark_line(strokeDash=[4, 4], opacity=0.6)
        .encode(x=x, y=alt.Y("clients:Q", scale=y_scale))
    )
    return alt.layer(line, ranges, dots).to_dict()
