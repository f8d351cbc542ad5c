"""DuckDB aggregation of raw results: medians and ranges, the peak, failed and client-bound windows,
one profile per machine, published folders kept apart, and the facts files articles read."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pytest

from connlab.data import aggregate
from connlab.data.aggregate import (
    aggregate_all,
    aggregate_experiment,
    export_facts,
    load_machines,
    result_files,
    split_named_queries,
)
from connlab.data.columns import COLUMN_NAMES
from connlab.data.validate import validate_results
from connlab.errors import LabError

if TYPE_CHECKING:
    from conftest import RunWriter

Rows = list[dict[str, Any]]


def passes(workload: str, clients: int, tps: list[float], **per_pass: dict[int, Any]) -> Rows:
    """Three passes of one point; per_pass={column: {pass_no: value}} overrides single windows."""
    rows = []
    for pass_no, value in enumerate(tps, start=1):
        row: dict[str, Any] = {
            "workload": workload,
            "clients": clients,
            "tps": value,
            "pass_no": pass_no,
            "pass_order": "desc" if pass_no == 2 else "asc",
            "latency_avg_ms": clients * 1000 / value,
        }
        for column, by_pass in per_pass.items():
            if pass_no in by_pass:
                row[column] = by_pass[pass_no]
        rows.append(row)
    return rows


ABORTED = "run was aborted; the results are incomplete"

ALPHA: Rows = [
    *passes("mixed", 1, [100, 120, 110]),
    *passes("mixed", 2, [12000, 12345, 12500]),
    # Pass 2 failed but printed a tps figure: it must not count.
    *passes("mixed", 4, [11000, 99999, 12000], ok={2: False}, exit_code={2: 2}, error={2: ABORTED}),
    *passes("select-only", 1, [300, 310, 320]),
    *passes("select-only", 2, [500, 520, 510]),
    # The highest tps of all, but pgbench saturated its own core in one pass: not eligible as the peak.
    *passes("select-only", 4, [900, 950, 1000], client_saturated={2: True}),
]
BETA_FULL: Rows = [
    *passes("mixed", 1, [50, 60, 70]),
    *passes("mixed", 2, [80, 90, 100]),
    *passes("select-only", 1, [10, 20, 30]),
    *passes("select-only", 2, [40, 50, 60]),
]
BETA_QUICK: Rows = [
    *passes("mixed", 1, [1e6, 1e6, 1e6]),
    *passes("mixed", 8, [2e6, 2e6, 2e6]),
]
PUBLISHED: Rows = [*passes("mixed", 1, [5, 5, 5]), *passes("select-only", 1, [7, 7, 7])]


@pytest.fixture
def results_dir(tmp_path: Path, write_run: RunWriter) -> Path:
    results = tmp_path / "results"
    write_run(results, "alpha", ALPHA, profile="full")
    write_run(results, "beta", BETA_FULL, profile="full")
    write_run(results, "beta", BETA_QUICK, profile="quick")
    write_run(results, "published-ref", PUBLISHED, profile="full")
    return results


@pytest.fixture
def con(results_dir: Path, tmp_path: Path) -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    tables = aggregate_experiment(connection, "clients-sweep", tmp_path / "data", results_dir)
    assert set(tables) >= {"windows", "points", "peaks", "relative_to_peak", "near_peak"}
    return connection


def records(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, Any]]:
    cursor = con.execute(sql)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def point(con: duckdb.DuckDBPyConnection, machine: str, workload: str, clients: int) -> dict[str, Any]:
    [found] = records(
        con,
        f"SELECT * FROM clients_sweep.points WHERE machine = '{machine}' "
        f"AND workload = '{workload}' AND clients = {clients}",
    )
    return found


def peak(con: duckdb.DuckDBPyConnection, machine: str, workload: str) -> dict[str, Any]:
    [found] = records(
        con, f"SELECT * FROM clients_sweep.peaks WHERE machine = '{machine}' AND workload = '{workload}'"
    )
    return found


def test_fixture_is_valid_results(results_dir: Path) -> None:
    assert validate_results(results_dir) == []


def test_medians_and_ranges_of_the_passes(con: duckdb.DuckDBPyConnection) -> None:
    first = point(con, "alpha", "mixed", 1)
    assert (first["tps_median"], first["tps_min"], first["tps_max"]) == (110, 100, 120)
    assert (first["windows"], first["windows_ok"]) == (3, 3)
    second = point(con, "alpha", "mixed", 2)
    assert (second["tps_median"], second["tps_min"], second["tps_max"]) == (12345, 12000, 12500)
    assert second["clients_per_core"] == 2.0
    # The CSV keeps four decimals; the median latency is the pass with the median tps.
    assert second["latency_avg_median"] == round(2000 / 12345, 4)
    select_only = point(con, "alpha", "select-only", 4)
    assert (select_only["tps_median"], select_only["tps_min"], select_only["tps_max"]) == (950, 900, 1000)
    assert select_only["windows_client_saturated"] == 1


def test_failed_windows_are_left_out_of_the_figures(con: duckdb.DuckDBPyConnection) -> None:
    failed = point(con, "alpha", "mixed", 4)
    assert (failed["windows"], failed["windows_ok"]) == (3, 2)
    assert failed["tps_median"] == 11500  # median of 11000 and 12000, not of 99999
    assert failed["tps_max"] == 12000
    assert failed["errors"] == ABORTED
    assert point(con, "alpha", "mixed", 2)["errors"] is None


def test_peak_is_the_best_median_among_server_bound_points(con: duckdb.DuckDBPyConnection) -> None:
    mixed = peak(con, "alpha", "mixed")
    assert mixed["peak_clients"] == 2
    assert (mixed["peak_tps"], mixed["peak_tps_min"], mixed["peak_tps_max"]) == (12345, 12000, 12500)
    assert mixed["peak_clients_per_core"] == 2.0
    select_only = peak(con, "alpha", "select-only")
    assert select_only["peak_clients"] == 2  # not 4: that point measured a saturated client
    assert select_only["peak_tps"] == 510


def test_points_relative_to_the_peak(con: duckdb.DuckDBPyConnection) -> None:
    [far] = records(
        con,
        "SELECT * FROM clients_sweep.relative_to_peak "
        "WHERE machine = 'alpha' AND workload = 'mixed' AND clients = 4",
    )
    assert far["clients_over_peak"] == 2.0
    assert far["tps_share"] == pytest.approx(11500 / 12345)
    assert far["tps_share_min"] == pytest.approx(11000 / 12345)
    [band] = records(
        con, "SELECT * FROM clients_sweep.near_peak WHERE machine = 'alpha' AND workload = 'mixed'"
    )
    assert (band["near_peak_min_clients"], band["near_peak_max_clients"]) == (2, 4)


def test_a_machine_with_full_and_quick_rows_uses_only_full(con: duckdb.DuckDBPyConnection) -> None:
    beta = records(
        con, "SELECT * FROM clients_sweep.points WHERE machine = 'beta' ORDER BY workload, clients"
    )
    assert {row["profile"] for row in beta} == {"full"}
    assert [(row["workload"], row["clients"]) for row in beta] == [
        ("mixed", 1),
        ("mixed", 2),
        ("select-only", 1),
        ("select-only", 2),
    ]
    first = point(con, "beta", "mixed", 1)
    assert (first["tps_median"], first["windows"]) == (60, 3)
    assert peak(con, "beta", "mixed")["peak_tps"] == 90


def test_published_folders_are_not_aggregated(con: duckdb.DuckDBPyConnection, results_dir: Path) -> None:
    machines = {row["machine"] for row in records(con, "SELECT DISTINCT machine FROM clients_sweep.windows")}
    assert machines == {"alpha", "beta"}
    assert all("published-" not in str(path) for path in result_files("clients-sweep", results_dir))
    assert len(result_files("clients-sweep", results_dir)) == 3


def test_machines_list_marks_published_folders(results_dir: Path) -> None:
    machines = {machine["id"]: machine for machine in load_machines(results_dir)}
    assert set(machines) == {"alpha", "beta", "published-ref"}
    assert machines["published-ref"]["published"] is True
    assert machines["alpha"]["published"] is False
    assert machines["alpha"]["cpu_model"] == "Test CPU 3000"


def test_tables_are_exported_as_csv(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    folder = tmp_path / "data" / "clients-sweep"
    with (folder / "peaks.csv").open(newline="") as handle:
        peaks = list(csv.DictReader(handle))
    assert {(row["machine"], row["workload"], row["peak_clients"]) for row in peaks} == {
        ("alpha", "mixed", "2"),
        ("alpha", "select-only", "2"),
        ("beta", "mixed", "2"),
        ("beta", "select-only", "2"),
    }
    assert (folder / "points.csv").is_file()


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
    con = duckdb.connect()
    aggregate_experiment(con, "clients-sweep", tmp_path / "data", results)
    assert point(con, "gamma", "mixed", 1)["tps_median"] == 200


def test_no_results_give_empty_tables(tmp_path: Path) -> None:
    con = duckdb.connect()
    aggregate_experiment(con, "clients-sweep", tmp_path / "data", tmp_path / "empty")
    assert records(con, "SELECT count(*) AS n FROM clients_sweep.points") == [{"n": 0}]
    assert (tmp_path / "data" / "clients-sweep" / "peaks.csv").is_file()


def test_aggregate_all_writes_facts_for_the_articles(results_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "data"
    database = aggregate_all(results_dir=results_dir, out_dir=out)
    assert database == out / "connlab.duckdb"
    assert database.is_file()
    facts = json.loads((out / "facts" / "too-many-connections.json").read_text())
    assert {row["machine"] for row in facts["sweep_machines"]} == {"alpha", "beta"}
    mixed = [row for row in facts["peaks"] if row["machine"] == "alpha" and row["workload"] == "mixed"]
    assert [row["peak_tps"] for row in mixed] == [12345]
    machines = json.loads((out / "machines.json").read_text())
    assert [machine["id"] for machine in machines] == ["alpha", "beta", "published-ref"]
    # A second run over the same input starts from scratch and gives the same facts.
    aggregate_all(results_dir=results_dir, out_dir=out)
    assert json.loads((out / "facts" / "too-many-connections.json").read_text()) == facts


# -- named queries and facts ------------------------------------------------------------------------------
FACTS_SQL = """\
-- Facts for a test article.

