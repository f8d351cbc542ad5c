"""Machines as the answers group, order and name them, and a figure across them.

A sentence names up to NAMED_UP_TO machines, each with its server cores (its name alone hides them), and
counts the rest; a figure across machines is their median and range.
"""

from __future__ import annotations

import statistics

# Machines named in a sentence; past this many, the count and the median stand for the rest.
NAMED_UP_TO = 5
# The profiles, from the least thorough to the most.
PROFILE_ORDER = {"tiny": 0, "quick": 1, "full": 2}


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
