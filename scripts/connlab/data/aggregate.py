"""Raw CSVs -> DuckDB tables -> build/data: one folder of CSVs per experiment, one facts file per article.

Each experiment's experiments/<exp>/aggregate.sql runs over a view `raw_windows` of its raw rows; each
article's site_src/articles/<slug>.facts.sql names the queries whose rows the article quotes.
"""

from __future__ import annotations

import csv
import json
import math
import re
import tempfile
from pathlib import Path

import duckdb
import yaml

from connlab.analysis.fits import fit_all
from connlab.contract.columns import COLUMN_TYPES, PUBLISHED_FILE_NAME, PUBLISHED_TYPES
from connlab.contract.experiment import experiment_names, load_experiment
from connlab.contract.files import write_if_changed
from connlab.contract.machine_schema import NOT_AVAILABLE, MachineFile
from connlab.contract.names import CLAIMS_SUBDIR, MACHINES_JSON, PUBLISHED_PREFIX
from connlab.contract.poolers import CONFIGS
from connlab.contract.yaml_models import FAST_LOADER
from connlab.data.claims import evaluate_claims
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


def result_files(experiment: str, results_dir: Path = RESULTS_DIR) -> list[Path]:
    return sorted(
        path
        for path in results_dir.glob(f"*/{experiment}/*.csv")
        if not path.parent.parent.name.startswith(PUBLISHED_PREFIX)
    )


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# The raw and best-profile windows every experiment starts from: inputs, not results to download.
INPUT_TABLES = ("raw_windows", "windows")


def _types_struct(types: dict[str, str]) -> str:
    """read_csv's `types` argument: columns typed by name, whatever their order in the file."""
    return ", ".join(f"{_sql_string(name)}: {_sql_string(kind)}" for name, kind in types.items())


def target_expression(targets: dict[str, str], present: bool) -> str:
    """SQL for a row's target: the recorded one, or for rows written before the column existed, the target
    the experiment's spec gives the row's workload."""
    cases = " ".join(f"WHEN {_sql_string(w)} THEN {_sql_string(t)}" for w, t in sorted(targets.items()))
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
    # with every machine.
    by_header: dict[tuple[str, ...], list[Path]] = {}
    for path in files:
        by_header.setdefault(_header(path), []).append(path)
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


def _joined(files: list[Path], target: Path) -> Path:
    """One CSV of files that share a header: the header once, then every file's rows as written."""
    with target.open("w", encoding="utf-8", newline="") as out:
        for number, path in enumerate(files):
            text = path.read_text(encoding="utf-8")
            header, _, rows = text.partition("\n")
            out.write(header + "\n" if number == 0 else "")
            out.write(rows if not rows or rows.endswith("\n") else rows + "\n")
    return target


def _read_group(header: tuple[str, ...], path: Path) -> str:
    """A SELECT over a CSV file, each column typed by the shared column list (a column the list does not
    know, which validation reports, is read as text)."""
    columns = _types_struct({name: COLUMN_TYPES.get(name, "VARCHAR") for name in header})
    return (
        f"SELECT * FROM read_csv({_sql_string(str(path))}, header = true, auto_detect = false, "
        f"columns = {{{columns}}}, nullstr = '', delim = ',', quote = '\"', escape = '\"')"
    )


def _header(path: Path) -> tuple[str, ...]:
    with path.open(newline="", encoding="utf-8") as handle:
        return tuple(next(csv.reader(handle), []))


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
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(value)


def query_records(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, object]]:
    cursor = con.execute(sql)
    names = [column[0] for column in cursor.description]
    return [
        {name: _clean(value) for name, value in zip(names, row, strict=True)} for row in cursor.fetchall()
    ]


def spec_targets(experiment: str) -> dict[str, str]:
    """Each workload's target as the experiment's spec gives it (none where the spec is missing)."""
    if not (EXPERIMENTS_DIR / experiment / EXPERIMENT_FILE_NAME).exists():
        return {}
    return {
        workload.id: workload.target for workload in load_experiment(experiment, EXPERIMENTS_DIR).workloads
    }


def aggregate_experiment(
    con: duckdb.DuckDBPyConnection, experiment: str, out_dir: Path, results_dir: Path = RESULTS_DIR
) -> list[str]:
    """Run the experiment's SQL in its own schema; export every table it made as CSV."""
    schema = experiment.replace("-", "_")
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}; SET schema = '{schema}'")
    targets = spec_targets(experiment)
    register_raw_windows(con, result_files(experiment, results_dir), targets)
    con.execute(BEST_PROFILE_VIEW)
    con.execute(POINT_STATS_VIEW)
    con.execute(PEAK_STATS_VIEW)
    run_sql_file(con, EXPERIMENTS_DIR / experiment / AGGREGATE_SQL_NAME)
    tables = [
        row[0]
        for row in con.execute(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = ? AND table_type = 'BASE TABLE' ORDER BY table_name",
            [schema],
        ).fetchall()
        if row[0] not in INPUT_TABLES
    ]
    folder = out_dir / experiment
    folder.mkdir(parents=True, exist_ok=True)
    # A table an older aggregate.sql made must not linger as a download.
    for stale in set(folder.glob("*.csv")) - {folder / f"{table}.csv" for table in tables}:
        stale.unlink()
    for table in tables:
        # Sorted rows: the same data gives the same download, whatever order the query engine produced.
        target = _sql_string(str(folder / (table + ".csv")))
        con.execute(f"COPY (SELECT * FROM {schema}.{table} ORDER BY ALL) TO {target} (HEADER)")
    con.execute("SET schema = 'main'")
    return tables


