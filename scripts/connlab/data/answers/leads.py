"""Each machine page's lead: its pool size (where it measured one), when its data was measured, and its raw
files, which its page links as downloads."""

from __future__ import annotations

import os
from pathlib import Path

from connlab.data.answers.coverage import measured_dates
from connlab.data.answers.machines import by_machine


def machine_leads(
    measured: list[str],
    machines_facts: dict,
    machines_json: list[dict],
    pools: list[dict],
    results_dir: Path | None,
) -> dict[str, dict]:
    """Each measured machine's lead, its pool size from `pools` (connlab.data.answers.pool_size.pool_sizes),
    and each published set's raw files: each article links the set it compares with."""
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
    for published in sorted(str(m["id"]) for m in machines_json if m.get("published")):
        leads[published] = {"machine": published, "dates": None, "pool_size": None}
        leads[published]["raw"] = raw_files(results_dir, published)
    return leads


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
