"""An experiment's tables written as the CSV files people download (build/data/<exp>/<table>.csv): whole,
or with only the changed machines' rows spliced into the files already written."""

from __future__ import annotations

from pathlib import Path

import duckdb

from connlab.contract.files import write_pieces_whole
from connlab.data.csv_runs import one_line_each, splice_runs
from connlab.data.experiment_tables import INPUT_TABLES, changed_schema, table_list
from connlab.data.sql_text import sql_string


def export_tables(
    con: duckdb.DuckDBPyConnection,
    experiment: str,
    out_dir: Path,
    changed: set[str] | None = None,
    known: list[str] | None = None,
) -> list[str]:
    """Every table the experiment's SQL made, as CSV in out_dir/<experiment>; returns their names. changed:
    the only machines whose rows changed since the files were written, their new rows in the schema
    `changed_schema(experiment)` (None: write every file whole). known: the schema's tables, where the
    caller has listed them already."""
    schema = experiment.replace("-", "_")
    listed = table_list(con, schema) if known is None else known
    tables = [table for table in listed if table not in INPUT_TABLES]
    folder = out_dir / experiment
    folder.mkdir(parents=True, exist_ok=True)
    # A table an older aggregate.sql made must not linger as a download.
    for stale in set(folder.glob("*.csv")) - {folder / f"{table}.csv" for table in tables}:
        stale.unlink()
    for table in tables:
        target = folder / (table + ".csv")
        if changed is not None and (
            target.is_file() if not changed else splice_machines(con, experiment, table, target, changed)
        ):
            continue
        # Sorted rows: the same data gives the same download, whatever order the query engine produced.
        whole = f"SELECT * FROM {schema}.{table} ORDER BY ALL"
        con.execute(f"COPY ({whole}) TO {sql_string(str(target))} (HEADER)")
    return tables


def splice_machines(
    con: duckdb.DuckDBPyConnection, experiment: str, table: str, target: Path, changed: set[str]
) -> bool:
    """Write the changed machines' rows into the table's CSV in place of their old ones; False where the file
    must be written whole instead.

    A table whose first column is the machine is exported sorted by it first, so each machine's rows are one
    run of lines in the file, in the machines' byte order (DuckDB's default collation). Exporting a thousand
    machines' tables whole cost about a second and a half for each machine added."""
    if not target.is_file():
        return False
    data = target.read_bytes()
    # Offsets into the file's bytes rather than a header and a body cut from them: each cut of a 15 MB file is
    # a copy made while holding Python's lock, which the pages rendered meanwhile wait for.
    start = data.find(b"\n") + 1
    last_line = data.rfind(b"\n", start, len(data) - 1) + 1 or start
    # A row whose machine is NULL sorts last in DuckDB, but first by bytes: the last line tells.
    if (
        not start
        or not data.startswith(b"machine,")
        or data.startswith(b",", last_line)
        or not one_line_each(data)
    ):
        return False
    rows = target.with_name(f".{target.name}.changed")
    try:
        con.execute(
            f"COPY (SELECT * FROM {changed_schema(experiment)}.{table} WHERE machine::VARCHAR IN "
            f"(SELECT unnest(?::VARCHAR[])) ORDER BY ALL) TO {sql_string(str(rows))} (HEADER)",
            [sorted(changed)],
        )
        new_header, _, new_rows = rows.read_bytes().partition(b"\n")
    finally:
        rows.unlink(missing_ok=True)
    if new_header != data[: start - 1] or not one_line_each(new_rows):
        return False
    spliced = splice_runs(data, start, new_rows, sorted(machine.encode() for machine in changed))
    # Every row one line: a value with a line break in it would make the runs wrong, and the count differ.
    schema = experiment.replace("-", "_")
    counted = con.execute(f"SELECT count(*) FROM {schema}.{table}").fetchone()
    lines = data.count(b"\n", start) - spliced.lines_removed + spliced.lines_added
    if not counted or lines != counted[0]:
        return False
    # Only the runs are compared (the file was read above, and the rest of it is kept as it is).
    if spliced.changed:
        write_pieces_whole(target, [memoryview(data)[:start], *spliced.pieces])
    return True
