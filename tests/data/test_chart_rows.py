"""The rows of the articles' charts across machines (connlab.data.chart_rows): a series per machine up to a
handful, the machines' median and range past it; every value taken from the facts' rows."""

from __future__ import annotations

from typing import Any

import pytest

from connlab.data.chart_rows import (
    LATENCY_STATISTICS,
    LINES_UP_TO,
    connection_cost,
    half_power_step,
    latency_across,
    median_label,
    pooler_memory,
    pooler_side_by_side,
    pooler_throughput,
    trade_curve,
)


def sweep_point(machine: str, clients: int, cores: float, base: float) -> dict:
    return {
        "machine": machine, "workload": "mixed", "clients": clients, "clients_per_core": clients / cores,
        "latency_avg_median": base, "latency_avg_min": base * 0.9, "latency_avg_max": base * 1.1,
        "latency_p95_median": base * 3, "latency_p95_min": base * 2.8, "latency_p95_max": base * 3.3,
        "latency_p99_median": base * 5,
    }  # fmt: skip


def sweep(machines: list[str]) -> dict:
    points = [
        sweep_point(m, clients, 1.0, (i + 1) * clients / 10)
        for i, m in enumerate(machines)
        for clients in (1, 4, 16)
    ]
    # Another workload and a point without latency are never drawn.
    points.append({**sweep_point(machines[0], 2, 1.0, 1.0), "workload": "select-only"})
    points.append({**sweep_point(machines[0], 2, 1.0, 1.0), "latency_avg_median": None})
    return {"points": points}


