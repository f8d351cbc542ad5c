"""Each article's short answer and each machine's one pool size, computed from the facts and the verdicts.

An article opens with its answer to its title question: a few of its claims (HEADLINES), each with the value
on every measured machine (median, range, machines counted and named), the seed's own figure beside it and
how the verdicts fell. Its findings (where a seed's statement held here and where it did not) and its
verdict table read the same records, so the page only prints what this module wrote.

A machine's pool size is reconciled from three sources that answer the question in different ways: the
clients-sweep's measured peak (direct connections, the client count with the best median throughput), the
USL fit's optimum N* (a curve through the same sweep: where the fitted curve turns) and the pool sizes
PgBouncer was run with (200 clients through pools of 4 to 100). The sweep is trusted first: it is measured,
not fitted, and it asks the question the pool answers (how many connections the server should work on at
once). The others confirm it or, where they differ by more than REFUTE_FACTOR, the page says why.

Writes build/data/answers/<slug>.json (and `pool-sizes.json`); the renderer hands them to the templates.
Relies on the facts files (connlab.contract.facts_files), the claims files (connlab.data.claims) and the
Machines page's facts (its `columns` and `measured`).

Quick runs indicate, full runs decide: a verdict the claims marked `indicative` (connlab.data.claims.
is_indicative: it reads quick- or tiny-profile windows) is shown and listed apart, never counted in a
headline's figure, its verdict counts or the findings' headings. A median across machines never mixes
profiles: it is the full-profile machines' median, or, where no machine ran the claim's experiments in the
full profile, the indicative machines' median, flagged `indicative` so the page says so in words.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable
from pathlib import Path

import orjson

from connlab.contract.cache import canonical_bytes, loads_fast, read_json, remember_written
from connlab.contract.experiment import load_experiment
from connlab.contract.facts_files import facts_path
from connlab.contract.files import write_bytes_if_changed, write_bytes_whole
from connlab.contract.machine_schema import NOT_AVAILABLE
from connlab.contract.names import ANSWERS_SUBDIR, MACHINES_JSON, POOL_SIZES_FILE, VERDICT_COLUMNS_UP_TO
from connlab.contract.poolers.registry import VERSIONED, pooler_label
from connlab.data.chart_rows import (
    LATENCY_WORKLOAD,
    connection_cost,
    latency_across,
    pooler_memory,
    pooler_side_by_side,
    pooler_throughput,
    trade_curve,
)
from connlab.data.disagreements import disagreements
from connlab.data.peak_bracket import Peak

# Machines named in a sentence; past this many, the count and the median stand for the rest.
NAMED_UP_TO = 5
# Sources of a pool size that differ by more than this factor are told apart in words.
REFUTE_FACTOR = 2.0
MEASURED = ("holds", "does not hold", "inconclusive")
VERDICT_ORDER = ("holds", "does not hold", "inconclusive", "cannot be evaluated")

# The claims that answer each article's title question, with the words of the question each one answers
# (each with its unit and scope: per process or the whole pooler, per server core or in all) and the poolers
# whose figure it is, whose versions the short answer names. Words only: every figure comes from the claims'
# rows, every version from the verdicts' conditions.
HEADLINES: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {
    "too-many-connections": [
        ("peak-four-per-core", "Throughput peaks at, in clients per server core", ()),
        ("gentle-decline", "Share of the peak throughput left at 100 clients per server core", ()),
        (
            "latency-multiplies",
            "Mean latency at 100 clients per server core, as a multiple of the peak's",
            (),
        ),
        (
            "connect-costs-59-queries",
            "Time per transaction on a new SCRAM connection, as a multiple of on a held one",
            (),
        ),
    ],
    "pool-sizing": [
        (
            "folk-formula-too-low",
            "The measured optimum in clients, as a multiple of (server cores × 2) + 1",
            (),
        ),
        ("usl-optimum-near-peak", "The USL's fitted optimum N*, as a multiple of the measured peak", ()),
        ("usl-fits-well", "How well the USL fits the read-write curve (R²)", ()),
        (
            "small-pool-queues",
            "Throughput through a PgBouncer pool of one per server core, as a share of four per core's",
            ("pgbouncer",),
        ),
    ],
    "pgbouncer-trade": [
        (
            "churn-speedup-2-per-core",
            "PgBouncer's speed-up for a new SCRAM connection per transaction, throughput through it ÷ direct",
            ("pgbouncer",),
        ),
        (
            "read-write-collapses-at-50-per-core",
            "Direct read-write throughput at 50 clients per core ÷ peak",
            (),
        ),
        (
            "crowd-pooled-read-write",
            "Throughput of held connections through PgBouncer ÷ direct, read-write crowd",
            ("pgbouncer",),
        ),
        (
            "pooler-near-a-core",
            "PgBouncer's own CPU at 25 select-only clients per server core, in cores",
            ("pgbouncer",),
        ),
    ],
    "four-poolers": [
        (
            "pgpool-memory-before-query",
            "PgPool-II's resident memory before the first query, per process (its tree's sum ÷ its "
            "processes), MiB",
            ("pgpool",),
        ),
        (
            "pgpool-faster-than-pgbouncer-at-10",
            "PgPool-II's throughput ÷ PgBouncer's, 10 select-only clients",
            ("pgpool", "pgbouncer"),
        ),
        (
            "pgbouncer-falls-with-churn",
            "PgBouncer's throughput as connection churn rises, higher ÷ lower",
            ("pgbouncer",),
        ),
        (
            "prepared-fails-without-tracking",
            "Share of -M prepared windows that finished through PgBouncer in transaction mode, its default "
            "config",
            ("pgbouncer",),
        ),
    ],
}
# The articles whose short answer ends with each machine's pool size.
POOL_SIZE_ARTICLES = ("too-many-connections", "pool-sizing")


def spread(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {"median": statistics.median(values), "low": min(values), "high": max(values)}


def by_machine(rows: list[dict]) -> dict[object, list[dict]]:
    """Rows grouped by their machine, in order: a thousand machines each looking through every machine's rows
    made writing the answers quadratic (most of a one-machine-added aggregation at a thousand)."""
    grouped: dict[object, list[dict]] = {}
    for row in rows:
        grouped.setdefault(row.get("machine"), []).append(row)
    return grouped


def named(machines: list[str], cores: dict[str, float | None] | None = None) -> dict:
    """Up to NAMED_UP_TO names, and how many more; with `cores`, each named machine's server cores (the
    server's CPU budget in its runs), in the names' order: a page names a machine with them, since its name
    alone hides them (amd-epyc-2c-24g ran its server on 1 core)."""
    found: dict = {
        "names": machines[:NAMED_UP_TO],
        "more": max(0, len(machines) - NAMED_UP_TO),
        "count": len(machines),
    }
    if cores is not None:
        found["cores"] = [cores.get(m) for m in found["names"]]
    return found


def cell_cores(cells: list[dict], machine_cores: dict[str, float | None] | None) -> dict[str, float | None]:
    """Each cell's machine's server cores: the machine's own (the Machines page's column, as the verdict
    table heads it), else those its verdict's conditions give (the most any of the claim's experiments gave
    the server: a core-budget run's larger budget, so second)."""
    own = machine_cores or {}
    return {
        c["machine"]: own.get(c["machine"]) or (c.get("conditions") or {}).get("server_cores") for c in cells
    }


