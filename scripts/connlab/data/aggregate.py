"""Raw CSVs -> DuckDB tables -> build/data: one folder of CSVs per experiment, one facts file per article.

Each experiment's experiments/<exp>/aggregate.sql runs over a table `raw_windows` of its raw rows (gone once
it has run) and the views made from them (connlab.data.views); each
article's site_src/articles/<slug>.facts.sql names the queries whose rows the article quotes.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import as_completed
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import yaml

from connlab.analysis.bulk import insert_rows
from connlab.analysis.fits import fit_all, fits_code, fitted_schemas
from connlab.contract.cache import canonical_json, digest, read_json, source_digest, write_atomically
from connlab.contract.columns import COLUMN_TYPES, PUBLISHED_FILE_NAME, PUBLISHED_TYPES
from connlab.contract.experiment import experiment_names, load_experiment
from connlab.contract.facts_files import (
    ACROSS_MACHINE_FACTS,
    counts_path,
    facts_path,
    facts_text,
    machine_facts_path,
)
from connlab.contract.files import write_if_changed, write_pieces_whole
from connlab.contract.machine_schema import NOT_AVAILABLE, MachineFile
from connlab.contract.names import CLAIMS_SUBDIR, MACHINES_JSON, PUBLISHED_PREFIX
from connlab.contract.poolers import CONFIGS
from connlab.contract.yaml_models import FAST_LOADER
from connlab.data.answers import write_answers
from connlab.data.claims import evaluate_claims
from connlab.data.csv_runs import one_line_each, splice_runs
from connlab.data.cursor_pool import CursorPool
from connlab.data.sql_text import sql_in_list, sql_string
from connlab.data.views import BEST_PROFILE_VIEW, PEAK_STATS_VIEW, POINT_STATS_VIEW
from connlab.errors import LabError
from connlab.paths import (
    AGGREGATE_SQL_NAME,
    ARTICLES_SRC_DIR,
    DATA_DIR,
    EXPERIMENT_FILE_NAME,
    EXPERIMENTS_DIR,
    FACTS_DIR,
    MACHINE_FILE_NAME,
    PAGES_SRC_DIR,
    RESULTS_DIR,
)

DATABASE_FILE = "connlab.duckdb"
# Each machine.yaml as read, by the file's status (load_machines).
MACHINE_FILES_CACHE = "machine-files.json"


def is_regular_file(path: Path) -> bool:
    """A regular file in a real folder (results/<folder>/<file>, no link on the way): the only kind
    aggregation opens. A FIFO named like a results file would wait for a writer forever when opened
    (validation names such a path; aggregation leaves it out)."""
    try:
        return stat.S_ISREG(path.lstat().st_mode) and not path.parent.is_symlink()
    except OSError:
        return False


def result_files(experiment: str, results_dir: Path = RESULTS_DIR) -> list[Path]:
    return sorted(
        path
        for path in results_dir.glob(f"*/{experiment}/*.csv")
        if not path.parent.parent.name.startswith(PUBLISHED_PREFIX) and is_regular_file(path)
    )


# Each experiment's result files, per machine in name order: (path, status) in path order.
ResultFiles = dict[str, dict[str, list[tuple[str, str]]]]


def result_files_by_experiment(results_dir: Path = RESULTS_DIR) -> ResultFiles:
    """Every measured machine's CSVs, per experiment and machine, each with its status (`_status_text`), from
    one walk of results/: a glob per experiment walked a thousand machines' folders twenty times, and
    pathlib's glob and stat cost twice what os.scandir does. Paths stay text, and only the files read become
    Path objects (making one per file was a third of the walk at a thousand machines)."""
    by_experiment: ResultFiles = {}
    if not results_dir.is_dir():
        return by_experiment
    for machine in _folder_names(str(results_dir)):
        if machine.startswith(PUBLISHED_PREFIX):
            continue
        machine_folder = os.path.join(results_dir, machine)
        for experiment in _folder_names(machine_folder):
            with os.scandir(os.path.join(machine_folder, experiment)) as entries:
                csvs = [
                    entry
                    for entry in entries
                    if entry.name.endswith(".csv") and entry.is_file(follow_symlinks=False)
                ]
            if csvs:
                csvs.sort(key=_name)
                by_experiment.setdefault(experiment, {})[machine] = [
                    (entry.path, _status_text(entry.name, entry.stat())) for entry in csvs
                ]
    return dict(sorted(by_experiment.items()))


def _folder_names(folder: str) -> list[str]:
    with os.scandir(folder) as entries:
        return sorted(entry.name for entry in entries if entry.is_dir(follow_symlinks=False))


def _paths(files: dict[str, list[tuple[str, str]]], machines: Iterable[str]) -> list[Path]:
    """The machines' result files (of one experiment), in path order."""
    return [Path(path) for machine in sorted(machines) for path, _ in files.get(machine, [])]


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


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
    # with every machine. Each file is read once, for its header and its rows (a second opening for the
    # header alone was a second of a cold build at a thousand machines).
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


