"""DuckDB aggregation of raw results: medians and ranges, the peak, failed and client-bound windows,
one profile per machine, published folders kept apart, and the facts files articles read."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pytest
import yaml

from connlab.contract.columns import PUBLISHED_FILE_NAME
from connlab.contract.facts_files import read_facts
from connlab.data.aggregate import aggregate_all
from connlab.data.main_tables import load_machines, register_machines, register_published
from connlab.data.result_files import result_files_by_experiment
from connlab.data.validate import validate_results
from connlab.paths import MACHINE_FILE_NAME
from support.aggregating import aggregate_experiment
from support.helpers import Rows, db_records, passes, records
from support.paths import PINNED_RESULTS
from support.rows import machine_facts

if TYPE_CHECKING:
    from support.rows import RunWriter


ABORTED = "run was aborted; the results are incomplete"

ALPHA: Rows = [
    *passes("mixed", 1, [100, 120, 110]),
    *passes("mixed", 2, [12000, 12345, 12500]),
    # Pass 2 failed but printed a tps figure: it must not count.
    *passes("mixed", 4, [11000, 99999, 12000], ok={2: False}, exit_code={2: 2}, error={2: ABORTED}),
    *passes("select-only", 1, [300, 310, 320]),
    *passes("select-only", 2, [500, 520, 510]),
    # The highest tps of all, but one pass was client-bound (pgbench at its whole core, the server at a
    # fifth of its own): not eligible as the peak.
    *passes("select-only", 4, [900, 950, 1000], client_saturated={2: True}, server_cpu_cores={2: 0.2}),
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
# Published reference figures in long form: a mixed curve peaking at 8 clients on a 2-core server, plus a
# figure of another experiment.
PUBLISHED_CSV = """\
experiment,workload,clients,metric,value,unit,note
clients-sweep,mixed,2,tps,500,tps,figure 1
clients-sweep,mixed,8,tps,900,tps,figure 1
clients-sweep,mixed,8,latency_avg_ms,8.9,ms,figure 1
clients-sweep,mixed,32,tps,450,tps,figure 1
connect-cost,held,1,latency_avg_ms,0.05,ms,table 2
"""
PUBLISHED_ROWS = PUBLISHED_CSV.count("\n") - 1


def write_published(results: Path, name: str = "published-ref", csv_text: str = PUBLISHED_CSV) -> Path:
    folder = results / name
    folder.mkdir(parents=True)
    facts = machine_facts(
        name, profile="published", cpu_budget_method="published", published=True, server_cores=2
    )
    (folder / MACHINE_FILE_NAME).write_text(yaml.safe_dump({**facts, "article": "A test article"}))
    (folder / PUBLISHED_FILE_NAME).write_text(csv_text)
    return folder


@pytest.fixture
def results_dir(tmp_path: Path, write_run: RunWriter) -> Path:
    results = tmp_path / "results"
    write_run(results, "alpha", ALPHA, profile="full")
    write_run(results, "beta", BETA_FULL, profile="full")
    write_run(results, "beta", BETA_QUICK, profile="quick")
    write_published(results)
    return results


def connect(results_dir: Path) -> duckdb.DuckDBPyConnection:
    """A connection with the main tables aggregate_all registers before any experiment's SQL runs."""
    connection = duckdb.connect()
    register_machines(connection, load_machines(results_dir))
    register_published(connection, results_dir)
    return connection


@pytest.fixture
def con(results_dir: Path, tmp_path: Path) -> duckdb.DuckDBPyConnection:
    connection = connect(results_dir)
    tables = aggregate_experiment(connection, "clients-sweep", results_dir)
    assert set(tables) >= {"points", "peaks", "relative_to_peak", "near_peak"}
    return connection


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
    # The methodology's one range convention: the point's slowest pass over the peak's fastest.
    assert far["tps_share_min"] == pytest.approx(11000 / 12500)
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
    listed = result_files_by_experiment(results_dir)["clients-sweep"]
    assert sorted(listed) == ["alpha", "beta"]
    assert sum(len(files) for files in listed.values()) == 3


def test_the_tables_are_in_the_experiments_schema(con: duckdb.DuckDBPyConnection) -> None:
    peaks = records(con, "SELECT machine, workload, peak_clients FROM clients_sweep.peaks")
    assert {(row["machine"], row["workload"], row["peak_clients"]) for row in peaks} == {
        ("alpha", "mixed", 2),
        ("alpha", "select-only", 2),
        ("beta", "mixed", 2),
        ("beta", "select-only", 2),
    }