def verdict_groups(cells: list[dict], cores: dict[str, float | None] | None = None) -> dict[str, dict]:
    """The cells' machines per verdict, in VERDICT_ORDER, each named up to NAMED_UP_TO (with its server cores
    where `cores` gives them)."""
    grouped: dict[str, list[str]] = {}
    for c in cells:
        grouped.setdefault(c["verdict"], []).append(c["machine"])
    return {verdict: named(grouped[verdict], cores) for verdict in VERDICT_ORDER if verdict in grouped}


def profile_words(cells: list[dict]) -> str | None:
    """'quick', or 'tiny and quick': the profiles the indicative cells' windows ran in."""
    found = sorted(
        {str((c.get("conditions") or {}).get("profile") or "quick") for c in cells},
        key=lambda p: PROFILE_ORDER.get(p, -1),
    )
    return " and ".join(found) if found else None


def claim_row(
    claim: dict, measured: list[str], source: str | None, machine_cores: dict[str, float | None] | None = None
) -> dict:
    """One claim across the measured machines: each one's cell, the median and range of their values, the
    machines per verdict, and the seed's own figure (its published set's value, shown, never judged). The
    figure and the verdict counts are the deciding (full-profile) machines'; the indicative ones are grouped
    apart (indicative_verdicts). Where no machine decides, the figure is the indicative machines' median
    and the row says so (indicative: true). Every machine named is named with its server cores (machine_cores:
    the Machines page's; else its cell's conditions)."""
    by_machine = {v["machine"]: v for v in claim.get("verdicts", [])}
    # A machine's verdict is its cell as the claims file holds it (it names its machine), not a copy: a
    # hundred claims over a thousand machines were a hundred thousand copies on every build.
    cells = [by_machine.get(m) or {"machine": m, "verdict": "not measured", "value": None} for m in measured]
    deciding = [c for c in cells if not c.get("indicative")]
    indicative = [c for c in cells if c.get("indicative")]
    decided = [c for c in deciding if c["verdict"] in MEASURED and c.get("value") is not None]
    indicated = [c for c in indicative if c["verdict"] in MEASURED and c.get("value") is not None]
    # One median never mixes profiles: the full-profile machines', else the indicative ones', said so.
    valued = decided or indicated
    cores = cell_cores(cells, machine_cores)
    verdicts = verdict_groups(deciding, cores)
    indicative_verdicts = verdict_groups(indicative, cores)
    seed = by_machine.get(source) if source else None
    return {
        "id": claim["id"],
        "claim": claim["claim"],
        "reading": claim["reading"],
        "seed_text": claim["seed"],
        "value_label": claim["value_label"],
        "threshold": claim["threshold"],
        "seed_value": seed.get("value") if seed and seed.get("verdict") in MEASURED else None,
        "cells": cells,
        "spread": spread([float(c["value"]) for c in valued]),
        "machines": named([c["machine"] for c in valued], cores),
        # Where pgbench's saturated core left only a bound: what it decides, in the verdict's own words.
        "bounded": [
            {
                "machine": c["machine"],
                "server_cores": cores.get(c["machine"]),
                "reason": c["reason"],
                "indicative": bool(c.get("indicative")),
            }
            for c in cells
            if c["verdict"] == "cannot be evaluated" and c.get("bound") and c.get("reason")
        ][:NAMED_UP_TO],
        "verdicts": verdicts,
        # The quick- or tiny-profile machines' verdicts: shown apart, never counted with the deciding ones.
        "indicative_verdicts": indicative_verdicts,
        "indicative_count": len(indicative),
        "indicative_profile": profile_words(indicative),
        # Whether the figure rests on indicative machines only (no full-profile machine has a value).
        "indicative": bool(valued) and not decided,
        # What a table past VERDICT_COLUMNS_UP_TO machines says of the cells it no longer shows.
        "single_readings": sum(c.get("readings") == 1 for c in cells),
    }


