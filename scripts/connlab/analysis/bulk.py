"""Python rows into a DuckDB table in one scan.

DuckDB's executemany runs one statement per row, and an INSERT with a parameter per value is parsed and bound
value by value: at a thousand machines either is slow. A column of NumPy objects per table column is
scanned by DuckDB in one pass and cast to the table's types as it is inserted.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import numpy


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: Sequence[Sequence[object]]) -> None:
    """Append rows (values in the table's column order) to the table."""
    if not rows:
        return
    width = len(rows[0])
    columns = {f"column_{index}": numpy.empty(len(rows), dtype=object) for index in range(width)}
    for index, values in enumerate(zip(*rows, strict=True)):
        columns[f"column_{index}"][:] = values
    con.register("connlab_rows", columns)
    try:
        con.execute(f"INSERT INTO {table} SELECT * FROM connlab_rows")
    finally:
        con.unregister("connlab_rows")
