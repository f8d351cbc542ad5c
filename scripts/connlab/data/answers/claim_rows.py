"""Each claim's row across the measured machines, and the seed's statements by outcome (the findings).

A row holds each machine's cell, the median and range of their values, the machines per verdict and the
seed's own figure (shown, never judged). Where machines' verdicts differ, what differs between them
(connlab.data.disagreements).

Quick runs indicate, full runs decide: a verdict the claims marked `indicative` (connlab.data.claims.
is_indicative: it reads quick- or tiny-profile windows) is shown and listed apart, never counted in a
headline's figure, its verdict counts or the findings' headings. A median across machines never mixes
profiles: it is the full-profile machines' median, or, where no machine ran the claim's experiments in the
full profile, the indicative machines' median, flagged `indicative` so the page says so in words.
"""

from __future__ import annotations

from connlab.data.answers.machines import NAMED_UP_TO, PROFILE_ORDER, cell_cores, named, spread
from connlab.data.disagreements import disagreements

MEASURED = ("holds", "does not hold", "inconclusive")
VERDICT_ORDER = ("holds", "does not hold", "inconclusive", "cannot be evaluated")


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