def as_written(value: object, cells: bool) -> object:
    """The rows as the answers file holds them: without cells (without: each claim's verdict on every
    machine, which the claims file has already) where the page shows none, past VERDICT_COLUMNS_UP_TO
    machines. They were nine tenths of the answers at a thousand machines, written, compared and parsed
    again on every build."""
    if cells or not isinstance(value, list | dict):
        return value
    if isinstance(value, list):
        return [as_written(item, cells) for item in value]
    return {key: as_written(item, cells) for key, item in value.items() if key != "cells"}


def short_answer(
    slug: str,
    rows: dict[str, dict],
    machine_versions: dict[str, dict[str, str]] | None = None,
    source: str | None = None,
    machine_cores: dict[str, float | None] | None = None,
) -> list[dict]:
    """The headline claims' rows, each with the question's words, in the article's order; a claim no
    machine could answer is left out (the findings say which could not be evaluated), unless some machine
    bounded it (pgbench saturated its core): the reader is told what the bound says. A pooler's figure
    names the versions measured (`versions`, one entry per version with its machines and their own figure)
    and the version the seed published with (`seed_versions`). machine_versions: each machine's pooler
    versions by kind (machine.yaml's, where a verdict's conditions do not give them; the seed's set's own);
    machine_cores: each machine's server cores, as claim_row takes them."""
    versions_of = machine_versions or {}
    bullets = []
    for claim_id, question, poolers in HEADLINES.get(slug, []):
        row = rows.get(claim_id)
        if row is None or (row["spread"] is None and not row.get("bounded")):
            continue
        seed_poolers = versions_of.get(source or "", {})
        bullets.append(
            {
                **row,
                "question": question,
                "poolers": list(poolers),
                "versions": pooler_versions(row, poolers, versions_of, machine_cores),
                "seed_versions": [
                    pooler_label(kind, seed_poolers[kind]) for kind in poolers if kind in seed_poolers
                ],
            }
        )
    return bullets


