"""SQL text made from values: DuckDB plans a filter written with literals better than one with parameters."""

from __future__ import annotations

from collections.abc import Iterable


def sql_string(text: str) -> str:
    """A string literal."""
    return "'" + text.replace("'", "''") + "'"


def sql_in_list(values: Iterable[str]) -> str:
    """The list an IN tests against, as literals. A list of machines passed as a parameter and unnested is a
    join that DuckDB cannot push into a query's scans; literals are a filter it applies as it reads each
    table (about half the time over the facts and claims of one machine among a thousand)."""
    return "(" + (", ".join(sql_string(value) for value in values) or "NULL") + ")"
