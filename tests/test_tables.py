"""Markdown tables assembled in Python (connlab.site.tables)."""

from __future__ import annotations

from connlab.site.tables import Column, fits_table, markdown_table, points_table

POINT = {
    "workload": "mixed", "clients": 8, "clients_per_core": 4.0, "tps_median": 12345.6, "tps_min": 12000.0,
    "tps_max": 12500.4, "latency_avg_median": 0.6481, "latency_avg_min": 0.64, "latency_avg_max": 0.66,
    "latency_p95_median": 1.234, "server_cpu_median": 0.98, "client_cpu_median": 0.51,
    "windows_client_saturated": 1, "windows_ok": 3, "windows": 3,
}  # fmt: skip


def test_a_table_has_a_header_an_alignment_row_and_a_row_per_record() -> None:
    columns = [Column("name", lambda r: str(r["name"])), Column("n", lambda r: str(r["n"]), numeric=True)]
    assert markdown_table(columns, [{"name": "a", "n": 1}, {"name": "b", "n": 2}]) == (
        "| name | n |\n|---|---:|\n| a | 1 |\n| b | 2 |\n"
    )
    assert markdown_table(columns, []) == "| name | n |\n|---|---:|\n"


def test_the_points_table_formats_each_figure() -> None:
    row = points_table([POINT]).splitlines()[2]
    assert row == (
        "| mixed | 8 | 4.0 | 12,346 (12,000–12,500) | 0.648 (0.640–0.660) | 1.23 | 0.98 | 0.51 † | 3/3 |"
    )


def test_contributed_text_in_a_table_is_shown_literally() -> None:
    row = points_table([{**POINT, "workload": "<b>|x"}]).splitlines()[2]
    assert row.startswith("| &lt;b&gt;\\|x | ")


def test_the_fits_table_says_when_lambda_was_fixed() -> None:
    fit = {
        "workload": "tpcb-like", "basis": "medians", "anchored": True, "lambda_tps": 2065.2, "sigma": 0.3678,
        "kappa": 0.004152, "r_squared": 0.9512, "points": 10, "n_star": None, "measured_peak_clients": 8,
    }  # fmt: skip
    row = fits_table([fit]).splitlines()[2]
    assert row == "| tpcb\\-like | medians | yes | 2,065 | 0.368 | 0.00415 | 0.951 | 10 | – | 8 |"
