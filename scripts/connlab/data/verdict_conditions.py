"""What a machine's verdict on a claim was measured under: the profile, the host's steal and CPU pressure in
the windows of the claim's experiments, the PostgreSQL and pooler versions, the server cores, and how the
windows were run as their rows say (passes, window lengths, client grid, pool sizes, CPU accounting).

Where machines' verdicts on one claim differ, the article says which of these differ between them
(connlab.data.disagreements); each verdict carries them as `conditions`, computed here from main.measured
(per machine and experiment), main.machines and main.pooler_versions. pgbench's load at the claim's own
points is the verdict's `client_saturated` and `client_cpu`, which the claim's query returns.
"""

from __future__ import annotations

import duckdb

from connlab.contract.experiment import load_experiment

# The order of thoroughness: a verdict is only as firm as the least thorough profile it reads.
PROFILE_ORDER = {"tiny": 0, "quick": 1, "full": 2}


def machine_facts(con: duckdb.DuckDBPyConnection) -> dict[str, dict]:
    """Each machine's PostgreSQL version, server cores, most thorough profile, measured pooler versions and
    the calibration it records, if any (none where the database lacks the main tables: a claim over tables of
    its own)."""
    facts: dict[str, dict] = {}
    try:
        for machine, version, cores, profile, calibration in con.execute(
            "SELECT id, postgres_version, server_cores, profile, calibration_tps FROM main.machines"
        ).fetchall():
            facts[str(machine)] = {
                "postgres_version": version,
                "server_cores": cores,
                "profile": profile,
                "poolers": {},
                # Whether machine.yaml records a calibration: without one, nothing checked that the
                # folder's runs came from one machine (connlab.contract.provenance).
                "calibrated": calibration is not None,
                "calibration_tps": calibration,
            }
        rows = con.execute(
            "SELECT machine, pooler, version FROM main.pooler_versions WHERE available"
        ).fetchall()
    except duckdb.CatalogException:
        return facts
    for machine, pooler, version in rows:
        facts.setdefault(
            str(machine), {"postgres_version": None, "server_cores": None, "profile": None, "poolers": {}}
        )
        facts[str(machine)]["poolers"][str(pooler)] = str(version)
    return facts


def pooler_kinds(experiments: list[str]) -> list[str]:
    """The poolers the experiments run: only their versions bear on a claim over them."""
    return sorted({pooler.kind for name in experiments for pooler in load_experiment(name).poolers})


def profile_passes(experiment: str, profile: str | None) -> int | None:
    """How many passes the experiment's profile runs (None for a profile its spec does not have)."""
    found = load_experiment(experiment).profiles.get(profile) if profile else None  # type: ignore[call-overload]
    return None if found is None else found.passes


def short_version(version: object) -> str | None:
    """'15.18' of '15.18 (Debian 15.18-0+deb12u1)': the packager's suffix changes nothing measured."""
    return None if version is None else str(version).split(" ", 1)[0]


def _union(runs: list[dict], key: str) -> list:
    """The distinct values of a list field over the runs, sorted: e.g. every client count any of the claim's
    experiments measured."""
    return sorted({value for r in runs for value in r.get(key) or [] if value is not None})


def conditions(runs: list[dict], facts: dict | None, kinds: list[str]) -> dict:
    """One machine's conditions for one claim. runs: main.measured's records of the claim's experiments on
    the machine (experiment, profile, server_cores: the server's CPU budget in them, steal_pct_max,
    cpu_pressure_pct_max, and from the rows: passes, window_lengths_s, client_grid, pool_sizes,
    cpu_methods); the profile and server cores are the machine's where no run says (a claim over the main
    tables only, the USL fits). passes: the fewest passes any point of those experiments got (the rows'
    count; the profile's where a record has none), so a verdict on one pass says it rests on one reading."""
    profiles = [str(r["profile"]) for r in runs if r.get("profile")]
    steal = [float(r["steal_pct_max"]) for r in runs if r.get("steal_pct_max") is not None]
    pressure = [float(r["cpu_pressure_pct_max"]) for r in runs if r.get("cpu_pressure_pct_max") is not None]
    cores = [float(r["server_cores"]) for r in runs if r.get("server_cores") is not None]
    passes = [
        found
        for r in runs
        if (found := r.get("passes"))
        or (r.get("experiment") and (found := profile_passes(str(r["experiment"]), r.get("profile"))))
    ]
    facts = facts or {}
    poolers = facts.get("poolers") or {}
    return {
        "profile": min(profiles, key=lambda p: PROFILE_ORDER.get(p, -1))
        if profiles
        else facts.get("profile"),
        "steal_pct_max": max(steal) if steal else None,
        "cpu_pressure_pct_max": max(pressure) if pressure else None,
        "postgres_version": short_version(facts.get("postgres_version")),
        "server_cores": max(cores) if cores else facts.get("server_cores"),
        "poolers": {kind: poolers[kind] for kind in kinds if kind in poolers},
        "passes": min(passes) if passes else None,
        "window_lengths_s": _union(runs, "window_lengths_s"),
        "client_grid": _union(runs, "client_grid"),
        "pool_sizes": _union(runs, "pool_sizes"),
        "cpu_methods": _union(runs, "cpu_methods"),
    }