def _clean(value: object) -> object:
    """JSON-safe values: NaN becomes null, DuckDB's decimals and dates become plain numbers/strings."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, int | float | str | bool) or value is None:
        return value
    if isinstance(value, dict):  # machine.yaml's remote_server
        return {str(key): _clean(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_clean(item) for item in value]
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(value)


def spec_targets(experiment: str) -> dict[str, str]:
    """Each workload's target as the experiment's spec gives it (none where the spec is missing)."""
    if not (EXPERIMENTS_DIR / experiment / EXPERIMENT_FILE_NAME).exists():
        return {}
    return {
        workload.id: workload.target for workload in load_experiment(experiment, EXPERIMENTS_DIR).workloads
    }


def _compute(
    con: duckdb.DuckDBPyConnection, schema: str, experiment: str, files: list[Path], targets: dict[str, str]
) -> None:
    """The experiment's tables from these raw files, in the given schema."""
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}; SET schema = '{schema}'")
    register_raw_windows(con, files, targets)
    con.execute(BEST_PROFILE_VIEW)
    con.execute(POINT_STATS_VIEW)
    con.execute(PEAK_STATS_VIEW)
    run_sql_file(con, EXPERIMENTS_DIR / experiment / AGGREGATE_SQL_NAME)
    con.execute(MEASURED_WINDOWS_TABLE)
    # The windows themselves are read after the experiment's SQL only by the USL fits; kept in the database
    # they were nearly all of a thousand machines' file, written at the next checkpoint (about 4 s of a cold
    # aggregation here for the raw rows alone). The views over them go with them.
    con.execute("DROP VIEW point_stats; DROP VIEW peak_stats; DROP TABLE raw_windows")
    if load_experiment(experiment).fit is None:
        con.execute("DROP TABLE windows")
    con.execute("SET schema = 'main'")


MEASURED_WINDOWS_TABLE = f"""
CREATE TABLE {MEASURED_WINDOWS} AS
SELECT machine, any_value(profile) AS profile, count(*) AS windows, max(server_cpu_budget) AS server_cores,
       min(started_at) AS first_window, max(started_at) AS last_window,
       count(*) FILTER (WHERE client_saturated) AS windows_client_saturated,
       -- What the host took from the windows: where machines' verdicts differ, the page names it.
       max(steal_pct) AS steal_pct_max, max(cpu_pressure_pct) AS cpu_pressure_pct_max
FROM windows GROUP BY machine
"""


def _catalog(con: duckdb.DuckDBPyConnection, *schemas: str) -> dict[str, dict[str, bool]]:
    """Each schema's tables (inputs included), each with whether it has a machine column: one query of
    DuckDB's own catalog functions, where each query of information_schema cost 5-20 ms in a database of
    twenty experiments, four times per experiment updated."""
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


def _tables(con: duckdb.DuckDBPyConnection, schema: str) -> list[str]:
    """The schema's tables, inputs included."""
    return list(_catalog(con, schema)[schema])


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
    listed = _tables(con, schema) if known is None else known
    tables = [table for table in listed if table not in INPUT_TABLES]
    folder = out_dir / experiment
    folder.mkdir(parents=True, exist_ok=True)
    # A table an older aggregate.sql made must not linger as a download.
    for stale in set(folder.glob("*.csv")) - {folder / f"{table}.csv" for table in tables}:
        stale.unlink()
    for table in tables:
        target = folder / (table + ".csv")
        if changed is not None and (
            target.is_file() if not changed else _splice_machines(con, experiment, table, target, changed)
        ):
            continue
        # Sorted rows: the same data gives the same download, whatever order the query engine produced.
        whole = f"SELECT * FROM {schema}.{table} ORDER BY ALL"
        con.execute(f"COPY ({whole}) TO {sql_string(str(target))} (HEADER)")
    return tables


