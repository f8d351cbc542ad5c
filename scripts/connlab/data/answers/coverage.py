"""What an article's data covers: which measured machines ran its experiments and which did not, each
pooler's machines (by version) and where it was not available, when the data was measured, and each
machine's heading in the verdict table (server cores, profile, date).
"""

from __future__ import annotations

from connlab.contract.poolers.registry import pooler_label
from connlab.data.answers.machines import PROFILE_ORDER, by_machine, named


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
    for r in machines_facts.get("measured", []):
        if r["experiment"] not in wanted or str(r["machine"]) not in ran_set:
            continue
        for built in r.get("pooler_versions") or []:
            pooler, _, version = str(built).partition(" ")  # by kind (connlab.data.experiment_tables)
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
