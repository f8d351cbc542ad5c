"""An experiment's tables (connlab.data.experiment_tables): columns read by name, no results giving empty
tables, what validation accepts read alike by DuckDB, and an aggregate.sql error named with its file."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pytest

from connlab.contract.columns import COLUMN_NAMES
from connlab.data import experiment_tables
from connlab.data.main_tables import load_machines, register_machines, register_published
from connlab.data.validate import validate_results
from connlab.errors import LabError
from support.aggregating import aggregate_experiment
from support.helpers import passes, records

if TYPE_CHECKING:
    from support.rows import RunWriter


def connect(results_dir: Path) -> duckdb.DuckDBPyConnection:
    """A connection with the main tables aggregate_all registers before any experiment's SQL runs."""
    connection = duckdb.connect()
    register_machines(connection, load_machines(results_dir))
    register_published(connection, results_dir)
    return connection


def point(con: duckdb.DuckDBPyConnection, machine: str, workload: str, clients: int) -> dict[str, Any]:
    [found] = records(
        con,
        f"SELECT * FROM clients_sweep.points WHERE machine = '{machine}' "
        f"AND workload = '{workload}' AND clients = {clients}",
    )
    return found


def test_columns_are_read_by_name(tmp_path: Path, write_run: RunWriter) -> None:
    """A CSV whose columns are in another order either fails validation or aggregates correctly; it must
    never pass validation and then be read by position (tps read as latency and the other way round)."""
    results = tmp_path / "results"
    path = write_run(
        results, "gamma", [*passes("mixed", 1, [100, 200, 300]), *passes("select-only", 1, [400, 500, 600])]
    )
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    order = list(COLUMN_NAMES)
    tps, latency = order.index("tps"), order.index("latency_avg_ms")
    order[tps], order[latency] = order[latency], order[tps]
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=order, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    if validate_results(results):
        return  # rejected up front: fine
    con = connect(results)
    aggregate_experiment(con, "clients-sweep", results)
    assert point(con, "gamma", "mixed", 1)["tps_median"] == 200


def test_no_results_give_empty_tables(tmp_path: Path) -> None:
    con = connect(tmp_path / "empty")
    aggregate_experiment(con, "clients-sweep", tmp_path / "empty")
    assert records(con, "SELECT count(*) AS n FROM clients_sweep.points") == [{"n": 0}]
    assert records(con, "SELECT count(*) AS n FROM clients_sweep.peaks") == [{"n": 0}]


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("clients", "3000000000"),  # a Python int, but over DuckDB's INTEGER
        ("clients", "\u0664"),  # ARABIC-INDIC DIGIT FOUR: int() reads it as 4
        ("clients", "0_4"),  # int() allows underscores
        ("tps", "1_000.5"),
        ("tps", "\u0661\u0660\u0660"),
        ("clients", " 4"),
    ],
)
def test_what_validation_accepts_aggregation_reads(
    tmp_path: Path, write_run: RunWriter, column: str, value: str
) -> None:
    """Validation and DuckDB must agree on what a value is: a file that passes `make validate` and then
    stops `make aggregate` points the contributor at the wrong stage (and at aggregate.sql, not the CSV)."""
    results = tmp_path / "results"
    path = write_run(results, "gamma", passes("mixed", 4, [100, 200, 300]))
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        row[column] = value
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(COLUMN_NAMES), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    if validate_results(results):
        return  # refused up front: fine
    aggregate_experiment(connect(results), "clients-sweep", results)


def test_an_aggregate_sql_error_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    experiments = tmp_path / "experiments"
    sql = experiments / "broken-exp" / "aggregate.sql"
    sql.parent.mkdir(parents=True)
    sql.write_text("CREATE TABLE points AS SELECT no_such_column FROM raw_windows;\n")
    monkeypatch.setattr(experiment_tables, "EXPERIMENTS_DIR", experiments)
    with pytest.raises(LabError) as caught:
        aggregate_experiment(duckdb.connect(), "broken-exp", tmp_path / "results")
    message = str(caught.value)
    assert message.startswith(f"{sql}: ")
    assert "no_such_column" in message
    assert len(message.splitlines()) == 1


def test_measured_windows_name_each_pooler_build_by_its_kind() -> None:
    """Issue 55: rows record the spec's pooler name ('pgbouncer-1.25') and the version it ran; main.measured
    lists the builds by kind, so a page can name 'PgBouncer 1.25.2' beside machine.yaml's 1.18.0."""
    kinds = experiment_tables.spec_pooler_kinds("pgbouncer-versions")
    assert kinds["pgbouncer-1.25"] == kinds["pgbouncer-installed"] == "pgbouncer"
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE windows AS SELECT * FROM (VALUES "
        "('m', 'pgbouncer-1.25', '1.25.2', 1), ('m', 'pgbouncer-installed', '1.18.0', 1), "
        "('m', 'pgbouncer-installed-200', '1.18.0', 2), ('m', 'direct', NULL, 1)) "
        "AS t(machine, target, pooler_version, pass_no)"
    )
    for column in ("profile", "workload", "started_at", "cpu_budget_method"):
        con.execute(f"ALTER TABLE windows ADD COLUMN {column} VARCHAR")
    for column in ("clients", "duration_s", "pool_size"):
        con.execute(f"ALTER TABLE windows ADD COLUMN {column} INTEGER")
    for column in (
        "server_cpu_budget",
        "steal_pct",
        "cpu_pressure_pct",
        "run_calibration_tps",
        "run_calibration_spread_tps",
    ):
        con.execute(f"ALTER TABLE windows ADD COLUMN {column} DOUBLE")
    con.execute("ALTER TABLE windows ADD COLUMN postgres_version VARCHAR")
    con.execute("ALTER TABLE windows ADD COLUMN client_saturated BOOLEAN DEFAULT false")
    con.execute(
        "CREATE VIEW point_stats AS SELECT machine, "
        "'at 400 clients (w), connecting took 40%' AS unsteady_reason FROM windows WHERE target = 'direct'"
    )
    con.execute(experiment_tables.measured_windows_table(kinds))
    built, unsteady = con.execute(
        f"SELECT pooler_versions, unsteady_points FROM {experiment_tables.MEASURED_WINDOWS}"
    ).fetchone()
    assert built == ["pgbouncer 1.18.0", "pgbouncer 1.25.2"]
    assert unsteady == ["at 400 clients (w), connecting took 40%"]