def _splice_machines(
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


def aggregate_experiment(
    con: duckdb.DuckDBPyConnection,
    experiment: str,
    out_dir: Path,
    results_dir: Path = RESULTS_DIR,
    files: list[Path] | None = None,
) -> list[str]:
    """Run the experiment's SQL over every machine's rows (files: its CSVs, where already listed) in its own
    schema; export every table it made as CSV."""
    compute_experiment(con, experiment, result_files(experiment, results_dir) if files is None else files)
    return export_tables(con, experiment, out_dir)


def compute_experiment(con: duckdb.DuckDBPyConnection, experiment: str, files: list[Path]) -> None:
    """The experiment's tables made anew from these CSVs, in its own schema."""
    schema = experiment.replace("-", "_")
    con.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    _compute(con, schema, experiment, files, spec_targets(experiment))


def update_machines(
    con: duckdb.DuckDBPyConnection,
    experiment: str,
    changed: set[str],
    results_dir: Path = RESULTS_DIR,
    files: list[Path] | None = None,
    with_rows: set[str] | None = None,
    known: dict[str, bool] | None = None,
) -> bool:
    """Recompute the experiment's rows of the changed machines only (added, edited or removed), in place.
    with_rows: the machines that may have rows in the tables now (None: any). known: the schema's tables,
    each with whether it has a machine column, where the caller has listed them already.

    Every table an experiment's SQL makes holds rows of one machine each, computed from that machine's
    windows and the main tables (machines, published figures); ARCHITECTURE.md's "An experiment" says so, and
    tests/test_aggregate_incremental.py checks it for every experiment. A table without a machine column
    cannot be updated per machine: False, and the caller computes the experiment whole. The changed
    machines' rows stay in the schema `changed_schema(experiment)` for the export to read; the caller drops
    it.
    """
    schema = experiment.replace("-", "_")
    scratch = changed_schema(experiment)
    con.execute(f"DROP SCHEMA IF EXISTS {scratch} CASCADE")
    files = result_files(experiment, results_dir) if files is None else files
    files = [path for path in files if path.parent.parent.name in changed]
    _compute(con, scratch, experiment, files, spec_targets(experiment))
    known = _catalog(con, schema)[schema] if known is None else known
    tables = list(known)
    if not all(known.values()) or set(known) != _table_names(con, scratch):
        return False
    con.execute("CREATE OR REPLACE TEMP TABLE changed_machines (machine VARCHAR)")
    con.executemany("INSERT INTO changed_machines VALUES (?)", [[machine] for machine in sorted(changed)])
    # Deleting scans the whole table, a thousand machines' rows, even where no row matches.
    stale = changed if with_rows is None else changed & with_rows
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


_QUERY_MARKER = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$", re.M)


def split_named_queries(text: str) -> dict[str, str]:
    """`-- name: x` starts query x; the query runs until the next marker."""
    parts = _QUERY_MARKER.split(text)
    return {parts[i]: parts[i + 1].strip().rstrip(";") for i in range(1, len(parts), 2)}


def _json_constant(name: str) -> float | None:
    # NaN is no JSON value: an undefined figure is null.
    return None if name == "NaN" else float(name)


def _without_nan(row: str) -> str:
    # DuckDB writes an undefined double as NaN, which is no JSON value: null, as _clean makes it elsewhere.
    return json.dumps(json.loads(row, parse_constant=_json_constant), sort_keys=True) if "NaN" in row else row


def query_json_rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[str]:
    """Each row of the query as a JSON object, in the query's order, written by DuckDB: converting every
    value to Python and encoding it again cost more than the queries at a thousand machines."""
    return [
        _without_nan(row[0])
        for row in con.execute(f"SELECT to_json(facts_row) FROM ({sql}) AS facts_row").fetchall()
    ]


def _machine_json_rows(
    con: duckdb.DuckDBPyConnection, sql: str, kept: list[str] | None = None
) -> list[tuple[str | None, str]]:
    """(machine, row as JSON) for each row of a query that names machines, in the query's order; with kept,
    only the rows of those machines and of none. The machines are written into the query as literals, so that
    DuckDB filters the tables as it reads them: an anti-join against the machines left out tested every row
    of a thousand machines, and took twice as long as this over every article's facts."""
    select = f"SELECT machine::VARCHAR, to_json(facts_row) FROM ({sql}) AS facts_row"
    if kept is not None:
        select += f" WHERE machine IS NULL OR machine::VARCHAR IN {sql_in_list(kept)}"
    return [(machine, _without_nan(row)) for machine, row in con.execute(select).fetchall()]


# Each measured machine's rows of each fact, per article: the counts of the machines whose facts were not
# computed again come from here.
FACTS_COUNTS_TABLE = "main.facts_counts"


def export_facts(
    con: duckdb.DuckDBPyConnection,
    facts_sql: Path,
    out_dir: Path,
    measured: set[str] | None = None,
    changed: set[str] | None = None,
) -> Path:
    """The named queries' rows as facts files; with the measured machines (an article), each one's rows of
    the facts that name machines in a file of its own (connlab.contract.facts_files). With the measured
    machines whose inputs changed since the files were written (None: all of them), only those machines'
    files are written again: a measured machine's rows depend on its own measurements alone, as every
    experiment's rows do (tests/test_aggregate_incremental.py checks the files against aggregating anew)."""
    slug = facts_sql.name.removesuffix(".facts.sql")
    redone = (measured or set()) if changed is None else (measured or set()) & changed
    skipped = sorted((measured or set()) - redone)
    # The rows kept where some machines are skipped: the others', and the published machines' (a fact's
    # machine is one of main.machines).
    kept = None
    if skipped:
        everyone = {str(row[0]) for row in con.execute("SELECT id FROM main.machines").fetchall()}
        kept = sorted(everyone - set(skipped))
    shared: dict[str, list[str]] = {}
    own: dict[str, dict[str, list[str]]] = {machine: {} for machine in redone}
    counts: dict[str, int] = {}
    own_counts: list[tuple[str, str, str, int]] = []
    for name, sql in split_named_queries(facts_sql.read_text()).items():
        try:
            columns = [c[0] for c in con.execute(f"SELECT * FROM ({sql}) AS q LIMIT 0").description]
            if measured is None or "machine" not in columns or name in ACROSS_MACHINE_FACTS:
                shared[name] = query_json_rows(con, sql)
                counts[name] = len(shared[name])
                continue
            rows = _machine_json_rows(con, sql, kept)
        except duckdb.Error as error:
            raise LabError(f"{facts_sql}: query {name}: {str(error).splitlines()[0]}") from error
        shared[name] = []
        for facts in own.values():
            facts[name] = []
        for machine, row in rows:
            (own[machine][name] if machine in own else shared[name]).append(row)
        own_counts += [
            (slug, name, machine, len(facts[name])) for machine, facts in own.items() if facts[name]
        ]
        counts[name] = len(shared[name])
    out_dir.mkdir(parents=True, exist_ok=True)
    path = facts_path(out_dir, slug)
    write_if_changed(path, facts_text(shared))
    folder = out_dir / slug
    if measured is None:
        counts_path(out_dir, slug).unlink(missing_ok=True)
        shutil.rmtree(folder, ignore_errors=True)
        return path
    con.execute(
        f"CREATE TABLE IF NOT EXISTS {FACTS_COUNTS_TABLE} "
        "(slug VARCHAR, fact VARCHAR, machine VARCHAR, n INTEGER)"
    )
    # Every machine's counts go but the skipped machines': those written again now, and those gone. (Named
    # as literals: the skipped machines, a thousand of them, as a table filled for each article cost more.)
    counted = {
        str(row[0])
        for row in con.execute(
            f"SELECT DISTINCT machine FROM {FACTS_COUNTS_TABLE} WHERE slug = ?", [slug]
        ).fetchall()
    }
    if stale_counts := sorted(counted - set(skipped)):
        con.execute(
            f"DELETE FROM {FACTS_COUNTS_TABLE} WHERE slug = ? AND machine IN {sql_in_list(stale_counts)}",
            [slug],
        )
    insert_rows(con, FACTS_COUNTS_TABLE, own_counts)
    for name, n in con.execute(
        f"SELECT fact, sum(n)::INTEGER FROM {FACTS_COUNTS_TABLE} WHERE slug = ? GROUP BY fact", [slug]
    ).fetchall():
        if name in counts:
            counts[name] += n
    write_if_changed(counts_path(out_dir, slug), json.dumps(counts, sort_keys=True))
    for machine, facts in own.items():
        write_if_changed(machine_facts_path(out_dir, slug, machine), facts_text(facts))
    # A machine whose results are gone must not keep its facts (names compared as text: a Path for each of a
    # thousand files cost more than the rest of this).
    kept_names = {machine_facts_path(out_dir, slug, machine).name for machine in measured}
    for stale in sorted(set(os.listdir(folder)) - kept_names if folder.is_dir() else []):
        if stale.endswith(".json"):
            (folder / stale).unlink()
    return path


def load_machines(results_dir: Path = RESULTS_DIR, cache_file: Path | None = None) -> list[dict[str, object]]:
    """Every machine.yaml, as the tables and pages read it. With cache_file, a file whose status (time, size,
    inode) is unchanged since it was read is taken from there: parsing a thousand machines' files again was
    a twentieth of adding one machine to them."""
    cached = read_json(cache_file) if cache_file is not None else None
    known: dict[str, list[object]] = cached if isinstance(cached, dict) else {}
    entries: dict[str, list[object]] = {}
    for path in sorted(results_dir.glob(f"*/{MACHINE_FILE_NAME}")):
        if not is_regular_file(path):
            continue
        status = path.stat()
        signature = f"{status.st_mtime_ns} {status.st_size} {status.st_ino}"
        entry = known.get(str(path))
        if not (isinstance(entry, list) and len(entry) == 2 and entry[0] == signature):
            entry = [signature, _machine_of(path)]
        entries[str(path)] = entry
    if cache_file is not None and entries != known:
        write_atomically(cache_file, json.dumps(entries))
    return [entry[1] for entry in entries.values()]  # type: ignore[misc]


def _machine_of(path: Path) -> dict[str, object]:
    # libyaml where present: validation has read these files already, and one is read per machine.
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=FAST_LOADER) or {}
    data["id"] = path.parent.name
    data["published"] = path.parent.name.startswith(PUBLISHED_PREFIX)
    # As the cache gives it back: JSON's values, so that a machine read anew and one cached are equal.
    return json.loads(json.dumps({key: _clean(value) for key, value in data.items()}))