def test_latency_draws_each_machine_with_mean_p95_and_p99_and_its_passes() -> None:
    machines = ["box-a", "box-b"]
    rows = latency_across(sweep(machines), [*machines, "box-without-sweep"])
    assert {r["series"] for r in rows} == set(machines)
    assert [r["statistic"] for r in rows[:: len(rows) // 3]] == [name for name, *_ in LATENCY_STATISTICS]
    mean = next(r for r in rows if r["series"] == "box-b" and r["clients"] == 4 and r["statistic"] == "mean")
    assert (mean["latency_ms"], mean["latency_ms_low"], mean["latency_ms_high"]) == pytest.approx(
        (0.8, 0.72, 0.88)
    )
    p99 = next(
        r
        for r in rows
        if r["series"] == "box-a" and r["clients"] == 16 and r["statistic"] == "99th percentile"
    )
    assert p99["latency_ms"] == p99["latency_ms_low"] == p99["latency_ms_high"] == pytest.approx(8.0)
    assert len(rows) == len(machines) * 3 * 3


def test_latency_past_a_handful_of_machines_is_their_median_and_range() -> None:
    machines = [f"box-{i}" for i in range(LINES_UP_TO + 2)]
    rows = latency_across(sweep(machines), machines)
    assert {r["series"] for r in rows} == {median_label(len(machines))}
    assert len(rows) == 3 * 3  # a row per statistic and step of clients per core, whatever the machines
    at_4 = next(r for r in rows if r["statistic"] == "mean" and r["clients_per_core"] == 4)
    values = [(i + 1) * 4 / 10 for i in range(len(machines))]
    assert at_4["machines"] == len(machines)
    assert at_4["latency_ms"] == pytest.approx(sorted(values)[len(values) // 2])
    assert (at_4["latency_ms_low"], at_4["latency_ms_high"]) == pytest.approx((min(values), max(values)))


def test_steps_of_half_a_power_of_two_meet_across_core_counts() -> None:
    assert half_power_step(4.0) == 4.0
    assert half_power_step(5.0) == pytest.approx(2**2.5)
    assert half_power_step(0.125) == 0.125


POOLERS = {
    "throughput": [
        {"machine": m, "pooler": pooler, "clients": clients, "tps_median": tps, "tps_min": tps * 0.9,
         "tps_max": tps * 1.2}
        for m in ("box-a", "box-b")
        for pooler, tps in (("pgbouncer", 8000.0), ("pgpool", 5000.0), ("odyssey", 7000.0))
        for clients in (10, 100)
    ] + [{"machine": "box-a", "pooler": "pgpool", "clients": 500, "tps_median": None, "tps_min": None,
          "tps_max": None}],
    "memory": [
        {"machine": "box-a", "pooler": "odyssey", "clients": 10, "rss_mib_median": 40.0, "rss_mib_min": 39.0,
         "rss_mib_max": 41.0}
    ],
}  # fmt: skip


def test_poolers_head_to_head_per_machine_with_odyssey_when_it_ran() -> None:
    rows = pooler_throughput(POOLERS, ["box-a", "box-b"])
    assert {r["series"] for r in rows} == {"pgbouncer", "pgpool", "odyssey"}
    assert {r["point"] for r in rows} == {f"{m}, {c} clients" for m in ("box-a", "box-b") for c in (10, 100)}
    first = rows[0]
    assert (first["value"], first["low"], first["high"]) == pytest.approx((8000.0, 7200.0, 9600.0))
    (memory,) = pooler_memory(POOLERS, ["box-a"])
    assert (memory["series"], memory["value"], memory["low"], memory["high"]) == ("odyssey", 40.0, 39.0, 41.0)


def test_poolers_past_a_handful_of_machines_are_a_median_per_client_count() -> None:
    machines = [f"box-{i}" for i in range(LINES_UP_TO + 1)]
    facts = {
        "throughput": [
            {"machine": m, "pooler": "pgbouncer", "clients": 10, "tps_median": 1000.0 * (i + 1),
             "tps_min": 1.0, "tps_max": 1e9}
            for i, m in enumerate(machines)
        ]
    }  # fmt: skip
    (row,) = pooler_throughput(facts, machines)
    assert row["machines"] == len(machines)
    assert (row["low"], row["high"]) == (
        1000.0,
        1000.0 * len(machines),
    )  # the machines' range, not the passes'
    assert row["value"] == pytest.approx(1000.0 * (len(machines) + 1) / 2)


def test_connection_cost_has_a_dot_straight_and_through_pgbouncer_per_machine_and_clients() -> None:
    trade = {
        "churn": [
            {"machine": "box-a", "clients": 2,
             "direct_tps": 52.8, "direct_tps_min": 51.5, "direct_tps_max": 54.3,
             "pooled_tps": 160.6, "pooled_tps_min": 149.2, "pooled_tps_max": 161.1}
        ]
    }  # fmt: skip
    rows = connection_cost(trade, ["box-a"])
    assert [(r["series"], r["value"], r["low"], r["high"]) for r in rows] == [
        ("straight to the server", 52.8, 51.5, 54.3),
        ("through PgBouncer", 160.6, 149.2, 161.1),
    ]
    assert {r["point"] for r in rows} == {"box-a, 2 clients"}


def test_connection_cost_sets_the_seeds_printed_figures_beside_the_measured_never_in_a_median() -> None:
    """The published set's pooler-churn tps (pgbouncer-trade's `published`) as rows of their own, marked
    published and in their path's pooler kind; its latency rows and other experiments are left out."""
    machines = [f"box-{i}" for i in range(LINES_UP_TO + 1)]
    trade = {
        "churn": [
            {"machine": m, "clients": 2, "direct_tps": 50.0, "direct_tps_min": 49.0, "direct_tps_max": 51.0,
             "pooled_tps": 150.0, "pooled_tps_min": 149.0, "pooled_tps_max": 151.0}
            for m in machines
        ],
        "published": [
            {"experiment": "pooler-churn", "workload": "pgbouncer", "clients": 16, "metric": "tps",
             "value": 17950.0, "server_cores": 8},
            {"experiment": "pooler-churn", "workload": "direct", "clients": 16, "metric": "tps",
             "value": 949.0, "server_cores": 8},
            {"experiment": "pooler-churn", "workload": "direct", "clients": 16, "metric": "latency_avg_ms",
             "value": 16.9},
            {"experiment": "pool-size", "workload": "select-only", "clients": 200, "metric": "tps",
             "value": 62649.0},
        ],
    }  # fmt: skip
    rows = connection_cost(trade, machines)
    measured = [r for r in rows if not r["published"]]
    assert {(r["series"], r["pooler"], r["value"]) for r in measured} == {
        ("straight to the server", "direct", 50.0), ("through PgBouncer", "pgbouncer", 150.0),
    }  # fmt: skip
    assert {r["machines"] for r in measured} == {len(machines)}  # the median: the seed is not among them
    seed = [
        (r["point"], r["series"], r["pooler"], r["value"], r["low"], r["high"])
        for r in rows
        if r["published"]
    ]
    assert seed == [
        # The seed's core count beside its clients: its 16 clients ran on 8 cores, not on ours.
        ("published article, 8 cores, 16 clients", "straight to the server", "direct", 949.0, 949.0, 949.0),
        (
            "published article, 8 cores, 16 clients",
            "through PgBouncer",
            "pgbouncer",
            17950.0,
            17950.0,
            17950.0,
        ),
    ]
    assert connection_cost({"churn": trade["churn"]}, machines) == measured  # no published set, no seed rows


def test_each_dot_keeps_its_pooler_kind_for_its_colour() -> None:
    assert {(r["series"], r["pooler"]) for r in pooler_throughput(POOLERS, ["box-a", "box-b"])} == {
        ("pgbouncer", "pgbouncer"), ("pgpool", "pgpool"), ("odyssey", "odyssey"),
    }  # fmt: skip
    many = [f"box-{i}" for i in range(LINES_UP_TO + 1)]
    facts = {"throughput": [{**POOLERS["throughput"][0], "machine": m} for m in many]}
    (row,) = pooler_throughput(facts, many)
    assert (row["pooler"], row["published"]) == ("pgbouncer", False)
    assert row["point"] == f"10 clients, {len(many)} machines' median"


# -- the answers' charts: pooled against direct by clients per core, the poolers by version ---------------


def trade_row(machine: str, connect: str, builtin: str, per_core: float, ratio: float, **extra: Any) -> dict:
    return {
        "machine": machine, "profile": "full", "connect": connect, "builtin": builtin,
        "clients": int(per_core), "server_cores": 1.0, "clients_per_core": per_core, "pool_size": 2,
        "pools": 1, "pooled_tps": 100.0 * ratio, "direct_tps": 100.0, "ratio": ratio,
        "ratio_low": ratio * 0.9, "ratio_high": ratio * 1.1, "client_saturated": False, **extra,
    }  # fmt: skip


def test_the_trade_draws_each_machine_named_with_its_server_cores_and_its_passes_range() -> None:
    facts = {
        "trade_curve": [
            trade_row("box-a", "per-transaction", "select-only", 2.0, 3.0),
            trade_row("box-a", "persistent", "tpcb-like", 25.0, 0.9),
            {**trade_row("box-b", "persistent", "tpcb-like", 12.5, 1.8), "server_cores": 16.0},
            # A point without a ratio (a side that never finished) is not drawn.
            {**trade_row("box-b", "persistent", "select-only", 12.5, 1.0), "ratio": None},
        ]
    }
    rows = trade_curve(facts, ["box-a", "box-b", "box-without-trade"])
    assert [r["curve"] for r in rows] == [
        "box-a, 1 server core", "box-a, 1 server core", "box-b, 16 server cores",
    ]  # fmt: skip
    first = rows[0]
    assert first["connect"] == "per-transaction"
    assert (first["ratio"], first["ratio_low"], first["ratio_high"]) == pytest.approx((3.0, 2.7, 3.3))
    assert first["machines"] == 1 and first["profile"] == "full" and first["pool_size"] == 2


def test_the_trade_past_a_handful_of_machines_is_a_median_per_profile_never_mixed() -> None:
    """Full-profile machines decide, quick ones indicate: each profile's machines get a median of their own
    at each step of clients per core, with a band from the lowest to the highest of them."""
    full = [f"full-{i}" for i in range(LINES_UP_TO)]
    quick = ["quick-0", "quick-1"]
    facts = {
        "trade_curve": [
            trade_row(m, "persistent", "tpcb-like", 25.0, 1.0 + i / 10) for i, m in enumerate(full)
        ] + [
            {**trade_row(m, "persistent", "tpcb-like", 25.0, 0.5), "profile": "quick",
             "client_saturated": i == 0}
            for i, m in enumerate(quick)
        ]
    }  # fmt: skip
    rows = trade_curve(facts, [*full, *quick])
    by_profile = {r["profile"]: r for r in rows}
    assert set(by_profile) == {"full", "quick"} and len(rows) == 2
    decided = by_profile["full"]
    assert decided["curve"] == median_label(len(full)) and decided["machines"] == len(full)
    assert decided["ratio"] == pytest.approx(1.2)  # the full machines' median, the quick ones left out
    assert (decided["ratio_low"], decided["ratio_high"]) == pytest.approx((1.0, 1.4))
    assert decided["clients_per_core"] == half_power_step(25.0) and decided["clients"] is None
    indicated = by_profile["quick"]
    assert indicated["curve"] == median_label(len(quick)) and indicated["ratio"] == pytest.approx(0.5)
    assert indicated["client_saturated"]  # a bound in any machine of the step is said


def side_row(machine: str, pooler: str, version: str | None, rss: float, tps: float | None) -> dict:
    return {
        "machine": machine, "pooler": pooler, "version": version, "profile": "full", "server_cores": 1.0,
        "memory_clients": 500, "rss_mib_median": rss, "rss_mib_min": rss * 0.9, "rss_mib_max": rss * 1.1,
        "tps_clients": 10, "tps_median": tps, "tps_min": tps and tps * 0.8, "tps_max": tps and tps * 1.2,
    }  # fmt: skip


def test_the_poolers_side_by_side_are_named_by_version_with_memory_and_throughput() -> None:
    facts = {
        "side_by_side": [
            side_row("box-a", "pgpool", "4.3.5", 1012.0, 5600.0),
            side_row("box-a", "pgbouncer", "1.18.0", 15.5, 8500.0),
            side_row("box-b", "pgbouncer", "1.21.0", 16.0, None),  # no throughput at the source's count
            side_row("box-b", "odyssey", None, 40.0, 7000.0),
        ]
    }
    rows = pooler_side_by_side(facts, ["box-a", "box-b"])
    memory = [r for r in rows if r["measure"] == "memory"]
    tps = [r for r in rows if r["measure"] == "throughput"]
    assert rows == memory + tps  # memory first, as the page draws it first
    assert [r["label"] for r in memory] == [
        "Odyssey (version not recorded)", "PgBouncer 1.18.0", "PgBouncer 1.21.0", "PgPool-II 4.3.5",
    ]  # fmt: skip
    # PgBouncer 1.21.0 had no throughput at the source's client count: no dot, not a zero.
    assert [r["label"] for r in tps] == [
        "Odyssey (version not recorded)", "PgBouncer 1.18.0", "PgPool-II 4.3.5",
    ]  # fmt: skip
    pgpool = next(r for r in memory if r["pooler"] == "pgpool")
    assert (pgpool["value"], pgpool["low"], pgpool["high"]) == pytest.approx((1012.0, 910.8, 1113.2))
    assert (pgpool["curve"], pgpool["clients"], pgpool["machines"]) == ("box-a, 1 server core", 500, 1)
    assert next(r for r in tps if r["pooler"] == "pgpool")["clients"] == 10


def test_the_poolers_side_by_side_past_a_handful_of_machines_are_a_median_per_version_and_profile() -> None:
    machines = [f"box-{i}" for i in range(LINES_UP_TO + 1)]
    facts = {
        "side_by_side": [side_row(m, "pgbouncer", "1.18.0", 10.0 + i, 1000.0) for i, m in enumerate(machines)]
        + [{**side_row("quick-box", "pgbouncer", "1.18.0", 99.0, 1.0), "profile": "quick"}]
    }
    rows = pooler_side_by_side(facts, [*machines, "quick-box"])
    memory = {r["profile"]: r for r in rows if r["measure"] == "memory"}
    assert set(memory) == {"full", "quick"}
    decided = memory["full"]
    assert decided["machines"] == len(machines) and decided["label"] == "PgBouncer 1.18.0"
    assert (decided["low"], decided["high"]) == (10.0, 10.0 + len(machines) - 1)  # the machines' range
    assert decided["value"] == pytest.approx(10.0 + (len(machines) - 1) / 2)
    assert memory["quick"]["value"] == 99.0 and memory["quick"]["machines"] == 1
