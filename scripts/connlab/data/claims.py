"""An article's claims, checked on every machine.

site_src/articles/<slug>.claims.yaml lists claims: an id, a sentence with placeholders, and a DuckDB query
over the aggregated tables returning one row per machine: `machine`, `value` and `holds` (true, false, or
null when the machine lacks the data). A machine the query does not return is "not measured". A query that
fails stops the build with a message naming the file and the claim: a claim that cannot be checked must not
be published as if it had been.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import duckdb
from pydantic import BaseModel, ConfigDict, Field

from connlab.data.yaml_models import load_yaml_model
from connlab.errors import LabError

CLAIMS_SUBDIR = "claims"
HOLDS, DOES_NOT_HOLD, NOT_MEASURED = "holds", "does not hold", "not measured"


class Claim(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    claim: str = Field(description="the sentence, as the article's source put it")
    seed: str = Field(description="what the source article measured")
    value_label: str = Field(description="what the value column means, e.g. 'clients per core at the peak'")
    query: str


class ClaimsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    claims: list[Claim] = Field(min_length=1)


def _verdict(holds: object, where: str) -> str:
    if holds is None:
        return NOT_MEASURED
    if not isinstance(holds, bool):
        raise LabError(f"{where}: column holds must be a boolean or null, got {holds!r}")
    return HOLDS if holds else DOES_NOT_HOLD


def _number(value: object, where: str) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError) as error:
        raise LabError(f"{where}: column value must be a number or null, got {value!r}") from error
    return None if math.isnan(number) else number


def check_claim(con: duckdb.DuckDBPyConnection, claim: Claim, path: Path, machines: list[str]) -> dict:
    try:
        cursor = con.execute(claim.query)
        names = [column[0] for column in cursor.description]
        rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    except duckdb.Error as error:
        raise LabError(f"{path}: claim {claim.id}: query failed: {str(error).splitlines()[0]}") from error
    missing = {"machine", "value", "holds"} - set(names)
    if missing:
        raise LabError(
            f"{path}: claim {claim.id}: query must return columns machine, value, holds "
            f"(missing: {', '.join(sorted(missing))})"
        )
    by_machine = {str(row["machine"]): row for row in rows}
    where = f"{path}: claim {claim.id}"
    verdicts = []
    for machine in machines:
        row = by_machine.get(machine)
        verdicts.append(
            {
                "machine": machine,
                "verdict": _verdict(row["holds"], where) if row else NOT_MEASURED,
                "value": _number(row["value"], where) if row else None,
            }
        )
    return {**claim.model_dump(exclude={"query"}), "verdicts": verdicts}


def evaluate_claims(con: duckdb.DuckDBPyConnection, path: Path, machines: list[str], out_dir: Path) -> Path:
    claims = load_yaml_model(path, ClaimsFile)
    results = [check_claim(con, claim, path, machines) for claim in claims.claims]
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / path.name.replace(".claims.yaml", ".json")
    text = json.dumps(results, indent=1, sort_keys=True)
    if not target.exists() or target.read_text() != text:
        target.write_text(text)
    return target
