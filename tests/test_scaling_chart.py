"""The peak against the server's cores: every machine and budget, its passes' range, a reference line."""

from __future__ import annotations

from connlab.site.scaling_chart import REFERENCE_PER_CORE, peaks_by_cores

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
    # The reference line spans the budgets drawn, at four clients per core.
    reference = line["data"]["values"]
    assert [(r["server_cores"], r["clients"]) for r in reference] == [
        (0.5, 0.5 * REFERENCE_PER_CORE),
        (4.0, 4.0 * REFERENCE_PER_CORE),
    ]
    assert ranges["mark"]["type"] == "rule"
    assert ranges["encoding"]["y"]["field"] == "peak_clients_low"
    assert ranges["encoding"]["y2"]["field"] == "peak_clients_high"
    assert dots["encoding"]["x"]["scale"]["type"] == "log"
    # Published figures are labelled as such, measured ones by their experiment.
    sources = {r["source"] for r in dots["data"]["values"]}
    assert sources == {"a (clients-sweep)", "a (core-budget)", "p (published)"}
