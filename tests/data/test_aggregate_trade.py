"""The aggregate.sql of seed 004's experiments (pgbouncer-trade, too-many-clients, tls-trade), and seed 002's
pooler throughput, over rows written as a run writes them: pairs found by target and workload id, ranges
from the passes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from connlab.contract.names import CLAIMS_SUBDIR
from connlab.data.aggregate import aggregate_all
from support.helpers import db_records, passes

if TYPE_CHECKING:
    from support.rows import RunWriter

# Each test aggregates a results folder whole: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

REFUSAL = "FATAL:  sorry, too many clients already"


def pooled(
    workload: str, clients: int, tps: list[float], pool_size: int, **extra: Any
) -> list[dict[str, Any]]:
    rows = passes(workload, clients, tps)
    for row in rows:
        row.update(target="pgbouncer", pool_size=pool_size, **extra)
    return rows


def aggregate(tmp_path: Path, write_run: RunWriter, experiment: str, rows: list[dict[str, Any]]) -> Path:
    results = tmp_path / "results"
    write_run(results, "gamma", rows, profile="quick", experiment=experiment)
    return aggregate_all(results_dir=results, out_dir=tmp_path / "data")


def test_churn_speedup_and_its_range(tmp_path: Path, write_run: RunWriter) -> None:
    rows = [
        *passes("churn-direct", 16, [900, 1000, 1100]),
        *pooled("churn-pgbouncer", 16, [18000, 19000, 20000], pool_size=2),
    ]
    database = aggregate(tmp_path, write_run, "pgbouncer-trade", rows)
    (churn,) = db_records(database, "SELECT * FROM pgbouncer_trade.churn")
    assert churn["speedup"] == pytest.approx(19.0)
    assert churn["speedup_low"] == pytest.approx(18000 / 1100)
    assert churn["speedup_high"] == pytest.approx(20000 / 900)


def test_pool_sizes_against_direct_with_statements_through_the_pooler(
    tmp_path: Path, write_run: RunWriter
) -> None:
    rows = [
        *passes("direct-tpcb-like", 200, [12000, 12600, 13000]),
        *pooled("pooled-tpcb-like-pool4", 200, [4800, 5000, 5200], pool_size=4, server_backends_max=5),
        *pooled("pooled-tpcb-like-pool8", 200, [5800, 6000, 6200], pool_size=8, server_backends_max=9),
        *passes("direct-select-only", 200, [145000, 145000, 145000]),
        *pooled("pooled-select-only-pool8", 200, [65000, 65000, 65000], pool_size=8),
    ]
    database = aggregate(tmp_path, write_run, "pgbouncer-trade", rows)
    sizes = {
        (r["builtin"], r["pool_size"]): r
        for r in db_records(database, "SELECT * FROM pgbouncer_trade.pool_sizes")
    }
    eight = sizes[("tpcb-like", 8)]
    assert eight["pooled_over_direct"] == pytest.approx(6000 / 12600)
    assert (eight["pooled_over_direct_low"], eight["pooled_over_direct_high"]) == pytest.approx(
        (5800 / 13000, 6200 / 12000)
    )
    assert eight["statements_per_s"] == pytest.approx(7 * 6000)  # seven statements a transaction
    assert sizes[("select-only", 8)]["statements_per_s"] == pytest.approx(65000)
    assert sizes[("tpcb-like", 4)]["server_cpu_per_backend"] == pytest.approx(0.95 / 5)
    spread = {r["builtin"]: r for r in db_records(database, "SELECT * FROM pgbouncer_trade.pool_spread")}
    assert spread["tpcb-like"]["best_pool_size"] == 8
    assert spread["tpcb-like"]["worst_over_best"] == pytest.approx(5000 / 6000)


def test_too_many_clients_keeps_the_refusal_and_who_got_in(tmp_path: Path, write_run: RunWriter) -> None:
    refused = passes("direct", 150, [1.0, 1.0, 1.0])
    for row in refused:
        row.update(ok=False, exit_code=1, tps=None, transactions=None, failed_transactions=None,
                   latency_avg_ms=None, error=REFUSAL, clients_connected=99)  # fmt: skip
    rows = [*refused, *pooled("pgbouncer", 150, [70000, 75000, 76000], pool_size=2, server_backends_max=3)]
    database = aggregate(tmp_path, write_run, "too-many-clients", rows)
    (refusal,) = db_records(database, "SELECT * FROM too_many_clients.refusal")
    assert (refusal["windows"], refusal["windows_refused"]) == (3, 3)
    assert refusal["fatal_message"] == "sorry, too many clients already"
    assert refusal["clients_connected_median"] == 99
    (through,) = db_records(database, "SELECT * FROM too_many_clients.pooled")
    assert (through["tps_median"], through["server_backends_max"]) == (75000, 3)


def test_tls_cost_and_the_handshakes_share_of_a_connection(tmp_path: Path, write_run: RunWriter) -> None:
    def churn(workload: str, tps: list[float], connection_ms: float, **extra: Any) -> list[dict[str, Any]]:
        rows = (
            pooled(workload, 2, tps, pool_size=2, **extra)
            if "pgbouncer" in workload
            else passes(workload, 2, tps)
        )
        for row in rows:
            row.update(avg_connection_ms=connection_ms, transport="tcp")
        return rows

    rows = [
        *churn("churn-direct-plain", [800, 1000, 1200], 2.0),
        *churn("churn-direct-tls", [400, 500, 600], 4.0),
        *churn("churn-pgbouncer-plain", [9000, 10000, 11000], 0.1),
        *churn("churn-pgbouncer-tls", [2000, 2500, 3000], 0.5),
    ]
    database = aggregate(tmp_path, write_run, "tls-trade", rows)
    cost = {r["target"]: r for r in db_records(database, "SELECT * FROM tls_trade.tls_cost")}
    assert cost["direct"]["tls_over_plain"] == pytest.approx(0.5)
    assert cost["direct"]["tls_over_plain_low"] == pytest.approx(400 / 1200)
    assert cost["direct"]["handshake_share"] == pytest.approx(0.5)
    (speedup,) = db_records(database, "SELECT * FROM tls_trade.churn_speedup")
    assert (speedup["plain_speedup"], speedup["tls_speedup"]) == pytest.approx((10.0, 5.0))


def test_the_machines_netem_line_reaches_the_facts(tmp_path: Path, write_run: RunWriter) -> None:
    """Network-distance rows cite the machine's own probe, never a figure made up for the page."""
    database = aggregate(tmp_path, write_run, "pgbouncer-trade", passes("churn-direct", 16, [1.0, 1.0, 1.0]))
    (machine,) = db_records(database, "SELECT netem FROM main.machines WHERE id = 'gamma'")
    assert machine["netem"] is None  # never probed: said as unknown, not as available
    reason = "netem not available on this machine: Specified qdisc kind is unknown"
    machine_file = tmp_path / "results" / "gamma" / "machine.yaml"
    machine_file.write_text(machine_file.read_text() + f"netem: '{reason}'\n")
    database = aggregate_all(results_dir=tmp_path / "results", out_dir=tmp_path / "data2")
    (machine,) = db_records(database, "SELECT netem FROM main.machines WHERE id = 'gamma'")
    assert machine["netem"] == reason