def register_machines(con: duckdb.DuckDBPyConnection, machines: list[dict[str, object]]) -> None:
    """main.machines: one row per results folder; server_cores is the server's CPU allocation; netem is
    whether network delay could be added there ("available" or why not; NULL where never probed);
    postgres_version is the machine's own PostgreSQL (a published article's: the version its seed ran)."""
    con.execute(
        "CREATE OR REPLACE TABLE main.machines (id VARCHAR, published BOOLEAN, cores DOUBLE, "
        "server_cores DOUBLE, calibration_tps DOUBLE, profile VARCHAR, netem VARCHAR, "
        "postgres_version VARCHAR)"
    )
    rows = [
        [machine["id"], machine["published"], machine.get("cores"),
         machine.get("server_cores") or machine.get("cores"), machine.get("calibration_tps"),
         machine.get("profile"), machine.get("netem"), machine.get("postgres_version")]
        for machine in machines
    ]  # fmt: skip
    insert_rows(con, "main.machines", rows)
    # main.pooler_versions: each pooler kind machine.yaml records, per machine, and whether it ran there (the
    # file says "not available on this machine" where its program was missing).
    con.execute(
        "CREATE OR REPLACE TABLE main.pooler_versions (machine VARCHAR, pooler VARCHAR, version VARCHAR, "
        "available BOOLEAN)"
    )
    kinds = [name.removesuffix("_version") for name in MachineFile.model_fields if name.endswith("_version")]
    versions = [
        [
            machine["id"],
            kind,
            str(machine[f"{kind}_version"]),
            str(machine[f"{kind}_version"]) != NOT_AVAILABLE,
        ]
        for machine in machines
        for kind in kinds
        if kind in CONFIGS and machine.get(f"{kind}_version") is not None
    ]
    insert_rows(con, "main.pooler_versions", versions)


