"""An experiment's tables in DuckDB: its raw rows read into `raw_windows`, the views of connlab.data.views
made over them, and experiments/<exp>/aggregate.sql run, in the experiment's own schema; either every
machine's rows anew (compute_experiment) or only the changed machines' rows replaced (update_machines)."""

from __future__ import annotations

import csv
import tempfile
from pathlib import Path

import duckdb

from connlab.contract.columns import COLUMN_TYPES
from connlab.contract.experiment import load_experiment
from connlab.contract.provenance import HELD_PROFILES
from connlab.data.sql_text import sql_in_list, sql_string
from connlab.data.views import BEST_PROFILE_VIEW, PEAK_STATS_VIEW, POINT_STATS_VIEW, SHARED_MACROS
from connlab.errors import LabError
from connlab.paths import AGGREGATE_SQL_NAME, EXPERIMENT_FILE_NAME, EXPERIMENTS_DIR

# What register_measured lists for every experiment, per machine: kept where the windows are not.
MEASURED_WINDOWS = "measured_windows"
# The best-profile windows (kept for the fits) and their counts: inputs, not results to download.
INPUT_TABLES = ("windows", MEASURED_WINDOWS)


def _types_struct(types: dict[str, str]) -> str:
    """read_csv's `types` argument: columns typed by name, whatever their order in the file."""
    return ", ".join(f"{sql_string(name)}: {sql_string(kind)}" for name, kind in types.items())


def target_expression(targets: dict[str, str], present: bool) -> str:
    """SQL for a row's target: the recorded one, or for rows written before the column existed, the target
    the experiment's spec gives the row's workload."""
    cases = " ".join(f"WHEN {sql_string(w)} THEN {sql_string(t)}" for w, t in sorted(targets.items()))
    derived = f"CASE workload {cases} ELSE 'direct' END" if cases else "'direct'"
    return f"coalesce(target, {derived}) AS target" if present else f"{derived} AS target"


def register_raw_windows(
    con: duckdb.DuckDBPyConnection, files: list[Path], targets: dict[str, str] | None = None
) -> None:
    """The view the aggregate SQL reads; typed by the shared column list, empty when nothing was run.
    targets: each workload's target per the spec, for rows older than the target column."""
    if not files:
        columns = ", ".join(f"NULL::{kind} AS {name}" for name, kind in COLUMN_TYPES.items())
        con.execute(f"CREATE OR REPLACE TABLE raw_windows AS SELECT {columns} WHERE false")
        return
    # Files with one header are joined into one file and read with their columns given, so DuckDB opens few
    # files and sniffs none: opening and sniffing each small file cost more than reading its rows, and grew
    # with every machine. Each file is read once, for its header and its rows (not opened a second time for
    # the header alone).
    by_header: dict[tuple[str, ...], list[tuple[str, str]]] = {}
    for path in files:
        header_line, _, rows = path.read_text(encoding="utf-8").partition("\n")
        header = tuple(next(csv.reader([header_line]), []))
        by_header.setdefault(header, []).append((header_line, rows))
    present = {name for header in by_header for name in header}
    # Columns are matched by name, not position, and listed in the documented order; a column added
    # after older files were written reads as NULL there.
    selected = ", ".join(
        target_expression(targets or {}, name in present)
        if name == "target"
        else name
        if name in present
        else f"NULL::{kind} AS {name}"
        for name, kind in COLUMN_TYPES.items()
    )
    with tempfile.TemporaryDirectory(prefix="connlab-windows-") as folder:
        groups = " UNION ALL BY NAME ".join(
            _read_group(header, _joined(group, Path(folder) / f"{index}.csv"))
            for index, (header, group) in enumerate(by_header.items())
        )
        # A table, not a view: the experiment's SQL reads its windows many times, and a view would parse
        # every CSV file again each time.
        con.execute(f"CREATE OR REPLACE TABLE raw_windows AS SELECT {selected} FROM ({groups})")


def _joined(files: list[tuple[str, str]], target: Path) -> Path:
    """One CSV of files that share a header, each given as its header line and its rows: the header once,
    then every file's rows as written."""
    with target.open("w", encoding="utf-8", newline="") as out:
        for number, (header, rows) in enumerate(files):
            out.write(header + "\n" if number == 0 else "")
            out.write(rows if not rows or rows.endswith("\n") else rows + "\n")
    return target


def _read_group(header: tuple[str, ...], path: Path) -> str:
    """A SELECT over a CSV file, each column typed by the shared column list (a column the list does not
    know, which validation reports, is read as text)."""
    columns = _types_struct({name: COLUMN_TYPES.get(name, "VARCHAR") for name in header})
    return (
        f"SELECT * FROM read_csv({sql_string(str(path))}, header = true, auto_detect = false, "
        f"columns = {{{columns}}}, nullstr = '', delim = ',', quote = '\"', escape = '\"')"
    )


