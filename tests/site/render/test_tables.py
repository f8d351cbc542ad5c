"""The generated tables, written as HTML in Python (connlab.site.render.tables)."""

from __future__ import annotations

import re

from connlab.site.render.tables import Column, fits_table, html_table, points_table

POINT = {
    "workload": "mixed", "clients": 8, "clients_per_core": 4.0, "tps_median": 12345.6, "tps_min": 12000.0,
    "tps_max": 12500.4, "latency_avg_median": 0.6481, "latency_avg_min": 0.64, "latency_avg_max": 0.66,
    "latency_p95_median": 1.234, "server_cpu_median": 0.98, "client_cpu_median": 0.51,
    "windows_client_saturated": 1, "windows_ok": 3, "windows": 3,
}  # fmt: skip


def _cells(table: str, row: int) -> list[str]:
    """The text of each cell of a body row."""
    body = table.split("<tbody>", 1)[1]
    return re.findall(r"<td[^>]*>(.*?)</td>", body.split("</tr>")[row])


def test_a_table_has_a_header_and_a_row_per_record_right_aligning_numbers() -> None:
    columns = [Column("name", lambda r: str(r["name"])), Column("n", lambda r: str(r["n"]), numeric=True)]
    table = html_table(columns, [{"name": "a", "n": 1}, {"name": "b", "n": 2}])
    assert '<tr><th>name</th><th style="text-align: right;">n</th></tr>' in table
    assert _cells(table, 0) == ["a", "1"] and _cells(table, 1) == ["b", "2"]
    # A raw HTML block: blank lines around it, so Markdown passes it as it is.
    assert table.startswith("\n<table>") and table.endswith("</table>\n\n")
    assert "<tbody>\n</tbody>" in html_table(columns, [])


def test_the_points_table_formats_each_figure() -> None:
    assert _cells(points_table([POINT]), 0) == [
        "mixed", "8", "4.0", "12,346 (12,000–12,500)", "0.648 (0.640–0.660)", "1.23", "0.98", "0.51 †", "3/3",
    ]  # fmt: skip


def test_contributed_text_in_a_table_is_shown_literally() -> None:
    assert _cells(points_table([{**POINT, "workload": "<b>|x\n\ny"}]), 0)[0] == "&lt;b&gt;|x y"


def test_the_fits_table_says_when_lambda_was_fixed() -> None:
    fit = {
        "workload": "tpcb-like", "basis": "medians", "anchored": True, "lambda_tps": 2065.2, "sigma": 0.3678,
        "kappa": 0.004152, "r_squared": 0.9512, "points": 10, "n_star": None, "measured_peak_clients": 8,
    }  # fmt: skip
    table = fits_table([fit])
    assert _cells(table, 0) == [
        "tpcb-like", "medians", "yes", "2,065", "0.368", "0.00415", "0.951", "10", "–", "8",
    ]  # fmt: skip
    assert '<th style="text-align: right;">N*</th>' in table