def register_measured(con: duckdb.DuckDBPyConnection) -> None:
    """main.measured: which experiments each machine measured, in which profile, and when (first and last
    window), and how many of its windows were client-bound: what the site says once where a machine lacks
    an experiment, and what a claim's verdict is checked against (connlab.data.claims)."""
    selects = [
        f"SELECT machine, {sql_string(name)} AS experiment, profile, windows, server_cores, first_window, "
        f"last_window, windows_client_saturated, steal_pct_max, cpu_pressure_pct_max "
        f"FROM {name.replace('-', '_')}.{MEASURED_WINDOWS}"
        for name in experiment_names()
        if (EXPERIMENTS_DIR / name / AGGREGATE_SQL_NAME).exists()
    ]
    union = (
        " UNION ALL ".join(selects)
        if selects
        else (
            "SELECT NULL::VARCHAR AS machine, NULL::VARCHAR AS experiment, NULL::VARCHAR AS profile, "
            "0 AS windows, NULL::DOUBLE AS server_cores, NULL::VARCHAR AS first_window, "
            "NULL::VARCHAR AS last_window, 0 AS windows_client_saturated, NULL::DOUBLE AS steal_pct_max, "
            "NULL::DOUBLE AS cpu_pressure_pct_max WHERE false"
        )
    )
    con.execute(f"CREATE OR REPLACE TABLE main.measured AS {union}")
    # Every experiment of the project, measured anywhere or not: what a machine did not run is named
    # against this list.
    con.execute("CREATE OR REPLACE TABLE main.experiments (experiment VARCHAR)")
    con.executemany("INSERT INTO main.experiments VALUES (?)", [[name] for name in experiment_names()])


def register_pooler_settings(con: duckdb.DuckDBPyConnection) -> None:
    """main.pooler_settings: each experiment's poolers' pool sizes, which its rows do not repeat (a claim
    about admission control compares the backends the server saw with the pool it was given)."""
    con.execute(
        "CREATE OR REPLACE TABLE main.pooler_settings (experiment VARCHAR, pool_size INTEGER, pooler VARCHAR)"
    )
    for name in experiment_names():
        for pooler in load_experiment(name).poolers:
            con.execute(
                "INSERT INTO main.pooler_settings VALUES (?, ?, ?)", [name, pooler.pool_size, pooler.instance]
            )


def register_published(con: duckdb.DuckDBPyConnection, results_dir: Path) -> None:
    """main.published: every published figure, in long form, with its folder as the machine."""
    found = results_dir.glob(f"{PUBLISHED_PREFIX}*/{PUBLISHED_FILE_NAME}")
    files = sorted(path for path in found if is_regular_file(path))
    columns = ", ".join(PUBLISHED_TYPES)
    if files:
        file_list = ", ".join(sql_string(str(path)) for path in files)
        types = ", ".join(f"{sql_string(name)}: {sql_string(kind)}" for name, kind in PUBLISHED_TYPES.items())
        source = (
            f"SELECT regexp_extract(filename, '([^/]+)/[^/]+$', 1) AS machine, {columns} "
            f"FROM read_csv([{file_list}], header = true, union_by_name = true, types = {{{types}}}, "
            f"nullstr = '', filename = true)"
        )
    else:
        typed = ", ".join(f"NULL::{kind} AS {name}" for name, kind in PUBLISHED_TYPES.items())
        source = f"SELECT NULL::VARCHAR AS machine, {typed} WHERE false"
    con.execute(f"CREATE OR REPLACE TABLE main.published AS {source}")
    # A seed's operating point per server core of its machine, so that its figure can be set beside
    # ours at the same clients per core (main.machines is registered first).
    con.execute(
        "CREATE OR REPLACE VIEW main.published_per_core AS SELECT p.*, m.server_cores, p.clients / "
        "m.server_cores AS clients_per_core FROM main.published p JOIN main.machines m ON m.id = p.machine"
    )


# What each experiment's tables were computed from, kept in the database between builds: the experiment's
# basis (code, spec, SQL, published figures) under machine '', and each machine's inputs under its id.
STATE_TABLE = "main.aggregate_state"
DATA_CODE = Path(__file__).resolve().parent
CONTRACT_CODE = DATA_CODE.parent / "contract"


def _status_text(name: str, status: os.stat_result) -> str:
    # A file's size, times and inode change whenever it is written or replaced; hashing the contents of every
    # machine's files on every build grew with the machine count.
    return f"{name}\0{status.st_size}\0{status.st_mtime_ns}\0{status.st_ctime_ns}\0{status.st_ino}"


