"""Pool sizing across machines: the USL fits of the most thorough machines, their curves for the chart
across machines (beside the published fit's) and the simulator's points per machine.
"""

from __future__ import annotations

from connlab.contract.usl_formula import throughput
from connlab.data.answers.machines import PROFILE_ORDER, by_machine

# Machines an article names one by one (a line, a row, a simulator each); past this many, the median.
PER_MACHINE_UP_TO = 12
# Points of each fitted curve in the chart across machines, spaced geometrically over the measured clients.
CURVE_POINTS = 40


def fit_curve(
    machine: str, fit: dict, top_clients: float, server_cores: float, published: bool
) -> list[dict]:
    """The fitted curve as a share of its own maximum against clients per server core, so that machines of
    every size share the axes (the normalised chart's rows)."""
    params = (float(fit["lambda_tps"]), float(fit["sigma"]), float(fit["kappa"]))
    grid = [top_clients ** (i / (CURVE_POINTS - 1)) for i in range(CURVE_POINTS)]
    model = [throughput(n, *params) for n in grid]
    best = max(model)
    return [
        {
            "machine": machine,
            "published": published,
            "workload": "USL fit, tpcb-like",
            "clients": round(n, 2),
            "clients_per_core": n / server_cores,
            "tps_share": x / best if best else None,
            "tps_share_min": x / best if best else None,
            "tps_share_max": x / best if best else None,
        }
        for n, x in zip(grid, model, strict=True)
    ]


# The workload the simulator draws (pool-sizing's tpcb-like fits).
SIMULATED = "tpcb-like"


def usl_across(sizing: dict, machines_facts: dict, machines_json: list[dict]) -> dict:
    """Pool sizing at article level: the fits of up to PER_MACHINE_UP_TO machines (the most thorough first)
    in the rows the machine view reads (fits, sync_summary, queue_points, folk_formula), their curves for the
    chart across machines with the published fit's, and the simulator's points per machine."""
    simulated = sorted({str(r["machine"]) for r in sizing.get("simulator_points", [])})
    heads = {str(c["machine"]): c for c in machines_facts.get("columns", [])}
    # The most thorough first (the simulator's default): full over quick, then the most measured points of
    # the simulated workload, then the most experiments.
    every_point = by_machine(sizing.get("simulator_points", []))
    points = {
        machine: [r for r in rows if r.get("workload") == SIMULATED] for machine, rows in every_point.items()
    }
    ranked = sorted(
        simulated,
        key=lambda m: (
            -PROFILE_ORDER.get(str(heads.get(m, {}).get("profile")), -1),
            -len(points.get(m, [])),
            -(heads.get(m, {}).get("experiments") or 0),
            m,
        ),
    )
    shown = ranked[:PER_MACHINE_UP_TO]
    keep = set(shown)

    def rows(name: str) -> list[dict]:
        return [r for r in sizing.get(name, []) if str(r.get("machine")) in keep]

    free = [
        r
        for r in rows("fits")
        if r["workload"] == "tpcb-like" and r["basis"] == "medians" and not r["anchored"]
    ]
    curves = []
    for fit in free:
        machine = str(fit["machine"])
        points = [float(p["clients"]) for p in every_point.get(machine, [])]
        cores = float(heads.get(machine, {}).get("server_cores") or 1)
        curves += fit_curve(machine, fit, max(points), cores, published=False)
    cores_of = {str(m["id"]): m.get("server_cores") for m in machines_json}
    for fit in sizing.get("published_fits", []):
        machine = str(fit["machine"])
        top = max(
            (
                float(p["clients"])
                for p in sizing.get("published_points", [])
                if p["machine"] == machine and p.get("clients") is not None
            ),
            default=0.0,
        )
        if top > 1 and cores_of.get(machine):
            curves += fit_curve(machine, fit, top, float(cores_of[machine]), published=True)
    summary = [
        {
            **{
                k: fit.get(k)
                for k in ("machine", "lambda_tps", "sigma", "kappa", "r_squared", "n_star", "warning")
            },
            "peak": fit.get("measured_peak_clients"),
            "server_cores": heads.get(str(fit["machine"]), {}).get("server_cores"),
            "profile": heads.get(str(fit["machine"]), {}).get("profile"),
            "n_star_over_peak": fit["n_star"] / fit["measured_peak_clients"]
            if fit.get("n_star") is not None and fit.get("measured_peak_clients")
            else None,
        }
        for fit in sorted(free, key=lambda f: shown.index(str(f["machine"])))
    ]
    return {
        "machines": shown,
        "machines_total": len(simulated),
        "summary": summary,
        "curves": curves,
        "simulator_points": rows("simulator_points"),
        "fits": rows("fits"),
        "sync_summary": rows("sync_summary"),
        "queue_points": rows("queue_points"),
        "folk_formula": rows("folk_formula"),
    }
