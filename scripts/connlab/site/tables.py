"""Markdown tables assembled in Python, not in the templates: a column is a header, an alignment and how to
write one record's cell, so a table is a list of columns and its rows a loop written once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from connlab.site.formats import number, plain_text, significant

Record = dict[str, object]


@dataclass(frozen=True)
class Column:
    header: str
    cell: Callable[[Record], str]
    numeric: bool = False  # right-aligned, so that digits line up


def markdown_table(columns: Sequence[Column], records: Sequence[Record]) -> str:
    """The header, the alignment row and one row per record, each line ending in a newline."""
    lines = [
        "| " + " | ".join(column.header for column in columns) + " |",
        "|" + "".join("---:|" if column.numeric else "---|" for column in columns),
        *("| " + " | ".join(column.cell(record) for column in columns) + " |" for record in records),
    ]
    return "\n".join(lines) + "\n"


def _range(median: str, low: str, high: str, fmt: Callable[[object], str]) -> Callable[[Record], str]:
    """'median (low–high)': a median with the range of the passes."""
    return lambda r: f"{fmt(r[median])} ({fmt(r[low])}–{fmt(r[high])})"


def _client_cpu(record: Record) -> str:
    # † marks a point where pgbench saturated its own cores (explained under the table).
    return significant(record["client_cpu_median"], 2) + (
        " †" if record.get("windows_client_saturated") else ""
    )


POINTS_COLUMNS = (
    Column("workload", lambda r: plain_text(r["workload"])),
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
    return markdown_table(POINTS_COLUMNS, records)


FITS_COLUMNS = (
    Column("workload", lambda r: plain_text(r["workload"])),
    Column("basis", lambda r: str(r["basis"])),
    Column("λ fixed?", lambda r: "yes" if r["anchored"] else "no"),
    Column("λ, tps", lambda r: number(r["lambda_tps"]), numeric=True),
    Column("σ", lambda r: significant(r["sigma"], 3), numeric=True),
    Column("κ", lambda r: significant(r["kappa"], 3), numeric=True),
    Column("R²", lambda r: significant(r["r_squared"], 3), numeric=True),
    Column("points", lambda r: str(r["points"]), numeric=True),
    # Escaped: an asterisk Markdown could take for emphasis sends the whole table to the slow conversion.
    Column("N\\*", lambda r: significant(r["n_star"], 3), numeric=True),
    Column("measured peak", lambda r: str(r["measured_peak_clients"]), numeric=True),
)


def fits_table(records: Sequence[Record]) -> str:
    """One machine's USL fits: every workload, basis and anchoring."""
    return markdown_table(FITS_COLUMNS, records)