def experiment_basis(experiment: str, common: str) -> str:
    folder = EXPERIMENTS_DIR / experiment
    return digest(common, (folder / AGGREGATE_SQL_NAME).read_text(encoding="utf-8"))


def common_basis(results_dir: Path) -> str:
    """What every experiment's tables depend on besides its own SQL and each machine's rows: the code of the
    data stage and the contract, every spec (main.pooler_settings reads them all), the published figures
    and DuckDB's version."""
    code = sorted([*DATA_CODE.glob("*.py"), *CONTRACT_CODE.rglob("*.py")])
    specs = sorted(EXPERIMENTS_DIR.glob(f"*/{EXPERIMENT_FILE_NAME}"))
    published = sorted(path for path in results_dir.glob(f"{PUBLISHED_PREFIX}*/*") if path.is_file())
    return digest(
        duckdb.__version__,
        source_digest(*code, *specs, *published),
        *(str(path.relative_to(results_dir)) for path in published),
    )


def machine_inputs(machines: dict[str, str], files: dict[str, list[tuple[str, str]]]) -> dict[str, str]:
    """Each machine with rows of the experiment (files: its CSVs with their status, per machine): the key of
    its machine.yaml (machines: each one's canonical text) and of its files' status."""
    return {
        machine: digest(machines.get(machine, "null"), *(status for _, status in entries))
        for machine, entries in files.items()
    }


def _previous_state(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, str]]:
    con.execute(
        f"CREATE TABLE IF NOT EXISTS {STATE_TABLE} (experiment VARCHAR, machine VARCHAR, key VARCHAR)"
    )
    state: dict[str, dict[str, str]] = {}
    for experiment, machine, key in con.execute(f"SELECT * FROM {STATE_TABLE}").fetchall():
        state.setdefault(experiment, {})[machine] = key
    return state


def _forget_state(con: duckdb.DuckDBPyConnection, experiment: str, *, entirely: bool = False) -> None:
    """Forget the experiment's state before its tables change: its basis is enough, since a state without one
    matches no basis and the next aggregation computes the experiment whole. entirely: every entry (an
    experiment that is gone)."""
    basis_only = "" if entirely else " AND machine = ''"
    con.execute(f"DELETE FROM {STATE_TABLE} WHERE experiment = ?{basis_only}", [experiment])


def _record_state(
    con: duckdb.DuckDBPyConnection, experiment: str, state: dict[str, str], previous: dict[str, str]
) -> None:
    """Record the experiment's new state once its tables and files are written, over the one read at the start
    (previous): only the entries that differ are written, and the basis always. Writing a thousand machines'
    entries for every experiment cost most of a second when one machine was added."""
    differ = {machine: key for machine, key in state.items() if machine == "" or previous.get(machine) != key}
    replaced = sorted(differ.keys() | (previous.keys() - state.keys()))
    con.execute(
        f"DELETE FROM {STATE_TABLE} WHERE experiment = ? AND machine IN (SELECT unnest(?::VARCHAR[]))",
        [experiment, replaced],
    )
    insert_rows(con, STATE_TABLE, [(experiment, machine, key) for machine, key in differ.items()])


@dataclass(frozen=True)
class Brought:
    """An experiment whose tables were brought up to date, its CSV files still to write."""

    experiment: str
    how: str  # "computed" (every table made anew) or "updated" (the changed machines' rows)
    # Updated: the machines whose rows changed, their new rows in the scratch schema, and the schema's tables.
    changed: set[str] = field(default_factory=set)
    tables: list[str] | None = None


def bring_tables(
    con: duckdb.DuckDBPyConnection,
    experiment: str,
    state: dict[str, str],
    previous: dict[str, str],
    out_dir: Path,
    results_dir: Path,
    files: dict[str, list[tuple[str, str]]],
    known: dict[str, bool] | None = None,
) -> Brought | None:
    """Bring the experiment's tables up to date, in one transaction: only the changed machines' rows
    recomputed, or everything computed again (its basis changed, or no state was kept). Returns which, for
    write_files to write the experiment's files; None where it was up to date. The caller forgets the
    experiment's recorded state before, and records the new one once the files are written. known: the
    experiment's tables as they were before, each with whether it has a machine column (None: look)."""
    if not _due(experiment, state, previous, out_dir):
        return None
    con.execute(f"DROP SCHEMA IF EXISTS {changed_schema(experiment)} CASCADE")
    with _transaction(con):
        if previous.get("") == state[""]:
            changed = {m for m in state.keys() | previous.keys() if state.get(m) != previous.get(m)}
            # Rows exist only for the machines of the recorded state: an added machine has none to delete.
            if not changed or update_machines(
                con, experiment, changed, results_dir, _paths(files, changed), set(previous), known
            ):
                return Brought(experiment, "updated", changed, None if known is None else list(known))
        compute_experiment(con, experiment, _paths(files, files))
    return Brought(experiment, "computed")


