"""The verdict table of an article, read across machines: one row per claim, one column per measured machine,
one for the article's own published source, and a summary per claim.

The other published sets that a claim has data for are judged too; they are listed apart, so that the table
compares measured machines with the one article the claims come from.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Column:
    machine: str
    heading: str  # "1 server core · full · 2026-11-30"
    indicative: bool  # a quick profile: its verdicts are a first look, not a publication


@dataclass
class VerdictTable:
    columns: list[Column]
    source: str | None
    rows: list[dict] = field(default_factory=list)  # {claim, cells: [verdict...], source_cell, summary}
    others: list[str] = field(default_factory=list)  # other published sets with at least one verdict
    other_rows: list[dict] = field(default_factory=list)  # {claim, cells: [verdict...]}
    missing: dict[str, int] = field(default_factory=dict)  # machine -> claims it has no data for


def _cores(value: object) -> str:
    if value is None:
        return "server cores unknown"
    cores = float(value)  # type: ignore[arg-type]
    text = f"{cores:g}"
    return f"{text} server core" + ("" if cores == 1 else "s")


def columns_of(machine_columns: list[dict]) -> list[Column]:
    """Headers from the machines facts: server cores, profile (indicative unless full) and date."""
    columns = []
    for record in machine_columns:
        profile = str(record.get("profile") or "unknown profile")
        indicative = bool(record.get("indicative"))
        label = f"{profile} profile, indicative" if indicative else f"{profile} profile"
        heading = f"{_cores(record.get('server_cores'))} · {label} · {record.get('date') or 'undated'}"
        columns.append(Column(str(record["machine"]), heading, indicative))
    return columns


PROFILES_BY_THOROUGHNESS = ("tiny", "quick", "full")


def _thoroughness(profile: str) -> int:
    """An unknown profile counts as the least thorough: never a firmer verdict than its data allow."""
    return PROFILES_BY_THOROUGHNESS.index(profile) if profile in PROFILES_BY_THOROUGHNESS else -1


def article_columns(machine_columns: list[dict], measured: list[dict], experiments: list[str]) -> list[dict]:
    """Each machine's header with the profile of the experiments this article's claims read (the least
    thorough of them), instead of the least thorough of everything the machine ran."""
    if not experiments:
        return machine_columns
    columns = []
    for record in machine_columns:
        profiles = [
            str(m["profile"])
            for m in measured
            if m["machine"] == record["machine"] and m["experiment"] in experiments
        ]
        if profiles:
            least = min(
                profiles,
                key=lambda p: PROFILES_BY_THOROUGHNESS.index(p) if p in PROFILES_BY_THOROUGHNESS else -1,
            )
            record = {**record, "profile": least, "indicative": least != "full"}
        columns.append(record)
    return columns


def build_table(
    claims_file: dict,
    machine_columns: list[dict],
    published: list[str],
    verdicts_by_machine: list[dict[str, dict]] | None = None,
) -> VerdictTable:
    """verdicts_by_machine: each claim's verdicts by machine, where the caller has indexed them already."""
    source = claims_file.get("source")
    columns = columns_of(machine_columns)
    table = VerdictTable(columns=columns, source=source)
    others = [m for m in published if m != source]
    claims = claims_file.get("claims", [])
    if verdicts_by_machine is None:
        verdicts_by_machine = [{v["machine"]: v for v in claim["verdicts"]} for claim in claims]
    for claim, by_machine in zip(claims, verdicts_by_machine, strict=True):
        if claim.get("scope") == "across":
            continue  # one verdict over all machines: shown with its chart, not as a row of this table
        cells = [by_machine[c.machine] for c in columns]
        for column, cell in zip(columns, cells, strict=True):
            if cell["verdict"] == "not measured":
                table.missing[column.machine] = table.missing.get(column.machine, 0) + 1
        table.rows.append(
            {
                "claim": claim,
                "cells": cells,
                "source_cell": by_machine.get(source) if source else None,
                "summary": claim["summary"],
            }
        )
        judged = {m: by_machine[m] for m in others if by_machine[m]["verdict"] != "not measured"}
        if judged:
            table.other_rows.append({"claim": claim, "cells": judged})
    table.others = [m for m in others if any(m in row["cells"] for row in table.other_rows)]
    if not any(row["source_cell"] for row in table.rows):
        table.source = None  # the source's folder is not among the results: no column for it
    return table


def with_machines(
    table: VerdictTable,
    claims_file: dict,
    machine_columns: list[dict],
    verdicts_by_machine: list[dict[str, dict]],
) -> VerdictTable:
    """What build_table makes with these machines' columns, from the table it made with none: each machine's
    page has its own table, and a thousand machines' pages went over the published sets' verdicts again
    for each (the rows' source cells, the other published sets' rows), which are the same for all."""
    columns = columns_of(machine_columns)
    result = VerdictTable(
        columns=columns, source=table.source, others=table.others, other_rows=table.other_rows
    )
    # build_table's rows: one per claim that is not across machines, in the claims' order.
    row_verdicts = [
        by_machine
        for claim, by_machine in zip(claims_file.get("claims", []), verdicts_by_machine, strict=True)
        if claim.get("scope") != "across"
    ]
    for row, by_machine in zip(table.rows, row_verdicts, strict=True):
        cells = [by_machine[column.machine] for column in columns]
        for column, cell in zip(columns, cells, strict=True):
            if cell["verdict"] == "not measured":
                result.missing[column.machine] = result.missing.get(column.machine, 0) + 1
        result.rows.append({**row, "cells": cells})
    return result