_QUERY_MARKER = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$", re.M)


def split_named_queries(text: str) -> dict[str, str]:
    """`-- name: x` starts query x; the query runs until the next marker."""
    parts = _QUERY_MARKER.split(text)
    return {parts[i]: parts[i + 1].strip().rstrip(";") for i in range(1, len(parts), 2)}


def export_facts(con: duckdb.DuckDBPyConnection, facts_sql: Path, out_dir: Path) -> Path:
    facts: dict[str, list[dict[str, object]]] = {}
    for name, sql in split_named_queries(facts_sql.read_text()).items():
        try:
            facts[name] = query_records(con, sql)
        except duckdb.Error as error:
            raise LabError(f"{facts_sql}: query {name}: {str(error).splitlines()[0]}") from error
    out_dir.mkdir(parents=True, exist_ok=True)
    slug = facts_sql.name.removesuffix(".facts.sql")
    path = out_dir / f"{slug}.json"
    # No indent: Python's JSON encoder is its C one only without it, and the facts grow with every machine.
    write_if_changed(path, json.dumps(facts, sort_keys=True))
    return path


def load_machines(results_dir: Path = RESULTS_DIR) -> list[dict[str, object]]:
    machines = []
    for path in sorted(results_dir.glob(f"*/{MACHINE_FILE_NAME}")):
        # libyaml where present: validation has read these files already, and one is read per machine.
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=FAST_LOADER) or {}
        data["id"] = path.parent.name
        data["published"] = path.parent.name.startswith(PUBLISHED_PREFIX)
        machines.append({key: _clean(value) for key, value in data.items()})
    return machines


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
    if rows:
        con.executemany("INSERT INTO main.machines VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
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
    if versions:
        con.executemany("INSERT INTO main.pooler_versions VALUES (?, ?, ?, ?)", versions)


def register_measured(con: duckdb.DuckDBPyConnection) -> None:
    """main.measured: which experiments each machine measured, in which profile, and when (first and last
    window): what the site says once where a machine lacks an experiment."""
    selects = [
        f"SELECT machine, experiment, any_value(profile) AS profile, count(*) AS windows, "
        f"max(server_cpu_budget) AS server_cores, "
        f"min(started_at) AS first_window, max(started_at) AS last_window "
        f"FROM {name.replace('-', '_')}.windows GROUP BY machine, experiment"
        for name in experiment_names()
        if (EXPERIMENTS_DIR / name / AGGREGATE_SQL_NAME).exists()
    ]
    union = (
        " UNION ALL ".join(selects)
        if selects
        else (
            "SELECT NULL::VARCHAR AS machine, NULL::VARCHAR AS experiment, NULL::VARCHAR AS profile, "
            "0 AS windows, NULL::DOUBLE AS server_cores, NULL::VARCHAR AS first_window, "
            "NULL::VARCHAR AS last_window WHERE false"
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
    files = sorted(results_dir.glob(f"{PUBLISHED_PREFIX}*/{PUBLISHED_FILE_NAME}"))
    columns = ", ".join(PUBLISHED_TYPES)
    if files:
        file_list = ", ".join(_sql_string(str(path)) for path in files)
        types = ", ".join(
            f"{_sql_string(name)}: {_sql_string(kind)}" for name, kind in PUBLISHED_TYPES.items()
        )
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


def aggregate_all(results_dir: Path = RESULTS_DIR, out_dir: Path = DATA_DIR) -> Path:
    """Rebuild build/data from scratch; return the DuckDB file the claims and articles can query."""
    out_dir.mkdir(parents=True, exist_ok=True)
    database = out_dir / DATABASE_FILE
    database.unlink(missing_ok=True)
    machines = load_machines(results_dir)
    with duckdb.connect(str(database)) as con:
        register_machines(con, machines)
        register_published(con, results_dir)
        register_pooler_settings(con)
        for experiment in experiment_names():
            if (EXPERIMENTS_DIR / experiment / AGGREGATE_SQL_NAME).exists():
                aggregate_experiment(con, experiment, out_dir, results_dir)
        register_measured(con)
        fit_all(con)
        write_if_changed(out_dir / MACHINES_JSON, json.dumps(machines, sort_keys=True))
        # Articles and pages alike may name the figures they quote (the Machines page compares machines).
        for facts_sql in sorted([*ARTICLES_SRC_DIR.glob("*.facts.sql"), *PAGES_SRC_DIR.glob("*.facts.sql")]):
            export_facts(con, facts_sql, out_dir / FACTS_DIR.relative_to(DATA_DIR))
        for claims_file in sorted(ARTICLES_SRC_DIR.glob("*.claims.yaml")):
            evaluate_claims(
                con,
                claims_file,
                [str(m["id"]) for m in machines],
                out_dir / CLAIMS_SUBDIR,
                measured=[str(m["id"]) for m in machines if not m["published"]],
            )
    return database