def test_the_crowd_claims_are_judged_at_25_clients_per_core_with_their_range(
    tmp_path: Path, write_run: RunWriter
) -> None:
    """Seed 004's crowd (200 clients on 8 cores, a pool of 16) is 25 per core on a pool of 2 per core here:
    the verdict carries the passes' range, and a range that straddles the seed's 45% is inconclusive."""
    rows = [
        *passes("direct-select-only", 25, [1000, 1100, 1200]),
        *pooled("pooled-select-only-crowd25x", 25, [400, 450, 500], pool_size=2),
        *passes("direct-tpcb-like", 25, [100, 100, 100]),
        *pooled("pooled-tpcb-like-crowd25x", 25, [30, 30, 30], pool_size=2),
    ]
    aggregate(tmp_path, write_run, "pgbouncer-trade", rows)
    claims = json.loads((tmp_path / "data" / CLAIMS_SUBDIR / "pgbouncer-trade.json").read_text())
    verdicts = {
        claim["id"]: next(v for v in claim["verdicts"] if v["machine"] == "gamma")
        for claim in claims["claims"]
    }
    select_only = verdicts["crowd-pooled-select-only"]
    assert select_only["verdict"] == "inconclusive"  # 0.41, passes 0.33 to 0.5 around the seed's 0.45
    assert (select_only["low"], select_only["value"], select_only["high"]) == pytest.approx(
        (400 / 1200, 450 / 1100, 500 / 1000)
    )
    assert verdicts["crowd-pooled-read-write"]["verdict"] == "holds"  # 0.3 <= 0.47
    assert verdicts["direct-beats-pooled-held"]["verdict"] == "holds"  # every crowd below 1
    assert verdicts["churn-speedup-2-per-core"]["verdict"] == "not measured"