@pytest.mark.slow
@pytest.mark.timeout(60)  # a FIFO opened would wait for a writer forever: the timeout fails the test
def test_aggregation_opens_no_fifo_nor_link_named_like_a_results_file(
    results_dir: Path, tmp_path: Path
) -> None:
    """Validation names such paths; aggregation, which may run beside it, leaves them out unopened."""
    os.mkfifo(results_dir / "alpha" / "clients-sweep" / "full-20260102T000000Z.csv")
    (results_dir / "gamma").mkdir()
    os.mkfifo(results_dir / "gamma" / MACHINE_FILE_NAME)
    (results_dir / "delta").symlink_to(results_dir / "alpha", target_is_directory=True)
    out = tmp_path / "data"
    aggregate_all(results_dir=results_dir, out_dir=out)
    machines = json.loads((out / "machines.json").read_text())
    assert [machine["id"] for machine in machines] == ["alpha", "beta", "published-ref"]


@pytest.mark.slow
def test_aggregate_all_writes_facts_for_the_articles(results_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "data"
    database = aggregate_all(results_dir=results_dir, out_dir=out)
    assert database == out / "connlab.duckdb"
    assert database.is_file()
    facts = read_facts(out / "facts", "too-many-connections")
    assert {row["machine"] for row in facts["sweep_machines"]} == {"alpha", "beta"}
    mixed = [row for row in facts["peaks"] if row["machine"] == "alpha" and row["workload"] == "mixed"]
    assert [row["peak_tps"] for row in mixed] == [12345]
    machines = json.loads((out / "machines.json").read_text())
    assert [machine["id"] for machine in machines] == ["alpha", "beta", "published-ref"]
    # A second run over the same input (its database kept) gives the same facts.
    aggregate_all(results_dir=results_dir, out_dir=out)
    assert read_facts(out / "facts", "too-many-connections") == facts


@pytest.mark.slow
def test_the_caller_can_finish_the_aggregation_later(results_dir: Path, tmp_path: Path) -> None:
    """`connlab build` has the aggregation's last task (closing the database) run on a thread while the later
    stages run: what those stages read is written before."""
    out = tmp_path / "data"
    handed: list[Callable[[], None]] = []
    database = aggregate_all(results_dir=results_dir, out_dir=out, later=handed.append)
    assert len(handed) == 1
    assert read_facts(out / "facts", "too-many-connections")["sweep_machines"]
    assert (out / "claims").is_dir() and (out / "machines.json").is_file()
    finishing = threading.Thread(target=handed[0])
    finishing.start()
    finishing.join()
    peaks = db_records(database, "SELECT machine FROM clients_sweep.peaks ORDER BY ALL")
    assert {row["machine"] for row in peaks} == {"alpha", "beta"}
    # The states were recorded with the tables: a second run finds every experiment up to date.
    aggregate_all(results_dir=results_dir, out_dir=out)
    assert db_records(database, "SELECT count(*) AS n FROM clients_sweep.peaks") == [{"n": len(peaks)}]


@pytest.mark.slow
def test_the_table_csvs_of_older_builds_are_removed(results_dir: Path, tmp_path: Path) -> None:
    """Older builds wrote every experiment's tables as CSV files beside the facts; the tables are in the
    database, and a folder left by such a build goes."""
    out = tmp_path / "data"
    (out / "clients-sweep").mkdir(parents=True)
    (out / "clients-sweep" / "points.csv").write_text("machine\n")
    aggregate_all(results_dir=results_dir, out_dir=out)
    assert not (out / "clients-sweep").exists()
    assert (out / "facts").is_dir() and (out / "claims").is_dir()


# -- published reference data -----------------------------------------------------------------------------


@pytest.mark.slow
def test_published_rows_keep_their_folder_as_machine(results_dir: Path, tmp_path: Path) -> None:
    database = aggregate_all(results_dir=results_dir, out_dir=tmp_path / "data")
    rows = db_records(database, "SELECT * FROM main.published ORDER BY experiment, clients, metric")
    assert len(rows) == PUBLISHED_ROWS
    assert {row["machine"] for row in rows} == {"published-ref"}
    assert rows[0] == {
        "machine": "published-ref",
        "experiment": "clients-sweep",
        "workload": "mixed",
        "clients": 2,
        "metric": "tps",
        "value": 500.0,
        "unit": "tps",
        "note": "figure 1",
    }
    machines = db_records(
        database, "SELECT id, published, cores, server_cores FROM main.machines ORDER BY id"
    )
    assert [(m["id"], m["published"], m["server_cores"]) for m in machines] == [
        ("alpha", False, 2.0),
        ("beta", False, 2.0),
        ("published-ref", True, 2.0),
    ]
    # Published figures never enter the measured tables.
    for table in ("windows", "points", "peaks", "relative_to_peak", "near_peak"):
        found = db_records(database, f"SELECT DISTINCT machine FROM clients_sweep.{table}")
        assert {row["machine"] for row in found} == {"alpha", "beta"}, table


def test_curves_include_published_curves_flagged_as_such(con: duckdb.DuckDBPyConnection) -> None:
    curve = records(
        con,
        "SELECT published, clients, clients_per_core, tps, latency_avg_ms FROM clients_sweep.curves "
        "WHERE machine = 'published-ref' ORDER BY clients",
    )
    assert curve == [
        {"published": True, "clients": 2, "clients_per_core": 1.0, "tps": 500.0, "latency_avg_ms": None},
        {"published": True, "clients": 8, "clients_per_core": 4.0, "tps": 900.0, "latency_avg_ms": 8.9},
        {"published": True, "clients": 32, "clients_per_core": 16.0, "tps": 450.0, "latency_avg_ms": None},
    ]
    measured = records(
        con, "SELECT DISTINCT machine, published FROM clients_sweep.curves WHERE NOT published"
    )
    assert {row["machine"] for row in measured} == {"alpha", "beta"}

    [peak_row] = records(con, "SELECT * FROM clients_sweep.curve_peaks WHERE machine = 'published-ref'")
    assert peak_row == {
        "machine": "published-ref",
        "published": True,
        "workload": "mixed",
        "peak_clients": 8,
        "peak_clients_per_core": 4.0,
        "peak_tps": 900.0,
        "peak_latency_ms": 8.9,
        "max_clients": 32,
        "points": 3,
        # The printed points either side of the peak: where the true peak may lie.
        "peak_clients_below": 2.0,
        "peak_clients_above": 32.0,
        "peak_per_core_below": 1.0,
        "peak_per_core_above": 16.0,
    }
    alpha = records(con, "SELECT published, peak_tps FROM clients_sweep.curve_peaks WHERE machine = 'alpha'")
    assert {row["published"] for row in alpha} == {False}

    shares = records(
        con,
        "SELECT published, tps_share FROM clients_sweep.normalised "
        "WHERE machine = 'published-ref' ORDER BY clients",
    )
    assert [row["published"] for row in shares] == [True, True, True]
    assert [row["tps_share"] for row in shares] == pytest.approx([500 / 900, 1.0, 0.5])
    [far] = records(con, "SELECT * FROM clients_sweep.far_past_peak WHERE machine = 'published-ref'")
    assert (far["published"], far["clients"], far["clients_over_peak"]) == (True, 32, 4.0)
    assert far["tps_share"] == pytest.approx(0.5)
    assert far["latency_factor"] is None  # no latency printed at 32 clients


def curve(workload: str, points: list[tuple[int, float, float]], cores: float = 2.0) -> Rows:
    """Three passes per (clients, tps, mean latency ms): tps 2% either side of the median."""
    rows: Rows = []
    for pass_no, factor in enumerate((0.98, 1.0, 1.02), start=1):
        for clients, tps, latency in points:
            rows.append(
                {
                    "workload": workload,
                    "clients": clients,
                    "pass_no": pass_no,
                    "pass_order": "desc" if pass_no == 2 else "asc",
                    "tps": tps * factor,
                    "latency_avg_ms": latency,
                    "server_cpu_budget": cores,
                }
            )
    return rows


def claim_verdicts(data: Path) -> dict[str, dict[str, tuple[str, float | None]]]:
    claims = json.loads((data / "claims" / "too-many-connections.json").read_text())["claims"]
    return {
        c["id"]: {v["machine"]: (v["verdict"], v["value"]) for v in c["verdicts"]}
        for c in claims
        if c.get("scope") != "across"  # one verdict over all machines, none per machine
    }


@pytest.mark.slow
def test_the_articles_claims_on_a_measured_machine(tmp_path: Path, write_run: RunWriter) -> None:
    """A mixed curve peaking at 4 clients per core (8 clients, 2 server cores), measured at 3 and 5.5 per
    core either side so the points place the peak; at 200 clients (100 per core, the seed's point) it keeps
    half the peak's throughput with 55 times its latency."""
    results = tmp_path / "results"
    mixed = [
        (1, 600, 1.7),
        (2, 1200, 1.7),
        (4, 2400, 1.7),
        (6, 3400, 1.8),
        (8, 4000, 2.0),
        (11, 3900, 2.8),
        (16, 3600, 4.4),
        (32, 3000, 10.7),
        (200, 2000, 110.0),
    ]
    write_run(results, "gamma", curve("mixed", mixed))
    assert validate_results(results) == []
    aggregate_all(results_dir=results, out_dir=tmp_path / "data")
    gamma = {
        claim_id: by_machine["gamma"] for claim_id, by_machine in claim_verdicts(tmp_path / "data").items()
    }
    assert gamma["peak-four-per-core"] == ("holds", 4.0)
    assert gamma["peak-small-multiple"] == ("holds", 4.0)
    # 0.5 of the peak with passes 2% either side: every pass keeps at least the seed's 48%.
    assert gamma["gentle-decline"][0] == "holds"
    assert gamma["gentle-decline"][1] == pytest.approx(0.5)
    assert gamma["latency-multiplies"][0] == "holds"
    assert gamma["latency-multiplies"][1] == pytest.approx(55.0)
    # No select-only curve, no connection-cost figures: not measured, rather than a verdict.
    assert gamma["reads-peak-at-half"] == ("not measured", None)
    assert gamma["connect-costs-tens-of-queries"] == ("not measured", None)


@pytest.mark.slow
def test_the_articles_claims_on_the_committed_published_folders(tmp_path: Path) -> None:
    results = tmp_path / "results"
    folders = sorted(PINNED_RESULTS.glob("published-*"))
    assert "published-too-many-connections" in [folder.name for folder in folders]
    for folder in folders:
        shutil.copytree(folder, results / folder.name)
    assert validate_results(results) == []
    database = aggregate_all(results_dir=results, out_dir=tmp_path / "data")
    verdict, value = claim_verdicts(tmp_path / "data")["connect-costs-tens-of-queries"][
        "published-too-many-connections"
    ]
    assert verdict == "holds"
    assert value == pytest.approx(3.09 / 0.052)
    flags = db_records(database, "SELECT DISTINCT published FROM clients_sweep.curves")
    assert flags == [{"published": True}]
    assert db_records(database, "SELECT count(*) AS n FROM clients_sweep.points") == [{"n": 0}]


@pytest.mark.slow
def test_littles_law_leaves_out_points_still_connecting(tmp_path: Path, write_run: RunWriter) -> None:
    """A point whose windows spent more than a tenth of their length connecting is not in a steady state:
    fewer clients were in flight than its client count. It is counted, without a ratio (the steady-state rule
    of connlab.data.views); a steady point keeps all its windows, a slow one among them."""
    results = tmp_path / "results"
    ramped = {"initial_connection_ms": {1: 6000.0, 2: 1000.0, 3: 6000.0}}  # 40%, 7%, 40% of 15 s
    one_slow = {"initial_connection_ms": {1: 3000.0, 2: 300.0, 3: 300.0}}  # 20%, 2%, 2%: median 2%
    rows = [
        *passes("mixed", 4, [4000, 4100, 4200], **one_slow),
        *passes("mixed", 400, [2000, 2000, 2000], **ramped),
    ]
    for row in rows[3:]:
        row["latency_avg_ms"] = 0.6 * 400 * 1000 / row["tps"]  # what a ramped window reports
    write_run(results, "gamma", rows, profile="full")
    database = aggregate_all(results_dir=results, out_dir=tmp_path / "data")
    by_clients = {
        r["clients"]: r
        for r in db_records(database, "SELECT * FROM clients_sweep.littles_law WHERE machine = 'gamma'")
    }
    assert by_clients[4]["steady_windows"] == 3
    assert by_clients[4]["ratio"] == pytest.approx(1.0)
    far = by_clients[400]
    assert (far["windows"], far["steady_windows"]) == (3, 0)
    assert far["ratio"] is None
    assert far["connect_share_max"] == pytest.approx(0.4)
