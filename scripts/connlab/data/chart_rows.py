"""The rows of the articles' charts across machines: latency against clients per core, the poolers head to
head, the cost of a new connection, pooled against direct by clients per core and the poolers by version,
each read from one article's facts.

Up to LINES_UP_TO machines each is drawn on its own (a line, or a dot per machine and point, with the range
of its passes); past it, the machines' median with a band or rule from the lowest to the highest of them, so
that a chart and its legend keep their size whatever the number of machines. The rule is the same for every
chart here. connlab.data.answers writes these rows with each article's answers; connlab.site.charts.kinds
draws them (latency_across_machines, pooler_throughput_dots, pooler_memory_dots, connection_cost_dots,
pooled_over_direct_by_clients, pooler_memory_by_version, pooler_throughput_by_version).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable

from connlab.contract.names import machine_with_cores
from connlab.contract.poolers.registry import pooler_label

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


# The fields of pgbouncer-trade's `trade_curve` a chart keeps (connlab.site.charts.kinds.trade_rows words
# them): how the clients connected, the workload, the point, the pool that served it and the ratio's range.
TRADE_FIELDS = (
    "connect", "builtin", "profile", "clients", "clients_per_core", "pool_size", "pools", "pooled_tps",
    "direct_tps", "ratio", "ratio_low", "ratio_high", "client_saturated",
)  # fmt: skip


def trade_curve(trade: dict, measured: list[str]) -> list[dict]:
    """Through PgBouncer ÷ straight to the server against clients per server core (pgbouncer-trade's
    `trade_curve`), for a new connection per transaction and for held connections: a curve per machine,
    named with its server cores, up to LINES_UP_TO machines, each with the range of its passes; past it, for
    each profile apart (full-profile machines decide, quick ones indicate: one median never mixes them), the
    machines' median at each step of clients per core with a band from the lowest to the highest of them."""
    rows = [r for r in trade.get("trade_curve", []) if r.get("ratio") is not None]
    machines = _machines(rows, measured)
    if len(machines) <= LINES_UP_TO:
        return [
            {
                **{name: r.get(name) for name in TRADE_FIELDS},
                "curve": machine_with_cores(machine, r.get("server_cores")),
                "machines": 1,
            }
            for machine in machines
            for r in rows
            if str(r["machine"]) == machine
        ]
    kept = set(machines)
    per_profile: dict[str, set[str]] = {}
    groups: dict[tuple[str, str, str, float], list[dict]] = {}
    for r in rows:
        if str(r["machine"]) not in kept:
            continue
        profile = str(r.get("profile"))
        per_profile.setdefault(profile, set()).add(str(r["machine"]))
        step = half_power_step(float(r["clients_per_core"]))
        groups.setdefault((profile, str(r["connect"]), str(r["builtin"]), step), []).append(r)
    return [
        {
            "connect": connect, "builtin": builtin, "profile": profile, "clients": None,
            "clients_per_core": step, "pool_size": None, "pools": None, "pooled_tps": None,
            "direct_tps": None, "ratio": statistics.median(float(r["ratio"]) for r in group),
            "ratio_low": min(float(r["ratio"]) for r in group),
            "ratio_high": max(float(r["ratio"]) for r in group),
            "client_saturated": any(bool(r.get("client_saturated")) for r in group),
            "curve": median_label(len(per_profile[profile])),
            "machines": len({r["machine"] for r in group}),
        }
        for (profile, connect, builtin, step), group in sorted(groups.items())
    ]  # fmt: skip


# The two figures the poolers are drawn by side by side (four-poolers' `side_by_side`): each with the fields
# of its median, lowest and highest pass and of the client count it was read at.
SIDE_BY_SIDE = (
    ("memory", "rss_mib_median", "rss_mib_min", "rss_mib_max", "memory_clients"),
    ("throughput", "tps_median", "tps_min", "tps_max", "tps_clients"),
)
NO_VERSION = "(version not recorded)"


def pooler_side_by_side(poolers: dict, measured: list[str]) -> list[dict]:
    """Each pooler version measured (four-poolers' `side_by_side`), named with its version ("PgBouncer
    1.18.0"), by two figures (`measure`): the resident memory of its whole process tree under load, and its
    throughput at the source article's client count. A dot per machine, named with its server cores, with
    the range of its passes, up to LINES_UP_TO machines; past it, per version and profile (one median never
    mixes a quick run with a full one), the machines' median ranging from the lowest to the highest."""
    rows = poolers.get("side_by_side", [])
    # Each machine's place in the measured order, looked up once per row (a list searched per row grew
    # with the square of the machines).
    order = {machine: index for index, machine in enumerate(_machines(rows, measured))}
    found = []
    for measure, median, low, high, clients in SIDE_BY_SIDE:
        for r in sorted(rows, key=lambda r: (str(r["pooler"]), str(r.get("version")))):
            if str(r["machine"]) not in order or r.get(median) is None:
                continue
            found.append(
                {
                    "measure": measure,
                    "label": pooler_label(str(r["pooler"]), r.get("version") or NO_VERSION),
                    "pooler": str(r["pooler"]),
                    "machine": str(r["machine"]),
                    "curve": machine_with_cores(str(r["machine"]), r.get("server_cores")),
                    "profile": r.get("profile"),
                    "clients": r.get(clients),
                    "machines": 1,
                    "value": r[median],
                    "low": r[low] if r.get(low) is not None else r[median],
                    "high": r[high] if r.get(high) is not None else r[median],
                }
            )
    found.sort(key=lambda r: (r["measure"] != "memory", r["label"], order[r["machine"]]))
    if len(order) <= LINES_UP_TO:
        return [{key: value for key, value in r.items() if key != "machine"} for r in found]
    groups: dict[tuple[str, str, str, str], list[dict]] = {}
    for r in found:
        groups.setdefault((r["measure"], r["label"], r["pooler"], str(r["profile"])), []).append(r)
    return [
        {
            "measure": measure, "label": label, "pooler": pooler, "profile": profile,
            "curve": f"{len(group)} machines' median",
            # The client count where every machine's figure was read at the same one.
            "clients": group[0]["clients"] if len({r["clients"] for r in group}) == 1 else None,
            "machines": len(group),
            "value": statistics.median(float(r["value"]) for r in group),
            "low": min(float(r["value"]) for r in group),
            "high": max(float(r["value"]) for r in group),
        }
        for (measure, label, pooler, profile), group in groups.items()
    ]  # fmt: skip
