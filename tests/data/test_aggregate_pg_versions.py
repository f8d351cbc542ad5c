"""pg-versions' aggregate.sql over a small fixture: each version's peak with its passes' range, what is left
far past it, the newest major against the oldest, and the cost of a new SCRAM connection per version."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pytest
import yaml

from connlab.data.aggregate import aggregate_all
from connlab.data.main_tables import load_machines, register_machines, register_published
from connlab.data.validate import validate_results
from connlab.site.layout import machine_fragment, stamped_sources
from connlab.site.render.all_pages import render_site
from support.aggregating import aggregate_experiment
from support.paths import PINNED_RESULTS

if TYPE_CHECKING:
    from support.rows import RunWriter

Rows = list[dict[str, Any]]

EXPERIMENT = "pg-versions"
VERSION_OF = {15: "15.18", 18: "18.1"}


def passes(workload: str, major: int, clients: int, tps: list[float], **per_pass: dict[int, Any]) -> Rows:
    """Three passes of one point on one major; per_pass={column: {pass_no: value}} overrides windows."""
    rows = []
    for pass_no, value in enumerate(tps, start=1):
        row: dict[str, Any] = {
            "workload": f"{workload}-pg{major}",
            "clients": clients,
            "tps": value,
            "pass_no": pass_no,
            "postgres_version": VERSION_OF[major],
            "latency_avg_ms": clients * 1000 / value,
        }
        for column, by_pass in per_pass.items():
            if pass_no in by_pass:
                row[column] = by_pass[pass_no]
        rows.append(row)
    return rows


# A server budget of one core, so clients per core equal clients. On 15 the mixed curve peaks at 2 in every
# pass and keeps half of its peak at 32; on 18 it peaks at 4 (pass 3 at 2) and keeps three quarters.
ROWS: Rows = [
    *passes("mixed", 15, 1, [100, 110, 120]),
    *passes("mixed", 15, 2, [200, 210, 220]),
    *passes("mixed", 15, 4, [180, 190, 200]),
    *passes("mixed", 15, 32, [100, 105, 110]),
    *passes("mixed", 18, 1, [100, 110, 120]),
    *passes("mixed", 18, 2, [200, 210, 260]),
    *passes("mixed", 18, 4, [240, 240, 250]),
    # The best figure of all, but one pass was client-bound (pgbench at its whole core, the server idle):
    # never the peak.
    *passes("mixed", 18, 32, [180, 180, 900], client_saturated={3: True}, server_cpu_cores={3: 0.2}),
    *passes("held", 15, 1, [1000, 1000, 1000]),
    *passes("new-connection", 15, 1, [100, 100, 100], avg_connection_ms={1: 4.0, 2: 5.0, 3: 6.0}),
    *passes("held", 18, 1, [1000, 1000, 1000]),
    *passes("new-connection", 18, 1, [125, 125, 125], avg_connection_ms={1: 3.0, 2: 4.0, 3: 4.5}),
]


@pytest.fixture
def con(tmp_path: Path, write_run: RunWriter) -> duckdb.DuckDBPyConnection:
    results = tmp_path / "results"
    write_run(results, "gamma", ROWS, profile="quick", experiment=EXPERIMENT)
    connection = duckdb.connect()
    register_machines(connection, load_machines(results))
    register_published(connection, results)
    tables = aggregate_experiment(connection, EXPERIMENT, results)
    assert set(tables) >= {"points", "versions", "peaks", "version_pairs", "point_pairs", "connect_cost"}
    return connection


def records(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, Any]]:
    cursor = con.execute(sql)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def test_points_split_the_workload_from_its_major(con: duckdb.DuckDBPyConnection) -> None:
    found = records(con, "SELECT DISTINCT workload, major FROM pg_versions.points ORDER BY ALL")
    workloads = ["held", "mixed", "new-connection"]
    assert [(r["workload"], r["major"]) for r in found] == [(w, m) for w in workloads for m in (15, 18)]


def test_each_major_names_its_exact_server(con: duckdb.DuckDBPyConnection) -> None:
    found = records(con, "SELECT major, postgres_version FROM pg_versions.versions ORDER BY major")
    assert found == [{"major": 15, "postgres_version": "15.18"}, {"major": 18, "postgres_version": "18.1"}]


def test_each_versions_peak_with_its_passes_range(con: duckdb.DuckDBPyConnection) -> None:
    rows = records(con, "SELECT * FROM pg_versions.peaks WHERE workload = 'mixed' ORDER BY major")
    old, new = rows
    assert (old["peak_per_core"], old["peak_per_core_low"], old["peak_per_core_high"]) == (2, 2, 2)
    assert (new["peak_per_core"], new["peak_per_core_low"], new["peak_per_core_high"]) == (4, 2, 4)
    assert new["peak_tps"] == 240
    # The client-bound point at 32 is no peak, but the collapse is still read there, flagged.
    assert old["far_per_core"] == 32 and new["far_per_core"] == 32
    assert not old["far_client_bound"] and new["far_client_bound"]
    assert old["far_share"] == pytest.approx(105 / 210)
    assert old["far_share_low"] == pytest.approx(100 / 220)
    assert old["far_share_high"] == pytest.approx(110 / 200)


def test_the_newest_major_against_the_oldest(con: duckdb.DuckDBPyConnection) -> None:
    [pair] = records(con, "SELECT * FROM pg_versions.version_pairs WHERE workload = 'mixed'")
    assert (pair["old_major"], pair["new_major"]) == (15, 18)
    assert pair["peak_moved"] == pytest.approx(2.0)
    assert pair["peak_moved_low"] == pytest.approx(2 / 2)
    assert pair["peak_moved_high"] == pytest.approx(4 / 2)
    assert pair["peak_tps_ratio"] == pytest.approx(240 / 210)
    assert pair["peak_tps_ratio_low"] == pytest.approx(240 / 220)
    assert pair["peak_tps_ratio_high"] == pytest.approx(250 / 200)
    assert pair["far_client_bound"]
    assert pair["far_share_change"] == pytest.approx(180 / 240 - 105 / 210)
    assert pair["far_share_change_low"] == pytest.approx(180 / 250 - 110 / 200)
    assert pair["far_share_change_high"] == pytest.approx(900 / 240 - 100 / 220)


def test_point_pairs_hold_both_curves_at_every_shared_point(con: duckdb.DuckDBPyConnection) -> None:
    found = records(con, "SELECT * FROM pg_versions.point_pairs WHERE workload = 'mixed' ORDER BY clients")
    assert [r["clients"] for r in found] == [1, 2, 4, 32]
    assert found[2]["new_over_old"] == pytest.approx(240 / 190)


def test_connect_cost_per_version_and_between_them(con: duckdb.DuckDBPyConnection) -> None:
    rows = records(con, "SELECT * FROM pg_versions.connect_cost ORDER BY major")
    assert [r["postgres_version"] for r in rows] == ["15.18", "18.1"]
    assert rows[0]["held_over_new"] == pytest.approx(10.0)
    assert rows[0]["new_connection_ms_per_tx"] == pytest.approx(10.0 - 1.0)
    assert rows[0]["connection_ms_median"] == pytest.approx(5.0)
    [pair] = records(con, "SELECT * FROM pg_versions.connect_pairs")
    assert pair["connection_ratio"] == pytest.approx(4.0 / 5.0)
    assert pair["connection_ratio_low"] == pytest.approx(3.0 / 6.0)
    assert pair["connection_ratio_high"] == pytest.approx(4.5 / 4.0)
    assert pair["new_tps_ratio"] == pytest.approx(1.25)


def test_a_machine_with_one_major_has_no_pairs(tmp_path: Path, write_run: RunWriter) -> None:
    results = tmp_path / "results"
    write_run(results, "gamma", [r for r in ROWS if r["workload"].endswith("-pg15")], experiment=EXPERIMENT)
    connection = duckdb.connect()
    register_machines(connection, load_machines(results))
    aggregate_experiment(connection, EXPERIMENT, results)
    assert records(connection, "SELECT * FROM pg_versions.peaks") != []
    assert records(connection, "SELECT * FROM pg_versions.version_pairs") == []
    assert records(connection, "SELECT * FROM pg_versions.connect_pairs") == []


@pytest.mark.process
def test_the_article_and_machine_page_answer_the_three_questions(
    tmp_path: Path, write_run: RunWriter
) -> None:
    """Rendered from the fixture: the versions' section with its figures, chart and verdicts."""
    results = tmp_path / "results"
    write_run(results, "gamma", ROWS, profile="quick", experiment=EXPERIMENT)
    # The article's sections stand on a client-count sweep of the same machine.
    sweep = [
        {"workload": workload, "clients": clients, "tps": 100.0 * clients + pass_no, "pass_no": pass_no}
        for workload in ("mixed", "select-only", "tpcb-like")
        for clients in (1, 2, 4, 8, 16, 32)
        for pass_no in (1, 2, 3)
    ]
    write_run(results, "gamma", sweep, profile="quick")
    assert validate_results(results) == []
    aggregate_all(results_dir=results, out_dir=tmp_path / "data")
    render_site(tmp_path / "data", tmp_path / "docs")
    article = (tmp_path / "docs" / "articles" / "too-many-connections.md").read_text()
    machine_page = (
        stamped_sources(tmp_path / "docs") / machine_fragment("gamma")
    ).read_text()  # a fragment, not Markdown
    for page in (article, machine_page):
        assert "Does the PostgreSQL version move the peak?" in page
        assert "15.18" in page and "18.1" in page
    # The article holds the table across machines; the machine's page the detail and both curves.
    # Its row links to the machine page's section on the versions, which has that anchor.
    row = "| [gamma](../machines/gamma.md#too-many-connections-versions) | 15.18 → 18.1 | 2.0 (1.0–2.0) |"
    assert row in article
    assert 'id="too-many-connections-versions"' in machine_page
    assert "peak moved by a factor of <strong>2.0</strong>" in machine_page
    assert "tmc-gamma-versions" in machine_page and "tmc-gamma-versions" not in article
    claims = json.loads((tmp_path / "data" / "claims" / "too-many-connections.json").read_text())
    verdicts = {c["id"]: c for c in claims["claims"]} if isinstance(claims, dict) else None
    assert verdicts is not None
    assert "peak-same-across-versions" in verdicts


