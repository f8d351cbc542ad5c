"""The peak against the server's cores: every machine and budget, its passes' range, a reference line."""

from __future__ import annotations

import re

from connlab.site.charts.html import render_svg, spec_text
from connlab.site.charts.scaling import REFERENCE_PER_CORE, peak_rows, peaks_by_cores

RECORDS = [
    {"machine": "a", "published": False, "experiment": "clients-sweep", "server_cores": 1.0,
     "peak_clients": 4, "peak_clients_low": 2, "peak_clients_high": 4, "peak_clients_per_core": 4.0},
    {"machine": "a", "published": False, "experiment": "core-budget", "server_cores": 0.5,
     "peak_clients": 3, "peak_clients_low": 2, "peak_clients_high": 6, "peak_clients_per_core": 6.0},
    {"machine": "p", "published": True, "experiment": "clients-sweep", "server_cores": 4.0,
     "peak_clients": 16, "peak_clients_low": 16, "peak_clients_high": 16, "peak_clients_per_core": 4.0},
]  # fmt: skip


def test_peaks_by_cores() -> None:
    spec = peaks_by_cores(RECORDS)
    line, ranges, dots = spec["layer"]
    # The reference line spans the budgets drawn, at four clients per core: computed from the rows, so
    # the spec is the same whatever they are. Drawn, it goes from the fewest cores to the most.
    assert "data" not in line and line["mark"]["strokeDash"]
    svg = render_svg(spec_text(spec))
    drawn = re.search(
        r'aria-label="([^"]*)" role="graphics-symbol" aria-roledescription="line mark" d="([^"]*)"', svg
    )
    assert drawn is not None
    assert drawn.group(1) == f"server cores (log scale): 0.5; clients: {0.5 * REFERENCE_PER_CORE:g}"
    assert drawn.group(2).count("L") == 1  # two points: the fewest cores and the most
    assert ranges["mark"]["type"] == "rule"
    assert ranges["encoding"]["y"]["field"] == "peak_clients_low"
    assert ranges["encoding"]["y2"]["field"] == "peak_clients_high"
    assert dots["encoding"]["x"]["scale"]["type"] == "log"
    # Published figures are labelled as such, measured ones by their experiment.
    sources = {r["source"] for r in spec["data"]["values"]}
    assert sources == {"a (clients-sweep)", "a (core-budget)", "p (published)"}


def test_past_twelve_machines_each_experiment_and_core_count_is_one_dot() -> None:
    many = [
        {**RECORDS[0], "machine": f"m{i:02d}", "peak_clients": 4 + i, "peak_clients_low": 2 + i,
         "peak_clients_high": 6 + i}
        for i in range(13)
    ]  # fmt: skip
    rows = peak_rows([*many, RECORDS[2]])
    measured = [row for row in rows if row["source"] == "measured machines (clients-sweep)"]
    assert len(measured) == 1 and measured[0]["machines"] == 13
    # The median of the machines' peaks, the rule from the lowest pass to the highest.
    assert measured[0]["peak_clients"] == 10 and measured[0]["peak_clients_per_core"] == 10.0
    assert (measured[0]["peak_clients_low"], measured[0]["peak_clients_high"]) == (2, 18)
    assert {row["source"] for row in rows} == {"measured machines (clients-sweep)", "p (published)"}
    # Twelve machines still get a dot each.
    assert len(peak_rows(many[:12])) == 12