def pooler_versions(
    row: dict,
    poolers: tuple[str, ...],
    machine_versions: dict[str, dict[str, str]] | None = None,
    machine_cores: dict[str, float | None] | None = None,
) -> list[dict]:
    """The versions of `poolers` a claim's measured machines ran (their verdicts' conditions), one entry per
    version (several poolers: per combination, "PgPool-II 4.3.5 and PgBouncer 1.18.0"), each with its
    machines (those counted in the figure, and those that bounded it) and the median and range of their
    figures: where machines ran different versions, each figure is told apart by the version it is from.
    A verdict's conditions give its versions; machine_versions, where they do not. None where the claim is
    about no pooler."""
    if not poolers:
        return []
    counted = [
        c
        for c in row.get("cells", [])
        if bool(c.get("indicative")) == bool(row.get("indicative"))
        and (c["verdict"] in MEASURED or (c["verdict"] == "cannot be evaluated" and c.get("bound")))
    ]
    cores = cell_cores(counted, machine_cores)
    grouped: dict[str, list[dict]] = {}
    for c in counted:
        measured_versions = {
            **(machine_versions or {}).get(c["machine"], {}),
            **((c.get("conditions") or {}).get("poolers") or {}),
        }
        label = " and ".join(
            pooler_label(kind, measured_versions.get(kind) or "(version not recorded)") for kind in poolers
        )
        grouped.setdefault(label, []).append(c)
    return [
        {
            "label": label,
            "machines": named([c["machine"] for c in found], cores),
            "spread": spread(
                [float(c["value"]) for c in found if c["verdict"] in MEASURED and c.get("value") is not None]
            ),
        }
        for label, found in sorted(grouped.items())
    ]


def findings(rows: list[dict], machine_cores: dict[str, float | None] | None = None) -> dict[str, list[dict]]:
    """The seed's own statements by outcome: where they did not hold on some deciding (full-profile) machine
    (with both figures, each machine with its server cores), where they held on every deciding machine that
    could judge them, and those only indicative machines judged (quick or tiny runs: listed apart, under no
    heading that decides)."""
    failed, held, indicative = [], [], []
    for row in rows:
        if row["reading"] != "seed" or row["spread"] is None:
            continue
        if row.get("indicative"):
            indicative.append(row)
            continue
        deciding = [c for c in row["cells"] if not c.get("indicative")]
        against = [c for c in deciding if c["verdict"] in ("does not hold", "inconclusive")]
        if any(c["verdict"] == "does not hold" for c in against):
            # Up to NAMED_UP_TO machines named, each with its figure; the rest counted, with the median and
            # range of their figures: a sentence that named every machine grew to half a megabyte of page
            # at a thousand machines.
            # Copies of the named cells with their server cores: the cells are the claims file's own.
            cores = cell_cores(against[:NAMED_UP_TO], machine_cores)
            failed.append(
                {
                    **row,
                    "against": [{**c, "server_cores": cores[c["machine"]]} for c in against[:NAMED_UP_TO]],
                    "against_more": more_cells(against[NAMED_UP_TO:]),
                }
            )
        elif all(c["verdict"] == "holds" for c in deciding if c["verdict"] in MEASURED):
            held.append(row)
    return {"failed": failed, "held": held, "indicative": indicative}


def more_cells(cells: list[dict]) -> dict | None:
    """The machines past those a sentence names: how many, the median and range of their figures, and how
    many had each verdict."""
    if not cells:
        return None
    return {
        "count": len(cells),
        "spread": spread([float(c["value"]) for c in cells if c.get("value") is not None]),
        "verdicts": {
            verdict: count
            for verdict in VERDICT_ORDER
            if (count := sum(c["verdict"] == verdict for c in cells))
        },
    }