def run_sql_file(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    try:
        con.execute(path.read_text())
    except duckdb.Error as error:
        first = str(error).splitlines()[0]
        raise LabError(f"{path}: {first}") from error


def spec_targets(experiment: str) -> dict[str, str]:
    """Each workload's target as the experiment's spec gives it (none where the spec is missing)."""
    if not (EXPERIMENTS_DIR / experiment / EXPERIMENT_FILE_NAME).exists():
        return {}
    return {
        workload.id: workload.target for workload in load_experiment(experiment, EXPERIMENTS_DIR).workloads
    }


def spec_pooler_kinds(experiment: str) -> dict[str, str]:
    """Each pooler entry's name, as rows record it in `target`, and its kind ('pgbouncer-1.25': 'pgbouncer');
    an entry without a name is its kind."""
    if not (EXPERIMENTS_DIR / experiment / EXPERIMENT_FILE_NAME).exists():
        return {}
    return {p.name or p.kind: p.kind for p in load_experiment(experiment, EXPERIMENTS_DIR).poolers}


def _compute(
    con: duckdb.DuckDBPyConnection, schema: str, experiment: str, files: list[Path], targets: dict[str, str]
) -> None:
    """The experiment's tables from these raw files, in the given schema."""
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}; SET schema = '{schema}'")
    register_raw_windows(con, files, targets)
    con.execute(SHARED_MACROS)
    con.execute(BEST_PROFILE_VIEW)
    con.execute(POINT_STATS_VIEW)
    con.execute(PEAK_STATS_VIEW)
    run_sql_file(con, EXPERIMENTS_DIR / experiment / AGGREGATE_SQL_NAME)
    con.execute(measured_windows_table(spec_pooler_kinds(experiment)))
    # The windows themselves are read after the experiment's SQL only by the USL fits; kept in the database
    # they were nearly all of a thousand machines' file, written at the next checkpoint for nothing. The
    # views over them go with them.
    con.execute("DROP VIEW point_stats; DROP VIEW peak_stats; DROP TABLE raw_windows")
    if load_experiment(experiment).fit is None:
        con.execute("DROP TABLE windows")
    con.execute("SET schema = 'main'")


def measured_windows_table(kinds: dict[str, str]) -> str:
    """The SQL of MEASURED_WINDOWS; kinds: each pooler entry's name and its kind (spec_pooler_kinds)."""
    cases = " ".join(f"WHEN {sql_string(n)} THEN {sql_string(k)}" for n, k in sorted(kinds.items()))
    kind = f"CASE target {cases} ELSE target END" if cases else "target"
    return f"""
CREATE TABLE {MEASURED_WINDOWS} AS
WITH point_passes AS (
    -- The fewest passes any point got (refinement adds passes to some): what a verdict rests on at least.
    SELECT machine, min(passes) AS passes FROM (
        SELECT machine, count(DISTINCT pass_no) AS passes FROM windows
        GROUP BY machine, workload, target, clients, server_cpu_budget, postgres_version, pooler_version
    ) GROUP BY machine
), unsteady AS (
    -- The points left out of every rate for connecting too long (connlab.data.views), in words: what a
    -- claim with no figure at such a point says (connlab.data.claims).
    SELECT machine, list_sort(list_distinct(list(unsteady_reason))) AS unsteady_points
    FROM point_stats WHERE unsteady_reason IS NOT NULL GROUP BY machine
)
SELECT machine, any_value(profile) AS profile, count(*) AS windows, max(server_cpu_budget) AS server_cores,
       min(started_at) AS first_window, max(started_at) AS last_window,
       count(*) FILTER (WHERE client_saturated) AS windows_client_saturated,
       -- What the host took from the windows: where machines' verdicts differ, the page names it.
       max(steal_pct) AS steal_pct_max, max(cpu_pressure_pct) AS cpu_pressure_pct_max,
       -- How the windows were run, as the rows say: where machines' verdicts differ, the page names
       -- whichever of these differ (connlab.data.disagreements).
       any_value(point_passes.passes) AS passes,
       list_sort(list_distinct(list(duration_s))) AS window_lengths_s,
       list_sort(list_distinct(list(clients))) AS client_grid,
       list_sort(list_distinct(list(pool_size))) AS pool_sizes,
       list_sort(list_distinct(list(cpu_budget_method))) AS cpu_methods,
       -- The pooler builds the rows ran, by kind ('pgbouncer 1.25.2'): a machine may hold several builds
       -- of one pooler, where machine.yaml records the one on its PATH.
       list_sort(list_distinct(list({kind} || ' ' || pooler_version)
                               FILTER (WHERE pooler_version IS NOT NULL AND target <> 'direct')))
           AS pooler_versions,
       coalesce(any_value(unsteady.unsteady_points), []) AS unsteady_points,
       -- Each run's calibration and its passes' spread, in the profiles held to the folder's: a run that
       -- calibrated off the machine's marks the verdicts that read it (connlab.data.main_tables).
       list_sort(list_distinct(list({{'tps': run_calibration_tps, 'spread': run_calibration_spread_tps}})
                               FILTER (WHERE run_calibration_tps IS NOT NULL
                                       AND profile IN {sql_in_list(HELD_PROFILES)})))
           AS calibrations
FROM windows JOIN point_passes USING (machine) LEFT JOIN unsteady USING (machine) GROUP BY machine
"""