@pytest.mark.process  # the charts are compiled by node
def test_each_article_names_its_seeds_version_beside_the_one_measured_here(
    tmp_path: Path, write_run: RunWriter
) -> None:
    """The seed's version comes from its published machine.yaml; where pg-versions measured that major, the
    machine's figure stands beside the seed's published one."""
    results = tmp_path / "results"
    for folder in ("published-too-many-connections", "published-pool-sizing"):
        shutil.copytree(PINNED_RESULTS / folder, results / folder)
    seed = yaml.safe_load((results / "published-too-many-connections" / "machine.yaml").read_text())
    seed_major = int(seed["postgres_version"].split(".")[0])
    rows = [{**row, "workload": row["workload"].replace("-pg18", f"-pg{seed_major}")} for row in ROWS]
    write_run(results, "gamma", rows, profile="quick", experiment=EXPERIMENT)
    aggregate_all(results_dir=results, out_dir=tmp_path / "data")
    render_site(tmp_path / "data", tmp_path / "docs")
    article = (tmp_path / "docs" / "articles" / "too-many-connections.md").read_text()
    assert f"The source article measured **PostgreSQL {seed['postgres_version']}**" in article
    assert "on gamma, PostgreSQL 18.1 put the mixed workload's peak at\n4.0 clients per core" in article
    pool_sizing = (tmp_path / "docs" / "articles" / "pool-sizing.md").read_text()
    pool_seed = yaml.safe_load((results / "published-pool-sizing" / "machine.yaml").read_text())
    pool_major = pool_seed["postgres_version"].split(".")[0]
    assert f"The source article measured **PostgreSQL {pool_seed['postgres_version']}**" in pool_sizing
    if int(pool_major) not in (15, seed_major):
        assert f"No machine here has measured PostgreSQL {pool_major}" in pool_sizing