def explained(rows: list[dict], machine_cores: dict[str, float | None] | None = None) -> list[dict]:
    """Where machines' verdicts on a claim differ, what differs between them (connlab.data.disagreements),
    each verdict's machines named up to NAMED_UP_TO, with their server cores where given."""
    return [
        {**found, "groups": [{**g, "machines": named(g["machines"], machine_cores)} for g in found["groups"]]}
        for found in disagreements(rows)
    ]


def measured_dates(machines_facts: dict, experiments: list[str]) -> dict | None:
    """When the article's data was measured: the first and last window of the experiments its claims read."""
    windows = [
        record
        for record in machines_facts.get("measured", [])
        if not experiments or record["experiment"] in experiments
    ]
    firsts = [str(r["first_window"]) for r in windows if r.get("first_window")]
    lasts = [str(r["last_window"]) for r in windows if r.get("last_window")]
    if not firsts or not lasts:
        return None
    return {"first": min(firsts)[:10], "last": max(lasts)[:10]}


PROFILE_ORDER = {"tiny": 0, "quick": 1, "full": 2}


def columns(machines_facts: dict, measured: list[str], experiments: list[str]) -> list[dict]:
    """Each measured machine's heading in the article's verdict table: its server cores, the least
    thorough profile among the experiments the article's claims read (a verdict is only as firm as that),
    and the day its last window of them was measured."""
    records = by_machine(machines_facts.get("measured", []))
    heads = {str(c["machine"]): c for c in machines_facts.get("columns", [])}
    result = []
    for machine in measured:
        own = [r for r in records.get(machine, []) if not experiments or r["experiment"] in experiments]
        profiles = [str(r["profile"]) for r in own]
        profile = (
            min(profiles, key=lambda p: PROFILE_ORDER.get(p, -1))
            if profiles
            else heads.get(machine, {}).get("profile")
        )
        lasts = [str(r["last_window"]) for r in own if r.get("last_window")]
        result.append(
            {
                "machine": machine,
                "server_cores": heads.get(machine, {}).get("server_cores"),
                "profile": profile,
                "indicative": profile != "full",
                "date": max(lasts)[:10] if lasts else heads.get(machine, {}).get("date"),
            }
        )
    return result


def coverage(
    machines_facts: dict,
    measured: list[str],
    experiments: list[str],
    poolers: list[dict],
    machine_cores: dict[str, float | None] | None = None,
) -> dict:
    """Which measured machines ran the article's experiments and which did not, and each pooler's machines
    where it ran (by version: which version was measured where) and where it was not available, beside the
    version the seed ran (the four-poolers comparison says so on its first screen). Machines are named with
    their server cores where machine_cores gives them."""
    # Sets to look names up in: lists searched once per row grew with the square of the machine count.
    among, wanted = set(measured), set(experiments)
    ran_set = {
        str(r["machine"])
        for r in machines_facts.get("measured", [])
        if r["experiment"] in wanted and str(r["machine"]) in among
    }
    ran = sorted(ran_set)
    by_pooler: dict[str, dict[str, list[str]]] = {}
    versions: dict[str, dict[str, list[str]]] = {}
    seed_versions: dict[str, str] = {}
    for row in poolers:
        if str(row["machine"]) not in ran_set:
            continue
        pooler = str(row["pooler"])
        entry = by_pooler.setdefault(pooler, {"available": [], "missing": []})
        entry["available" if row.get("available") else "missing"].append(str(row["machine"]))
        if row.get("available"):
            versions.setdefault(pooler, {}).setdefault(str(row.get("version")), []).append(
                str(row["machine"])
            )
        if row.get("seed_version"):
            seed_versions[pooler] = str(row["seed_version"])
    # The builds the rows of these experiments ran, beside the one machine.yaml records (a second build of a
    # pooler, staged for a versions experiment, is on no PATH).
    # A row's target is the spec's pooler name ('pgbouncer-1.25'), its kind the spec's.
    kind_of = {
        pooler.name or pooler.kind: pooler.kind for name in wanted for pooler in load_experiment(name).poolers
    }
    for r in machines_facts.get("measured", []):
        if r["experiment"] not in wanted or str(r["machine"]) not in ran_set:
            continue
        for built in r.get("pooler_versions") or []:
            target, _, version = str(built).partition(" ")
            pooler = kind_of.get(target, target)
            if pooler not in by_pooler or not version:
                continue
            found = versions.setdefault(pooler, {}).setdefault(version, [])
            if str(r["machine"]) not in found:
                found.append(str(r["machine"]))
    did_not_run = [m for m in measured if m not in ran_set]
    return {
        "ran": ran,
        "did_not_run": did_not_run,
        # As a sentence names them: up to NAMED_UP_TO, and how many more (a thousand links were a sixth of
        # an article at a thousand machines).
        "ran_named": named(ran, machine_cores),
        "did_not_run_named": named(did_not_run, machine_cores),
        "poolers": [
            {
                "pooler": name,
                "label": pooler_label(name),
                **entry,
                "versions": [
                    {"label": pooler_label(name, version), "machines": named(found, machine_cores)}
                    for version, found in sorted(versions.get(name, {}).items())
                ],
                "seed_version": pooler_label(name, seed_versions[name]) if name in seed_versions else None,
            }
            for name, entry in sorted(by_pooler.items())
        ],
    }