def catalog(con: duckdb.DuckDBPyConnection, *schemas: str) -> dict[str, dict[str, bool]]:
    """Each schema's tables (inputs included), each with whether it has a machine column: one query of
    DuckDB's own catalog functions, where querying information_schema was slow in a database of twenty
    experiments, and asked four times per experiment updated."""
    found: dict[str, dict[str, bool]] = {schema: {} for schema in schemas}
    for schema, table, has_machine in con.execute(
        "SELECT t.schema_name, t.table_name, bool_or(c.column_name = 'machine') FROM duckdb_tables() t "
        "JOIN duckdb_columns() c USING (database_name, schema_name, table_name) "
        "WHERE t.database_name = current_database() AND t.schema_name IN (SELECT unnest(?::VARCHAR[])) "
        "GROUP BY ALL ORDER BY ALL",
        [list(schemas)],
    ).fetchall():
        found[schema][table] = has_machine
    return found


def table_list(con: duckdb.DuckDBPyConnection, schema: str) -> list[str]:
    """The schema's tables, inputs included."""
    return list(catalog(con, schema)[schema])


def _table_names(con: duckdb.DuckDBPyConnection, schema: str) -> set[str]:
    """The schema's tables, without their columns: a third of what _catalog costs."""
    return {
        str(row[0])
        for row in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
            "AND schema_name = ?",
            [schema],
        ).fetchall()
    }


def compute_experiment(con: duckdb.DuckDBPyConnection, experiment: str, files: list[Path]) -> None:
    """The experiment's tables made anew from these CSVs, in its own schema."""
    schema = experiment.replace("-", "_")
    con.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    _compute(con, schema, experiment, files, spec_targets(experiment))


def update_machines(
    con: duckdb.DuckDBPyConnection,
    experiment: str,
    changed: set[str],
    files: list[Path],
    with_rows: set[str],
    known: dict[str, bool],
) -> bool:
    """Recompute the experiment's rows of the changed machines only (added, edited or removed), in place.
    files: the changed machines' CSVs. with_rows: the machines that may have rows in the tables now. known:
    the schema's tables as they are, each with whether it has a machine column.

    Every table an experiment's SQL makes holds rows of one machine each, computed from that machine's
    windows and the main tables (machines, published figures); CONTRIBUTING.md's "An experiment" says so, and
    tests/data/test_aggregate_incremental.py checks it for every experiment. A table without a machine column
    cannot be updated per machine: False, and the caller computes the experiment whole. The changed
    machines' rows stay in the schema `changed_schema(experiment)` for the export to read; the caller drops
    it.
    """
    schema = experiment.replace("-", "_")
    scratch = changed_schema(experiment)
    con.execute(f"DROP SCHEMA IF EXISTS {scratch} CASCADE")
    _compute(con, scratch, experiment, files, spec_targets(experiment))
    tables = list(known)
    if not all(known.values()) or set(known) != _table_names(con, scratch):
        return False
    con.execute("CREATE OR REPLACE TEMP TABLE changed_machines (machine VARCHAR)")
    con.executemany("INSERT INTO changed_machines VALUES (?)", [[machine] for machine in sorted(changed)])
    # Deleting scans the whole table, a thousand machines' rows, even where no row matches.
    stale = changed & with_rows
    for table in tables:
        if stale:
            con.execute(
                f"DELETE FROM {schema}.{table} WHERE machine IN (SELECT machine FROM changed_machines)"
            )
        con.execute(
            f"INSERT INTO {schema}.{table} BY NAME SELECT * FROM {scratch}.{table} "
            "WHERE machine IN (SELECT machine FROM changed_machines)"
        )
    return True


def changed_schema(experiment: str) -> str:
    """Where an update computes the changed machines' rows of the experiment's tables."""
    return f"{experiment.replace('-', '_')}__changed"