def test_pooler_throughput_pairs_say_no_measurable_difference_where_ranges_overlap(
    tmp_path: Path, write_run: RunWriter
) -> None:
    """Seed 002's item: throughput with its spread and the initial connection time per pooler; two poolers
    whose passes overlap differ by nothing measurable, whatever their medians."""

    def through(pooler: str, clients: int, tps: list[float], connect_ms: float) -> list[dict[str, Any]]:
        rows = passes(pooler, clients, tps)
        for row in rows:
            # A minute's window: PgPool-II's 3 s of connecting stays within a steady state's tenth of it.
            row.update(target=pooler, pool_size=100, initial_connection_ms=connect_ms, duration_s=60)
        return rows

    rows = [
        *through("pgbouncer", 10, [1000, 1100, 1200], 50.0),
        *through("pgpool", 10, [1150, 1300, 1400], 300.0),  # overlaps PgBouncer's 1000-1200
        *through("pgbouncer", 100, [1000, 1050, 1100], 500.0),
        *through("pgpool", 100, [400, 500, 600], 3000.0),
    ]
    database = aggregate(tmp_path, write_run, "pooler-memory", rows)
    pairs = {r["clients"]: r for r in db_records(database, "SELECT * FROM pooler_memory.throughput_pairs")}
    assert pairs[10]["difference"] == "no measurable difference"
    assert (pairs[100]["difference"], pairs[100]["ratio"]) == ("faster", pytest.approx(1050 / 500))
    speeds = db_records(database, "SELECT * FROM pooler_memory.throughput WHERE pooler = 'pgpool'")
    assert sorted(r["connection_ms_median"] for r in speeds) == [300.0, 3000.0]


def test_the_trade_curve_takes_the_churn_per_client_count_and_the_fastest_pool_per_crowd(
    tmp_path: Path, write_run: RunWriter
) -> None:
    """pgbouncer_trade.trade_curve, which the article's chart draws: a new connection per transaction at each
    client count, and held connections at each crowd through the pool that served it fastest."""
    rows = [
        *passes("churn-direct", 2, [50, 52, 54]),
        *pooled("churn-pgbouncer", 2, [150, 160, 161], pool_size=2),
        *passes("direct-tpcb-like", 200, [700, 710, 720]),
        *pooled("pooled-tpcb-like-pool4", 200, [1100, 1130, 1150], pool_size=4),
        *pooled("pooled-tpcb-like-pool8", 200, [1200, 1250, 1300], pool_size=8),
    ]
    database = aggregate(tmp_path, write_run, "pgbouncer-trade", rows)
    curve = {
        (r["connect"], r["clients"]): r
        for r in db_records(database, "SELECT * FROM pgbouncer_trade.trade_curve")
    }
    assert set(curve) == {("per-transaction", 2), ("persistent", 200)}
    churn = curve[("per-transaction", 2)]
    assert (churn["builtin"], churn["pool_size"], churn["profile"]) == ("select-only", 2, "quick")
    assert churn["ratio"] == pytest.approx(160 / 52)
    assert (churn["ratio_low"], churn["ratio_high"]) == pytest.approx((150 / 54, 161 / 50))
    held = curve[("persistent", 200)]
    assert (held["builtin"], held["pool_size"], held["pools"]) == ("tpcb-like", 8, 2)
    assert held["ratio"] == pytest.approx(1250 / 710)
    assert (held["ratio_low"], held["ratio_high"]) == pytest.approx((1200 / 720, 1300 / 700))
    assert held["clients_per_core"] == pytest.approx(200 / held["server_cores"])
    assert not held["client_saturated"]


def test_pooler_memory_by_version_keeps_each_versions_memory_and_throughput(
    tmp_path: Path, write_run: RunWriter
) -> None:
    """pooler_memory.by_version, which Four poolers compared draws side by side: per pooler, the version its
    rows recorded (none in rows older than the column) and client count, the whole tree's RSS and the
    throughput, each with the passes' range."""

    def through(pooler: str, clients: int, tps: list[float], mib: float, version: str | None) -> list[dict]:
        rows = passes(pooler, clients, tps)
        for pass_no, row in enumerate(rows):
            row.update(target=pooler, pool_size=100, pooler_version=version,
                       pooler_rss_peak_bytes=int((mib + pass_no) * 1048576))  # fmt: skip
        return rows

    rows = [
        *through("pgbouncer", 10, [1000, 1100, 1200], 12.0, "1.18.0"),
        *through("pgbouncer", 500, [900, 950, 1000], 15.0, "1.18.0"),
        *through("pgpool", 10, [500, 600, 700], 1000.0, None),
    ]
    database = aggregate(tmp_path, write_run, "pooler-memory", rows)
    found = {
        (r["pooler"], r["clients"]): r for r in db_records(database, "SELECT * FROM pooler_memory.by_version")
    }
    assert set(found) == {("pgbouncer", 10), ("pgbouncer", 500), ("pgpool", 10)}
    light = found[("pgbouncer", 10)]
    assert (light["version"], light["profile"], light["windows_ok"]) == ("1.18.0", "quick", 3)
    memory = (light["rss_mib_median"], light["rss_mib_min"], light["rss_mib_max"])
    assert memory == pytest.approx((13, 12, 14))
    assert (light["tps_median"], light["tps_min"], light["tps_max"]) == pytest.approx((1100, 1000, 1200))
    assert found[("pgpool", 10)]["version"] is None  # facts take machine.yaml's (four-poolers.facts.sql)