# Machines an article names one by one (a line, a row, a simulator each); past this many, the median.
PER_MACHINE_UP_TO = 12
# Points of each fitted curve in the chart across machines, spaced geometrically over the measured clients.
CURVE_POINTS = 40


def _usl(n: float, lambda_: float, sigma: float, kappa: float) -> float:
    return lambda_ * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def fit_curve(
    machine: str, fit: dict, top_clients: float, server_cores: float, published: bool
) -> list[dict]:
    """The fitted curve as a share of its own maximum against clients per server core, so that machines of
    every size share the axes (the normalised chart's rows)."""
    params = (float(fit["lambda_tps"]), float(fit["sigma"]), float(fit["kappa"]))
    grid = [top_clients ** (i / (CURVE_POINTS - 1)) for i in range(CURVE_POINTS)]
    model = [_usl(n, *params) for n in grid]
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


# -- one pool size per machine ------------------------------------------------------------------------


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


# -- writing ------------------------------------------------------------------------------------------


def raw_files(results_dir: Path | None, machine: str) -> list[str]:
    """The machine's raw files (machine.yaml and every run's CSV), relative to its results folder: its page
    links them as downloads."""
    folder = results_dir / machine if results_dir else None
    if folder is None or not folder.is_dir():
        return []
    # One listing of the folder and of each folder in it (a glob per pattern and a Path per file cost a
    # tenth of a second per build at a thousand machines), in the order the paths sort in.
    top, runs = _listing(str(folder))
    found = [("machine.yaml",)] if "machine.yaml" in top else []
    found += sorted((name,) for name in top if name.endswith(".csv"))
    for sub in runs:
        names = _listing(os.path.join(folder, sub))[0]
        found += sorted((sub, name) for name in names if name.endswith(".csv"))
    return ["/".join(parts) for parts in found]


def _listing(folder: str) -> tuple[set[str], list[str]]:
    """The files in a folder and its folders (links followed, as a glob follows them), folders sorted."""
    files: set[str] = set()
    folders: list[str] = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_file():
                files.add(entry.name)
            elif entry.is_dir():
                folders.append(entry.name)
    return files, sorted(folders)


