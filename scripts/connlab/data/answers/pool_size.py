"""Each machine's one pool size, reconciled from three sources that answer the question in different ways.

The clients-sweep's measured peak (direct connections, the client count with the best median throughput),
the USL fit's optimum N* (a curve through the same sweep: where the fitted curve turns) and the pool sizes
PgBouncer was run with (200 clients through pools of 4 to 100). The sweep is trusted first: it is measured,
not fitted, and it asks the question the pool answers (how many connections the server should work on at
once). The others confirm it or, where they differ by more than REFUTE_FACTOR, the page says why.
"""

from __future__ import annotations

from connlab.data.answers.machines import by_machine
from connlab.data.peak_bracket import Peak

# Sources of a pool size that differ by more than this factor are told apart in words.
REFUTE_FACTOR = 2.0


def pool_sizes(
    measured: list[str], facts: dict[str, dict], machine_cores: dict[str, float | None]
) -> list[dict]:
    """Each measured machine's pool size (those that have one), with its server cores: from each article's
    facts (connlab.data.answers.inputs.answer_facts), each machine's own rows of the three a pool size
    reads, grouped once."""
    peaks = by_machine(facts["too-many-connections"].get("peaks", []))
    fits = by_machine(facts["pool-sizing"].get("fits", []))
    spreads = by_machine(facts["pgbouncer-trade"].get("pool_spread", []))
    return [
        {**found, "server_cores": machine_cores.get(machine)}
        for machine in measured
        if (
            found := pool_size(
                machine,
                {"peaks": peaks.get(machine, [])},
                {"fits": fits.get(machine, [])},
                {"pool_spread": spreads.get(machine, [])},
            )
        )
    ]


def _one(rows: list[dict], **where: object) -> dict | None:
    found = [r for r in rows if all(r.get(k) == v for k, v in where.items())]
    return found[0] if len(found) == 1 else None


def _positive_or_none(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and value > 0 else None


def pool_size(machine: str, sweep: dict, fits: dict, trade: dict) -> dict | None:
    """The machine's recommended pool size and the figures it was reconciled from; None where the machine
    ran none of the experiments that bear on it."""
    peak = _one(sweep.get("peaks", []), machine=machine, workload="mixed")
    fit = _one(
        fits.get("fits", []),
        machine=machine,
        experiment="clients-sweep",
        workload="mixed",
        basis="medians",
        anchored=False,
    )
    pools = [r for r in trade.get("pool_spread", []) if r.get("machine") == machine]
    sources: list[dict] = []
    if peak:
        # Whether the measured neighbours place the peak (within PEAK_RESOLUTION each side); where they do
        # not, the answer says where the peak may lie, in words (connlab.data.peak_bracket).
        placed = Peak(
            float(peak["peak_clients"]),
            _positive_or_none(peak.get("peak_clients_below")),
            _positive_or_none(peak.get("peak_clients_above")),
        )
        sources.append(
            {
                "kind": "sweep",
                "value": float(peak["peak_clients"]),
                "low": float(peak["near_peak_min_clients"]),
                "high": float(peak["near_peak_max_clients"]),
                "per_core": peak["peak_clients_per_core"],
                "server_cores": peak["server_cores"],
                "placed": placed.resolved(),
                "gap": None if placed.resolved() else placed.gap("clients"),
            }
        )
    if fit and fit.get("n_star") is not None:
        sources.append(
            {
                "kind": "usl",
                "value": float(fit["n_star"]),
                "r_squared": fit["r_squared"],
                "warning": fit.get("warning"),
                "measured_peak": fit.get("measured_peak_clients"),
            }
        )
    for row in pools:
        sources.append(
            {
                "kind": "pooler",
                "value": float(row["best_pool_size"]),
                "workload": row["builtin"],
                "clients": row["clients"],
                "worst_over_best": row["worst_over_best"],
            }
        )
    if not sources:
        return None
    chosen = sources[0]  # the order above is the order of trust: measured sweep, fitted curve, pooler runs
    value = chosen["value"]
    for source in sources:
        ratio = (
            max(source["value"], value) / min(source["value"], value) if min(source["value"], value) else None
        )
        source["ratio"] = ratio
        source["far"] = ratio is None or ratio > REFUTE_FACTOR
    return {
        "machine": machine,
        "placed": chosen.get("placed", True),
        "gap": chosen.get("gap"),
        "pool_size": round(value),
        "low": round(chosen.get("low", value)),
        "high": round(chosen.get("high", value)),
        "from": chosen["kind"],
        "sources": sources,
        "disagree": any(source["far"] for source in sources),
    }