-- name: numbers
SELECT 1 AS one, 2.5 AS two_and_a_half, NULL AS nothing;

-- name: words
-- A comment inside the query stays part of it.
SELECT 'a' AS word UNION ALL SELECT 'b' ORDER BY word
"""


def test_split_named_queries() -> None:
    queries = split_named_queries(FACTS_SQL)
    assert list(queries) == ["numbers", "words"]
    assert queries["numbers"] == "SELECT 1 AS one, 2.5 AS two_and_a_half, NULL AS nothing"
    assert queries["words"].startswith("-- A comment inside the query stays part of it.\nSELECT 'a'")
    assert not queries["words"].endswith(";")
    assert split_named_queries("SELECT 1") == {}


def test_export_facts(tmp_path: Path) -> None:
    facts_sql = tmp_path / "test-article.facts.sql"
    facts_sql.write_text(FACTS_SQL)
    path = export_facts(duckdb.connect(), facts_sql, tmp_path / "facts")
    assert path == tmp_path / "facts" / "test-article.json"
    assert json.loads(path.read_text()) == {
        "numbers": [{"one": 1, "two_and_a_half": 2.5, "nothing": None}],
        "words": [{"word": "a"}, {"word": "b"}],
    }


def test_a_failing_facts_query_names_the_file_and_query(tmp_path: Path) -> None:
    facts_sql = tmp_path / "broken.facts.sql"
    facts_sql.write_text("-- name: fine\nSELECT 1 AS x\n\n-- name: typo\nSELECT * FROM no_such_table\n")
    with pytest.raises(LabError) as caught:
        export_facts(duckdb.connect(), facts_sql, tmp_path / "facts")
    message = str(caught.value)
    assert message.startswith(f"{facts_sql}: query typo: ")
    assert "no_such_table" in message
    assert len(message.splitlines()) == 1


def test_an_aggregate_sql_error_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    experiments = tmp_path / "experiments"
    sql = experiments / "broken-exp" / "aggregate.sql"
    sql.parent.mkdir(parents=True)
    sql.write_text("CREATE TABLE points AS SELECT no_such_column FROM raw_windows;\n")
    monkeypatch.setattr(aggregate, "EXPERIMENTS_DIR", experiments)
    with pytest.raises(LabError) as caught:
        aggregate_experiment(duckdb.connect(), "broken-exp", tmp_path / "data", tmp_path / "results")
    message = str(caught.value)
    assert message.startswith(f"{sql}: ")
    assert "no_such_column" in message
    assert len(message.splitlines()) == 1