def write_answers(
    data_dir: Path,
    facts_dir: Path,
    claims_dir: Path,
    measured: list[str],
    results_dir: Path | None = None,
    judged: dict[str, dict] | None = None,
) -> list[Path]:
    """Every article's answers and every machine's pool size, from the facts and claims just written.
    judged: each article's claims as they were written, by slug, where the caller has them (else read from
    claims_dir)."""
    out_dir = data_dir / ANSWERS_SUBDIR
    out_dir.mkdir(parents=True, exist_ok=True)
    measured = sorted(measured)
    machines_facts = _read(facts_dir / "machines.json")
    machines_json = _read(data_dir / MACHINES_JSON) if (data_dir / MACHINES_JSON).is_file() else []
    facts = answer_facts(facts_dir, data_dir / ANSWER_INPUTS_FILE)
    # Each machine's server cores (its server's CPU budget, the Machines page's column): a page names a
    # machine with them.
    machine_cores = {str(c["machine"]): c.get("server_cores") for c in machines_facts.get("columns", [])}
    # Each machine's pooler versions as machine.yaml records them (those it ran): a published set's are the
    # versions the seed's figures come from.
    machine_versions = {
        str(m["id"]): {
            kind: str(m[f"{kind}_version"])
            for kind in VERSIONED
            if m.get(f"{kind}_version") and str(m[f"{kind}_version"]) != NOT_AVAILABLE
        }
        for m in machines_json
    }
    # Each machine's own rows of the three facts a pool size reads, grouped once.
    peaks = by_machine(facts["too-many-connections"].get("peaks", []))
    fits = by_machine(facts["pool-sizing"].get("fits", []))
    spreads = by_machine(facts["pgbouncer-trade"].get("pool_spread", []))
    pools = [
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
    usl = usl_across(facts["pool-sizing"], machines_facts, machines_json)
    written = []
    if judged is None:
        judged = {path.stem: _read(path) for path in sorted(claims_dir.glob("*.json"))}
    for slug, claims in sorted(judged.items()):
        source = claims.get("source")
        per_machine = [c for c in claims.get("claims", []) if c.get("scope", "machine") == "machine"]
        experiments = claims.get("experiments", [])
        covered = coverage(
            machines_facts,
            measured,
            experiments,
            facts[slug].get("poolers", []) if slug in facts else [],
            machine_cores,
        )
        # A machine that ran none of the article's experiments has no column: a line under the table names it.
        ran = covered["ran"] if experiments else measured
        rows = [claim_row(claim, ran, source, machine_cores) for claim in per_machine]
        by_id = {row["id"]: row for row in rows}
        cells = len(ran) <= VERDICT_COLUMNS_UP_TO
        payload = {
            "measured": ran,
            "short_answer": as_written(
                short_answer(slug, by_id, machine_versions, source, machine_cores), cells
            ),
            "findings": as_written(findings(rows, machine_cores), cells),
            "disagreements": explained(rows, machine_cores),
            "rows": as_written(rows, cells),
            "dates": measured_dates(machines_facts, experiments),
            "pool_sizes": pools if slug in POOL_SIZE_ARTICLES else [],
            "coverage": covered,
            "seed_raw": raw_files(results_dir, source) if source else [],
            "columns": columns(machines_facts, ran, experiments),
            "simulator_default": usl["machines"][0] if usl["machines"] else None,
            "latency": latency_across(facts["too-many-connections"], ran)
            if slug == "too-many-connections"
            else [],
            "pooler_throughput": pooler_throughput(facts["four-poolers"], ran)
            if slug == "four-poolers"
            else [],
            "pooler_memory": pooler_memory(facts["four-poolers"], ran) if slug == "four-poolers" else [],
            "pooler_side_by_side": pooler_side_by_side(facts["four-poolers"], ran)
            if slug == "four-poolers"
            else [],
            "connection_cost": connection_cost(facts["pgbouncer-trade"], ran)
            if slug == "pgbouncer-trade"
            else [],
            "trade_curve": trade_curve(facts["pgbouncer-trade"], ran) if slug == "pgbouncer-trade" else [],
            "usl": usl if slug == "pool-sizing" else {},
        }
        target = out_dir / f"{slug}.json"
        if write_bytes_if_changed(target, canonical_bytes(payload)):
            written.append(target)
        remember_written(target, payload)
    # Each machine page's lead: its pool size (where it measured one) and when its data was measured.
    leads = {}
    measured_by_machine = by_machine(machines_facts.get("measured", []))
    for machine in measured:
        own = {"measured": measured_by_machine.get(machine, [])}
        leads[machine] = {
            "machine": machine,
            "dates": measured_dates(own, []),
            "pool_size": None,
            "raw": raw_files(results_dir, machine),
        }
    for found in pools:
        leads[found["machine"]] = {**leads.get(found["machine"], {}), **found}
    # The published sets' raw files too: each article links the set it compares with.
    for published in sorted(str(m["id"]) for m in machines_json if m.get("published")):
        leads[published] = {"machine": published, "dates": None, "pool_size": None}
        leads[published]["raw"] = raw_files(results_dir, published)
    target = out_dir / POOL_SIZES_FILE
    if write_bytes_if_changed(target, canonical_bytes(leads)):
        written.append(target)
    remember_written(target, leads)
    return written


def _read(path: Path) -> dict:
    return loads_fast(path.read_bytes()) if path.is_file() else {}  # type: ignore[return-value]


# The facts of each article the answers read. Of each measured machine's own file (connlab.contract.
# facts_files) only these are kept between builds, in ANSWER_INPUTS_FILE under the file's status, so that
# adding a machine parses that machine's files rather than a thousand machines' hundred megabytes again. A
# fact the answers read that is not listed here is an error (ListedFacts), not an empty list.
ANSWER_FACTS: dict[str, frozenset[str]] = {
    "too-many-connections": frozenset({"peaks", "points", "poolers"}),
    "pool-sizing": frozenset(
        {
            "fits",
            "simulator_points",
            "sync_summary",
            "queue_points",
            "folk_formula",
            "published_fits",
            "published_points",
            "poolers",
        }
    ),
    "pgbouncer-trade": frozenset({"pool_spread", "churn", "poolers", "published", "trade_curve"}),
    "four-poolers": frozenset({"throughput", "memory", "poolers", "side_by_side"}),
}
ANSWER_INPUTS_FILE = "answer-inputs.json"
# Of a listed fact, the rows the answers read, where they read some only: too-many-connections' points of
# the workload its latency chart draws (chart_rows.latency_across) were half of ANSWER_INPUTS_FILE's 40 MB
# at a thousand machines, read and written whole on every build.
ANSWER_ROWS: dict[tuple[str, str], Callable[[dict], bool]] = {
    ("too-many-connections", "points"): lambda row: row.get("workload") == LATENCY_WORKLOAD,
}


def _answer_rows(slug: str, name: str, rows: list) -> list:
    read = ANSWER_ROWS.get((slug, name))
    return list(rows) if read is None else [row for row in rows if read(row)]


class ListedFacts(dict):
    """An article's facts as the answers see them: only those ANSWER_FACTS lists, and asking for another is
    an error that names it."""

    def __init__(self, slug: str, facts: dict[str, list]) -> None:
        super().__init__(facts)
        self.slug = slug

    def _check(self, name: object) -> None:
        if name not in ANSWER_FACTS[self.slug]:
            raise KeyError(
                f"the answers read {self.slug}'s fact {name}, which answers.ANSWER_FACTS does not list"
            )

    def get(self, name: str, default: object = None) -> object:
        self._check(name)
        return super().get(name, default)

    def __getitem__(self, name: str) -> list:
        self._check(name)
        return super().__getitem__(name)


def answer_facts(facts_dir: Path, cache_file: Path) -> dict[str, ListedFacts]:
    """Each article's facts the answers read, whole (its own file with every measured machine's rows added
    back, as read_facts gives them; of a fact ANSWER_ROWS names, the rows it keeps); a machine's file whose
    status is unchanged since it was read is taken from cache_file."""
    cached = read_json(cache_file)
    known: dict[str, list] = cached if isinstance(cached, dict) else {}
    entries: dict[str, list] = {}
    found: dict[str, ListedFacts] = {}
    for slug, names in ANSWER_FACTS.items():
        if not facts_path(facts_dir, slug).is_file():
            found[slug] = ListedFacts(slug, {})
            continue
        whole: dict[str, list] = loads_fast(facts_path(facts_dir, slug).read_bytes())  # type: ignore[assignment]
        facts = {name: _answer_rows(slug, name, rows) for name, rows in whole.items() if name in names}
        folder = facts_dir / slug
        for file_name in sorted(os.listdir(folder)) if folder.is_dir() else []:
            if not file_name.endswith(".json"):
                continue
            path = os.path.join(folder, file_name)
            status = os.stat(path)
            signature = [status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino]
            key = f"{slug}/{file_name}"
            entry = known.get(key)
            if not (isinstance(entry, list) and len(entry) == 2 and entry[0] == signature):
                with open(path, "rb") as machine_file:
                    own: dict[str, list] = loads_fast(machine_file.read())  # type: ignore[assignment]
                entry = [
                    signature,
                    {name: _answer_rows(slug, name, rows) for name, rows in own.items() if name in names},
                ]
            entries[key] = entry
            for name, rows in entry[1].items():
                facts.setdefault(name, []).extend(rows)
        found[slug] = ListedFacts(slug, facts)
    if entries.keys() != known.keys() or any(entries[key] is not known[key] for key in entries):
        write_bytes_whole(cache_file, orjson.dumps(entries))
    return found
