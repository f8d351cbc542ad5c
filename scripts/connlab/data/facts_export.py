"""The facts files the pages quote: the named queries of site_src/articles/<slug>.facts.sql (and of the
pages' .facts.sql) run over the aggregated tables, each row written as JSON by DuckDB; an article's rows
that name a measured machine go to that machine's own file (connlab.contract.facts_files), and only the
machines whose inputs changed are written again."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import duckdb

from connlab.analysis.bulk import insert_rows
from connlab.contract.facts_files import (
    ACROSS_MACHINE_FACTS,
    counts_path,
    facts_path,
    facts_text,
    machine_facts_file,
    machine_facts_path,
)
from connlab.contract.files import write_if_changed
from connlab.data.sql_text import sql_in_list
from connlab.errors import LabError

_QUERY_MARKER = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$", re.M)


def split_named_queries(text: str) -> dict[str, str]:
    """`-- name: x` starts query x; the query runs until the next marker."""
    parts = _QUERY_MARKER.split(text)
    return {parts[i]: parts[i + 1].strip().rstrip(";") for i in range(1, len(parts), 2)}


def _json_constant(name: str) -> float | None:
    # NaN is no JSON value: an undefined figure is null.
    return None if name == "NaN" else float(name)


def _without_nan(row: str) -> str:
    # DuckDB writes an undefined double as NaN, which is no JSON value: null, as _clean makes it elsewhere.
    return json.dumps(json.loads(row, parse_constant=_json_constant), sort_keys=True) if "NaN" in row else row


def query_json_rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[str]:
    """Each row of the query as a JSON object, in the query's order, written by DuckDB: converting every
    value to Python and encoding it again cost more than the queries at a thousand machines."""
    return [
        _without_nan(row[0])
        for row in con.execute(f"SELECT to_json(facts_row) FROM ({sql}) AS facts_row").fetchall()
    ]


def _machine_json_rows(
    con: duckdb.DuckDBPyConnection, sql: str, kept: list[str] | None = None
) -> list[tuple[str | None, str]]:
    """(machine, row as JSON) for each row of a query that names machines, in the query's order; with kept,
    only the rows of those machines and of none. The machines are written into the query as literals, so that
    DuckDB filters the tables as it reads them: an anti-join against the machines left out tested every row
    of a thousand machines, and took longer than this over every article's facts."""
    select = f"SELECT machine::VARCHAR, to_json(facts_row) FROM ({sql}) AS facts_row"
    if kept is not None:
        select += f" WHERE machine IS NULL OR machine::VARCHAR IN {sql_in_list(kept)}"
    return [(machine, _without_nan(row)) for machine, row in con.execute(select).fetchall()]


# Each measured machine's rows of each fact, per article: the counts of the machines whose facts were not
# computed again come from here.
FACTS_COUNTS_TABLE = "main.facts_counts"


def export_facts(
    con: duckdb.DuckDBPyConnection,
    facts_sql: Path,
    out_dir: Path,
    measured: set[str] | None = None,
    changed: set[str] | None = None,
) -> Path:
    """The named queries' rows as facts files; with the measured machines (an article), each one's rows of
    the facts that name machines in a file of its own (connlab.contract.facts_files). With the measured
    machines whose inputs changed since the files were written (None: all of them), only those machines'
    files are written again: a measured machine's rows depend on its own measurements alone, as every
    experiment's rows do (tests/data/test_aggregate_incremental.py checks the files against aggregating
    anew)."""
    slug = facts_sql.name.removesuffix(".facts.sql")
    redone = (measured or set()) if changed is None else (measured or set()) & changed
    skipped = sorted((measured or set()) - redone)
    # The rows kept where some machines are skipped: the others', and the published machines' (a fact's
    # machine is one of main.machines).
    kept = None
    if skipped:
        everyone = {str(row[0]) for row in con.execute("SELECT id FROM main.machines").fetchall()}
        kept = sorted(everyone - set(skipped))
    shared: dict[str, list[str]] = {}
    own: dict[str, dict[str, list[str]]] = {machine: {} for machine in redone}
    counts: dict[str, int] = {}
    own_counts: list[tuple[str, str, str, int]] = []
    for name, sql in split_named_queries(facts_sql.read_text()).items():
        try:
            columns = [c[0] for c in con.execute(f"SELECT * FROM ({sql}) AS q LIMIT 0").description]
            if measured is None or "machine" not in columns or name in ACROSS_MACHINE_FACTS:
                shared[name] = query_json_rows(con, sql)
                counts[name] = len(shared[name])
                continue
            rows = _machine_json_rows(con, sql, kept)
        except duckdb.Error as error:
            raise LabError(f"{facts_sql}: query {name}: {str(error).splitlines()[0]}") from error
        shared[name] = []
        for facts in own.values():
            facts[name] = []
        for machine, row in rows:
            (own[machine][name] if machine in own else shared[name]).append(row)
        own_counts += [
            (slug, name, machine, len(facts[name])) for machine, facts in own.items() if facts[name]
        ]
        counts[name] = len(shared[name])
    out_dir.mkdir(parents=True, exist_ok=True)
    path = facts_path(out_dir, slug)
    write_if_changed(path, facts_text(shared))
    folder = out_dir / slug
    if measured is None:
        counts_path(out_dir, slug).unlink(missing_ok=True)
        shutil.rmtree(folder, ignore_errors=True)
        return path
    con.execute(
        f"CREATE TABLE IF NOT EXISTS {FACTS_COUNTS_TABLE} "
        "(slug VARCHAR, fact VARCHAR, machine VARCHAR, n INTEGER)"
    )
    # Every machine's counts go but the skipped machines': those written again now, and those gone. (Named
    # as literals: the skipped machines, a thousand of them, as a table filled for each article cost more.)
    counted = {
        str(row[0])
        for row in con.execute(
            f"SELECT DISTINCT machine FROM {FACTS_COUNTS_TABLE} WHERE slug = ?", [slug]
        ).fetchall()
    }
    if stale_counts := sorted(counted - set(skipped)):
        con.execute(
            f"DELETE FROM {FACTS_COUNTS_TABLE} WHERE slug = ? AND machine IN {sql_in_list(stale_counts)}",
            [slug],
        )
    insert_rows(con, FACTS_COUNTS_TABLE, own_counts)
    for name, n in con.execute(
        f"SELECT fact, sum(n)::INTEGER FROM {FACTS_COUNTS_TABLE} WHERE slug = ? GROUP BY fact", [slug]
    ).fetchall():
        if name in counts:
            counts[name] += n
    write_if_changed(counts_path(out_dir, slug), json.dumps(counts, sort_keys=True))
    for machine, facts in own.items():
        write_if_changed(machine_facts_path(out_dir, slug, machine), facts_text(facts))
    # A machine whose results are gone must not keep its facts (names compared as text: a Path for each of a
    # thousand files cost more than the rest of this).
    kept_names = {os.path.basename(machine_facts_file(out_dir, slug, machine)) for machine in measured}
    for stale in sorted(set(os.listdir(folder)) - kept_names if folder.is_dir() else []):
        if stale.endswith(".json"):
            (folder / stale).unlink()
    return path
