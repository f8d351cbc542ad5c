"""build/data/answers: each article's answers (<slug>.json) and each machine page's lead (pool-sizes.json),
written from the facts and claims the aggregation has just written (connlab.data.aggregate calls
write_answers). A file is rewritten only where its content changed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from connlab.contract.cache import canonical_bytes, loads_fast, remember_written
from connlab.contract.files import write_bytes_if_changed
from connlab.contract.machine_schema import NOT_AVAILABLE
from connlab.contract.names import ANSWERS_SUBDIR, MACHINES_JSON, POOL_SIZES_FILE, VERDICT_COLUMNS_UP_TO
from connlab.contract.poolers.registry import VERSIONED
from connlab.data.answers.claim_rows import as_written, claim_row, explained, findings
from connlab.data.answers.coverage import columns, coverage, measured_dates
from connlab.data.answers.inputs import ANSWER_INPUTS_FILE, ListedFacts, answer_facts
from connlab.data.answers.leads import machine_leads, raw_files
from connlab.data.answers.pool_size import pool_sizes
from connlab.data.answers.short_answers import POOL_SIZE_ARTICLES, short_answer
from connlab.data.answers.usl_across import usl_across
from connlab.data.chart_rows import (
    connection_cost,
    latency_across,
    pooler_memory,
    pooler_side_by_side,
    pooler_throughput,
    trade_curve,
)


@dataclass(frozen=True)
class Shared:
    """What every article's answers read, gathered once per write."""

    measured: list[str]  # sorted
    machines_facts: dict  # the Machines page's facts
    facts: dict[str, ListedFacts]  # each article's, as the answers read them
    machine_cores: dict[str, float | None]
    machine_versions: dict[str, dict[str, str]]
    pools: list[dict]  # each machine's pool size
    usl: dict  # the USL fits across machines
    results_dir: Path | None


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
    pools = pool_sizes(measured, facts, machine_cores)
    shared = Shared(
        measured,
        machines_facts,
        facts,
        machine_cores,
        pooler_versions_of(machines_json),
        pools,
        usl_across(facts["pool-sizing"], machines_facts, machines_json),
        results_dir,
    )
    written: list[Path] = []
    if judged is None:
        judged = {path.stem: _read(path) for path in sorted(claims_dir.glob("*.json"))}
    for slug, claims in sorted(judged.items()):
        _write(out_dir / f"{slug}.json", article_answers(slug, claims, shared), written)
    leads = machine_leads(measured, machines_facts, machines_json, pools, results_dir)
    _write(out_dir / POOL_SIZES_FILE, leads, written)
    return written


def pooler_versions_of(machines_json: list[dict]) -> dict[str, dict[str, str]]:
    """Each machine's pooler versions as machine.yaml records them (those it ran): a published set's are the
    versions the seed's figures come from."""
    return {
        str(m["id"]): {
            kind: str(m[f"{kind}_version"])
            for kind in VERSIONED
            if m.get(f"{kind}_version") and str(m[f"{kind}_version"]) != NOT_AVAILABLE
        }
        for m in machines_json
    }


def article_answers(slug: str, claims: dict, shared: Shared) -> dict:
    """An article's answers file: its short answer, findings, verdict rows, coverage and the rows of its
    charts across machines, from its claims as judged."""
    measured, machines_facts, facts = shared.measured, shared.machines_facts, shared.facts
    machine_cores = shared.machine_cores
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
    usl = shared.usl
    return {
        "measured": ran,
        "short_answer": as_written(
            short_answer(slug, by_id, shared.machine_versions, source, machine_cores), cells
        ),
        "findings": as_written(findings(rows, machine_cores), cells),
        "disagreements": explained(rows, machine_cores),
        "rows": as_written(rows, cells),
        "dates": measured_dates(machines_facts, experiments),
        "pool_sizes": shared.pools if slug in POOL_SIZE_ARTICLES else [],
        "coverage": covered,
        "seed_raw": raw_files(shared.results_dir, source) if source else [],
        "columns": columns(machines_facts, ran, experiments),
        "simulator_default": usl["machines"][0] if usl["machines"] else None,
        "latency": latency_across(facts["too-many-connections"], ran)
        if slug == "too-many-connections"
        else [],
        "pooler_throughput": pooler_throughput(facts["four-poolers"], ran) if slug == "four-poolers" else [],
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


def _write(target: Path, payload: object, written: list[Path]) -> None:
    """The file written where its content changed (added to `written`), and remembered as written."""
    if write_bytes_if_changed(target, canonical_bytes(payload)):
        written.append(target)
    remember_written(target, payload)


def _read(path: Path) -> dict:
    return loads_fast(path.read_bytes()) if path.is_file() else {}  # type: ignore[return-value]
