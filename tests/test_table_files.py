"""The experiments' CSV files (connlab.data.table_files): a changed machine's rows spliced into a file
already written give the same bytes as writing it whole, and a file whose lines are not its rows is written
whole instead."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from connlab.data.table_files import splice_machines


def _exported(con: duckdb.DuckDBPyConnection, rows: list[tuple], folder: Path) -> Path:
    """A table `t` of schema `e` exported whole, then a changed machine's rows in `e__changed`."""
    con.execute("CREATE SCHEMA e; CREATE TABLE e.t (machine VARCHAR, note VARCHAR)")
    con.executemany("INSERT INTO e.t VALUES (?, ?)", rows)
    target = folder / "e" / "t.csv"
    target.parent.mkdir()
    con.execute(f"COPY (SELECT * FROM e.t ORDER BY ALL) TO '{target}' (HEADER)")
    con.execute("CREATE SCHEMA e__changed; CREATE TABLE e__changed.t AS SELECT 'b' AS machine, 'new' AS note")
    con.execute("DELETE FROM e.t WHERE machine = 'b'; INSERT INTO e.t VALUES ('b', 'new')")
    return target


@pytest.mark.parametrize(
    ("rows", "spliced"),
    [
        ([("a", "x"), ("b", "old"), ("c", 'y, with "quotes"')], True),
        # A line break inside a value: the lines are no longer the rows.
        ([("a", "x\ny"), ("b", "old")], False),
        # A NULL machine sorts last in DuckDB and first by bytes.
        ([(None, "x"), ("b", "old")], False),
    ],
)
def test_a_changed_machine_is_spliced_into_the_export_only_where_each_row_is_one_line(
    tmp_path: Path, rows: list[tuple], spliced: bool
) -> None:
    con = duckdb.connect()
    target = _exported(con, rows, tmp_path)
    assert splice_machines(con, "e", "t", target, {"b"}) is spliced
    if spliced:
        whole = tmp_path / "whole.csv"
        con.execute(f"COPY (SELECT * FROM e.t ORDER BY ALL) TO '{whole}' (HEADER)")
        assert target.read_bytes() == whole.read_bytes()
