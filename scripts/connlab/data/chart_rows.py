"""The rows of the articles' charts across machines: latency against clients per core, the poolers head to
head, and the cost of a new connection, each read from one article's facts.

Up to LINES_UP_TO machines each is drawn on its own (a line, or a dot per machine and point, with the range
of its passes); past it, the machines' median with a band or rule from the lowest to the highest of them, so
that a chart and its legend keep their size whatever the number of machines. The rule is the same for every
chart here. connlab.data.answers writes these rows with each article's answers; connlab.site.charts.kinds
draws them (latency_across_machines, pooler_throughput_dots, pooler_memory_dots, connection_cost_dots).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable

# A line (or a dot) per machine up to this many machines; past it, their median and range.
LINES_UP_TO = 5
# The latency statistics drawn, each with the points' fields of its median, lowest and highest pass (the
# 99th percentile's passes are not kept apart: its band is its median).
LATENCY_STATISTICS = (
    ("mean", "latency_avg_median", "latency_avg_min", "latency_avg_max"),
    ("95th percentile", "latency_p95_median", "latency_p95_min", "latency_p95_max"),
    ("99th percentile", "latency_p99_median", "latency_p99_median", "latency_p99_median"),
)
LATENCY_WORKLOAD = "mixed"
# The connection-cost chart's two paths, as its legend names them, each with its pooler kind (whose colour
# it is drawn in; "direct": none) and the churn row's fields.
CONNECTION_PATHS = (
    ("straight to the server", "direct", "direct_tps", "direct_tps_min", "direct_tps_max"),
    ("through PgBouncer", "pgbouncer", "pooled_tps", "pooled_tps_min", "pooled_tps_max"),
)
# The seed's printed figures of the same measurement (the published set's rows: experiment, metric, and the
# pooler kind as its workload), drawn beside the measured dots under this category.
SEED_CHURN = ("pooler-churn", "tps")
SEED_POINT = "published article"


def median_label(machines: int) -> str:
    return f"median of {machines} machines (band: lowest to highest)"


def half_power_step(value: float) -> float:
    """The step of half a power of two that value falls on: machines' core counts differ, so their clients
    per core meet only on such steps (the throughput chart across machines groups them the same way, in
    too-many-connections.facts.sql's normalised_spread)."""
    return float(2 ** (math.floor(math.log2(value) * 2 + 0.5) / 2))


def _machines(rows: Iterable[dict], measured: list[str]) -> list[str]:
    present = {str(row["machine"]) for row in rows}
    return [m for m in measured if m in present]


def latency_across(sweep: dict, measured: list[str]) -> list[dict]:
    """The mixed workload's mean, 95th and 99th percentile latency against clients per server core: a
    series per machine up to LINES_UP_TO, each with the range of its passes; past it, one series for the
    machines' median at each step of clients per core, with the lowest and highest machine's median."""
    points = [
        p
        for p in sweep.get("points", [])
        if p.get("workload") == LATENCY_WORKLOAD and p.get("latency_avg_median") is not None
    ]
    machines = _machines(points, measured)
    kept = set(machines)
    rows = []
    for statistic, median, low, high in LATENCY_STATISTICS:
        for point in points:
            if str(point["machine"]) not in kept or point.get(median) is None:
                continue
            rows.append(
                {
                    "series": str(point["machine"]),
                    "statistic": statistic,
                    "clients": point["clients"],
                    "clients_per_core": point["clients_per_core"],
                    "machines": 1,
                    "latency_ms": point[median],
                    "latency_ms_low": point.get(low) if point.get(low) is not None else point[median],
                    "latency_ms_high": point.get(high) if point.get(high) is not None else point[median],
                }
            )
    if len(machines) <= LINES_UP_TO:
        return rows
    return _latency_band(rows, len(machines))


def _latency_band(rows: list[dict], machines: int) -> list[dict]:
    groups: dict[tuple[str, float], list[dict]] = {}
    for row in rows:
        groups.setdefault((row["statistic"], half_power_step(float(row["clients_per_core"]))), []).append(row)
    order = [name for name, *_ in LATENCY_STATISTICS]
    return [
        {
            "series": median_label(machines),
            "statistic": statistic,
            "clients": None,
            "clients_per_core": step,
            "machines": len({r["series"] for r in group}),
            "latency_ms": statistics.median(float(r["latency_ms"]) for r in group),
            "latency_ms_low": min(float(r["latency_ms"]) for r in group),
            "latency_ms_high": max(float(r["latency_ms"]) for r in group),
        }
        for (statistic, step), group in sorted(
            groups.items(), key=lambda item: (order.index(item[0][0]), item[0][1])
        )
    ]


def _dot_rows(rows: list[dict], measured: list[str], series: str, fields: tuple[str, str, str]) -> list[dict]:
    """A dot per machine, client count and series with the range of its passes; past LINES_UP_TO machines,
    a dot per client count and series at the machines' median, ranging from the lowest to the highest.
    Each row keeps its pooler kind (`pooler`), whose colour the chart draws it in, and is not published."""
    median, low, high = fields
    valued = [r for r in rows if r.get(median) is not None]
    machines = _machines(valued, measured)
    if len(machines) <= LINES_UP_TO:
        return [
            {
                "point": f"{r['machine']}, {r['clients']} clients",
                "series": str(r[series]),
                "pooler": str(r["pooler"]),
                "published": False,
                "machines": 1,
                "value": r[median],
                "low": r[low] if r.get(low) is not None else r[median],
                "high": r[high] if r.get(high) is not None else r[median],
            }
            for machine in machines
            for r in valued
            if str(r["machine"]) == machine
        ]
    groups: dict[tuple[object, str], list[dict]] = {}
    for r in valued:
        if str(r["machine"]) in machines:
            groups.setdefault((r["clients"], str(r[series])), []).append(r)
    return [
        {
            "point": f"{clients} clients, {len({r['machine'] for r in group})} machines' median",
            "series": name,
            "pooler": str(group[0]["pooler"]),
            "published": False,
            "machines": len({r["machine"] for r in group}),
            "value": statistics.median(float(r[median]) for r in group),
            "low": min(float(r[median]) for r in group),
            "high": max(float(r[median]) for r in group),
        }
        for (clients, name), group in sorted(groups.items(), key=lambda item: (float(item[0][0]), item[0][1]))  # type: ignore[arg-type]
    ]


def pooler_throughput(poolers: dict, measured: list[str]) -> list[dict]:
    """Each pooler's select-only throughput (four-poolers' `throughput`), per machine and client count, with
    the range of the passes; every pooler with rows is drawn, Odyssey among them where it ran."""
    return _dot_rows(poolers.get("throughput", []), measured, "pooler", ("tps_median", "tps_min", "tps_max"))


def pooler_memory(poolers: dict, measured: list[str]) -> list[dict]:
    """The resident memory of each pooler's process tree (four-poolers' `memory`), per machine and client
    count, with the range of the passes."""
    rows = poolers.get("memory", [])
    return _dot_rows(rows, measured, "pooler", ("rss_mib_median", "rss_mib_min", "rss_mib_max"))


def connection_cost(trade: dict, measured: list[str]) -> list[dict]:
    """A new SCRAM connection per transaction (pgbouncer-trade's `churn`): throughput straight to the server
    and through PgBouncer, per machine and client count, with the range of the passes; then the seed's
    printed figures of the same (pgbouncer-trade's `published`), marked published, never in a median."""
    paths = [
        {"machine": r["machine"], "clients": r["clients"], "path": name, "pooler": kind,
         "tps": r.get(median), "tps_min": r.get(low), "tps_max": r.get(high)}
        for r in trade.get("churn", [])
        for name, kind, median, low, high in CONNECTION_PATHS
    ]  # fmt: skip
    return _dot_rows(paths, measured, "path", ("tps", "tps_min", "tps_max")) + _seed_connection_cost(trade)


def _seed_connection_cost(trade: dict) -> list[dict]:
    names = {kind: name for name, kind, *_ in CONNECTION_PATHS}
    printed = [
        r
        for r in trade.get("published", [])
        if (r.get("experiment"), r.get("metric")) == SEED_CHURN and r.get("workload") in names
    ]
    return [
        {
            "point": f"{SEED_POINT}, {r['server_cores']:g} cores, {r['clients']} clients",
            "series": names[str(r["workload"])],
            "pooler": str(r["workload"]),
            "published": True,
            "machines": 1,
            "value": r["value"],
            "low": r["value"],
            "high": r["value"],
        }
        for r in sorted(printed, key=lambda r: (float(r["clients"]), str(r["workload"])))
    ]
