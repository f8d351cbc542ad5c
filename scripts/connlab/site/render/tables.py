"""The generated tables (a machine's points and fits) written as HTML in Python, not as Markdown for a
Markdown converter to turn back into HTML: a column is a header, an alignment and how to write one record's
cell, so a table is a list of columns and its rows a loop written once. The page carries the table as a raw
HTML block, which Markdown passes through as it is."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from connlab.site.render.formats import number, significant

Record = dict[str, object]


@dataclass(frozen=True)
class Column:
    header: str
    cell: Callable[[Record], str]  # the cell's text, plain (escaped when written)
    numeric: bool = False  # right-aligned, so that digits line up


def text(value: object) -> str:
    """Contributed text shown literally, on one line (the HTML escaped, nothing else)."""
    return " ".join(str(value).split())


def _cell(tag: str, column: Column, content: str) -> str:
    align = ' style="text-align: right;"' if column.numeric else ""
    return f"<{tag}{align}>{html.escape(content, quote=False)}</{tag}>"


def html_table(columns: Sequence[Column], records: Sequence[Record]) -> str:
    """A table as a raw HTML block: blank lines around it, so that Markdown takes it as one block."""
    head = "".join(_cell("th", column, column.header) for column in columns)
    rows = "".join(
        "<tr>" + "".join(_cell("td", column, column.cell(record)) for column in columns) + "</tr>\n"
        for record in records
    )
    return f"\n<table>\n<thead>\n<tr>{head}</tr>\n</thead>\n<tbody>\n{rows}</tbody>\n</table>\n\n"


def _range(median: str, low: str, high: str, fmt: Callable[[object], str]) -> Callable[[Record], str]:
    """'median (low–high)': a median with the range of the passes."""
    return lambda r: f"{fmt(r[median])} ({fmt(r[low])}–{fmt(r[high])})"


def _client_cpu(record: Record) -> str:
    # † marks a point where pgbench saturated its own cores (explained under the table).
    return significant(record["client_cpu_median"], 2) + (
        " †" if record.get("windows_client_saturated") else ""
    )


POINTS_COLUMNS = (
    Column("workload", lambda r: text(r["workload"])),
    Column("clients", lambda r: str(r["clients"]), numeric=True),
    Column("per core", lambda r: significant(r["clients_per_core"], 2), numeric=True),
    Column("tps: median (range)", _range("tps_median", "tps_min", "tps_max", number)),
    Column(
        "mean latency, ms: median (range)",
        _range("latency_avg_median", "latency_avg_min", "latency_avg_max", significant),
    ),
    Column("p95, ms", lambda r: significant(r["latency_p95_median"]), numeric=True),
    Column("server CPU", lambda r: significant(r["server_cpu_median"], 2), numeric=True),
    Column("pgbench CPU", _client_cpu, numeric=True),
    Column("windows ok", lambda r: f"{r['windows_ok']}/{r['windows']}", numeric=True),
)


def points_table(records: Sequence[Record]) -> str:
    """One machine's measured points: medians with the min–max range of the passes."""
    return html_table(POINTS_COLUMNS, records)


FITS_COLUMNS = (
    Column("workload", lambda r: text(r["workload"])),
    Column("basis", lambda r: text(r["basis"])),
    Column("λ fixed?", lambda r: "yes" if r["anchored"] else "no"),
    Column("λ, tps", lambda r: number(r["lambda_tps"]), numeric=True),
    Column("σ", lambda r: significant(r["sigma"], 3), numeric=True),
    Column("κ", lambda r: significant(r["kappa"], 3), numeric=True),
    Column("R²", lambda r: significant(r["r_squared"], 3), numeric=True),
    Column("points", lambda r: str(r["points"]), numeric=True),
    Column("N*", lambda r: significant(r["n_star"], 3), numeric=True),
    Column("measured peak", lambda r: str(r["measured_peak_clients"]), numeric=True),
)


def fits_table(records: Sequence[Record]) -> str:
    """One machine's USL fits: every workload, basis and anchoring."""
    return html_table(FITS_COLUMNS, records)