def write_files(con: duckdb.DuckDBPyConnection, brought: Brought, out_dir: Path) -> None:
    """The CSV files of an experiment whose tables were brought up to date; then its scratch schema goes.
    (Dropped outside the tables' transaction: DuckDB refuses to commit one that changed a table and dropped
    another of the same name, as the scratch schema's tables are named.)"""
    if brought.how == "computed":
        export_tables(con, brought.experiment, out_dir)
    else:
        export_tables(con, brought.experiment, out_dir, brought.changed, brought.tables)
    con.execute(f"DROP SCHEMA IF EXISTS {changed_schema(brought.experiment)} CASCADE")


@contextmanager
def _transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """One transaction: an experiment's forty-odd statements commit once, where each committed on its own
    before (a commit writes the database's log), and an update that fails or is interrupted half-way
    leaves the tables as they were."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
    except BaseException:
        with suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def _due(experiment: str, state: dict[str, str], previous: dict[str, str], out_dir: Path) -> bool:
    return previous != state or not (out_dir / experiment).is_dir()


# Experiments brought up to date at once. Each one's SQL reads its own schema and the main tables only
# (ARCHITECTURE.md, "An experiment"; tests/test_aggregate_incremental.py checks the SQL), so their order does
# not matter; a statement runs inside DuckDB without Python's lock, and an added machine's twenty updates are
# mostly such statements, each too small to keep DuckDB's own threads busy.
EXPERIMENT_WORKERS = max(1, min(4, os.cpu_count() or 1))


def bring_up_to_date(
    con: duckdb.DuckDBPyConnection,
    states: dict[str, dict[str, str]],
    previous: dict[str, dict[str, str]],
    out_dir: Path,
    results_dir: Path,
    files: ResultFiles,
) -> list[Brought]:
    """bring_tables for every experiment, several at a time; returns those whose files are to be written
    (write_brought). Each experiment's state is forgotten before its tables change, here on `con` alone,
    and recorded only once its files are written."""
    for experiment, state in states.items():
        if _due(experiment, state, previous.get(experiment, {}), out_dir):
            _forget_state(con, experiment)
    # Every experiment's tables listed in one query: DuckDB's catalog functions cost 15-35 ms a query in a
    # database of twenty experiments, and each update asked twice.
    catalog = _catalog(con, *(experiment.replace("-", "_") for experiment in states))
    with CursorPool(con, EXPERIMENT_WORKERS) as pool:
        jobs = [
            pool.submit(
                bring_tables, experiment, states[experiment], previous.get(experiment, {}), out_dir,
                results_dir, files.get(experiment, {}), catalog[experiment.replace("-", "_")],
            )
            for experiment in states
        ]  # fmt: skip
        return [brought for job in jobs if (brought := job.result()) is not None]


def write_brought(
    con: duckdb.DuckDBPyConnection,
    brought: list[Brought],
    states: dict[str, dict[str, str]],
    previous: dict[str, dict[str, str]],
    out_dir: Path,
) -> None:
    """The CSV files of the experiments brought up to date, several at a time; each experiment's state is
    recorded once its files are written. Nothing the aggregation does after bring_up_to_date reads these
    files, so a caller with a later stage to run can have them written meanwhile (aggregate_all's `later`)."""
    with CursorPool(con, EXPERIMENT_WORKERS) as pool:
        jobs = {pool.submit(write_files, one, out_dir): one.experiment for one in brought}
        for job in as_completed(jobs):
            job.result()
            experiment = jobs[job]
            _record_state(con, experiment, states[experiment], previous.get(experiment, {}))


def _open_kept(database: Path) -> duckdb.DuckDBPyConnection:
    """The database kept from the last build; a file DuckDB cannot open (another version's, or damaged) is
    started again from nothing, since everything in it can be computed again."""
    try:
        return duckdb.connect(str(database))
    except duckdb.Error:
        database.unlink(missing_ok=True)
        Path(f"{database}.wal").unlink(missing_ok=True)
        return duckdb.connect(str(database))


def _now(task: Callable[[], None]) -> None:
    task()


def aggregate_all(
    results_dir: Path = RESULTS_DIR,
    out_dir: Path = DATA_DIR,
    later: Callable[[Callable[[], None]], object] = _now,
) -> Path:
    """Bring build/data up to date with results/; return the DuckDB file the claims and articles can query.

    The database is kept between builds: an experiment whose SQL, spec, code and published figures are
    unchanged has only the rows of the machines whose files changed computed again (adding one machine to a
    thousand recomputes one machine). The main tables, fits, facts and claims are made again every time.
    later: what runs the last task, which writes the experiments' CSV files and closes the database (about
    a second after adding a machine to a thousand: closing writes DuckDB's log into the file), where the
    caller has a later stage to run meanwhile. Everything else is written when this returns: the machines,
    facts and claims, which are all that the site's stages read.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    database = out_dir / DATABASE_FILE
    machines = load_machines(results_dir, out_dir / MACHINE_FILES_CACHE)
    # Each machine.yaml's canonical text, once: every experiment's key and the facts' key include it.
    texts = {str(machine["id"]): canonical_json(machine) for machine in machines}
    common = common_basis(results_dir)
    con = _open_kept(database)
    try:
        previous = _previous_state(con)
        for gone in sorted(previous.keys() - set(experiment_names()) - {FACTS_STATE}):
            con.execute(f"DROP SCHEMA IF EXISTS {gone.replace('-', '_')} CASCADE")
            _forget_state(con, gone, entirely=True)
        register_machines(con, machines)
        register_published(con, results_dir)
        register_pooler_settings(con)
        files = result_files_by_experiment(results_dir)
        states: dict[str, dict[str, str]] = {}
        for experiment in experiment_names():
            if not (EXPERIMENTS_DIR / experiment / AGGREGATE_SQL_NAME).exists():
                continue
            states[experiment] = {
                "": experiment_basis(experiment, common),
                **machine_inputs(texts, files.get(experiment, {})),
            }
        brought = bring_up_to_date(con, states, previous, out_dir, results_dir, files)
        register_measured(con)
        fit_all(con, _fit_keys(states))
        write_if_changed(out_dir / MACHINES_JSON, json.dumps(machines, sort_keys=True))
        # Articles and pages alike may name the figures they quote (the Machines page compares machines).
        facts_dir = out_dir / FACTS_DIR.relative_to(DATA_DIR)
        measured = {str(m["id"]) for m in machines if not m["published"]}
        # An article's facts are split by machine (each machine's page reads its own), and only the machines
        # whose inputs changed since they were last written are written again; a page's (the Machines page
        # compares every machine) stay whole.
        facts_state = _facts_state(common, states, texts, measured)
        changed = _changed_machines(facts_state, previous.get(FACTS_STATE))
        _forget_state(con, FACTS_STATE)
        # Facts and claims read the tables and write files of their own: each article's claims, and each
        # page's facts, are made on a worker while the articles' facts are exported here (they share the
        # table of counts, which one cursor at a time writes).
        with CursorPool(con, EXPERIMENT_WORKERS) as pool:
            jobs = [
                pool.submit(
                    evaluate_claims, claims_file, [str(m["id"]) for m in machines], out_dir / CLAIMS_SUBDIR,
                    [str(m["id"]) for m in machines if not m["published"]], changed,
                )
                for claims_file in sorted(ARTICLES_SRC_DIR.glob("*.claims.yaml"))
            ]  # fmt: skip
            jobs += [
                pool.submit(export_facts, facts_sql, facts_dir)
                for facts_sql in sorted(PAGES_SRC_DIR.glob("*.facts.sql"))
            ]
            for facts_sql in sorted(ARTICLES_SRC_DIR.glob("*.facts.sql")):
                export_facts(con, facts_sql, facts_dir, measured, changed)
            for job in jobs:
                job.result()
        # The articles' short answers and each machine's pool size, from the facts and verdicts just written.
        write_answers(out_dir, facts_dir, out_dir / CLAIMS_SUBDIR, sorted(measured), results_dir)
        _record_state(con, FACTS_STATE, facts_state, previous.get(FACTS_STATE, {}))
    except BaseException:
        con.close()
        raise

    def finish() -> None:
        try:
            write_brought(con, brought, states, previous, out_dir)
        finally:
            con.close()

    later(finish)
    return database


def _fit_keys(states: dict[str, dict[str, str]]) -> dict[str, str]:
    """Each machine's key of what its USL fits are made from: the fitting code, and each fitted experiment's
    basis and the machine's inputs to it (its windows there come from nothing else)."""
    fitted = sorted(name for name in states if name.replace("-", "_") in fitted_schemas())
    code = fits_code()
    machines = {machine for name in fitted for machine in states[name] if machine}
    return {
        machine: digest(
            code, *(f"{name}\0{states[name]['']}\0{states[name].get(machine, '')}" for name in fitted)
        )
        for machine in machines
    }


# The aggregation state's entry for the articles' facts files (no experiment has this name).
FACTS_STATE = "(facts)"
ANALYSIS_CODE = DATA_CODE.parent / "analysis"


def _facts_state(
    common: str, states: dict[str, dict[str, str]], machines: dict[str, str], measured: set[str]
) -> dict[str, str]:
    """What the articles' facts and claims files were written from: under '', their queries and claims, the
    fitting code and every experiment's basis; under each measured machine, its inputs to every experiment
    and its machine row."""
    queries = sorted([*ARTICLES_SRC_DIR.glob("*.facts.sql"), *ARTICLES_SRC_DIR.glob("*.claims.yaml")])
    basis = digest(
        common,
        source_digest(*queries, *sorted(ANALYSIS_CODE.glob("*.py"))),
        *(str(path.name) for path in queries),
        *(f"{experiment}\0{state['']}" for experiment, state in sorted(states.items())),
    )
    return {
        "": basis,
        **{
            machine: digest(
                machines.get(machine, "null"),
                *(f"{experiment}\0{state.get(machine, '')}" for experiment, state in sorted(states.items())),
            )
            for machine in sorted(measured)
        },
    }


def _changed_machines(state: dict[str, str], previous: dict[str, str] | None) -> set[str] | None:
    """The measured machines whose facts must be written again; None: all (the basis changed, or no state
    was kept: a first build, or one interrupted while writing facts)."""
    if not previous or previous.get("") != state[""]:
        return None
    return {
        machine
        for machine in state.keys() | previous.keys()
        if machine and state.get(machine) != previous.get(machine)
    }
