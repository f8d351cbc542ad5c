"""Bringing every experiment's tables up to date with the recorded state (connlab.data.aggregate_state):
unchanged, the changed machines' rows replaced, or computed whole; several experiments at a time, each in
one transaction; then the new state recorded."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

import duckdb

from connlab.data.aggregate_state import forget_state, record_state
from connlab.data.cursor_pool import CursorPool
from connlab.data.experiment_tables import catalog, changed_schema, compute_experiment, update_machines
from connlab.data.result_files import ResultFiles, machine_paths


@dataclass(frozen=True)
class Brought:
    """An experiment whose tables were brought up to date."""

    experiment: str
    how: str  # "computed" (every table made anew) or "updated" (the changed machines' rows)


def bring_tables(
    con: duckdb.DuckDBPyConnection,
    experiment: str,
    state: dict[str, str],
    previous: dict[str, str],
    files: dict[str, list[tuple[str, str]]],
    known: dict[str, bool],
) -> Brought | None:
    """Bring the experiment's tables up to date, in one transaction: only the changed machines' rows
    recomputed, or everything computed again (its basis changed, or no state was kept). Returns which; None
    where it was up to date. The caller forgets the experiment's recorded state before, and records the new
    one after. known: the experiment's tables as they were before, each with whether it has a machine
    column."""
    if previous == state:
        return None
    scratch = changed_schema(experiment)
    con.execute(f"DROP SCHEMA IF EXISTS {scratch} CASCADE")
    brought = Brought(experiment, "computed")
    with _transaction(con):
        if previous.get("") == state[""]:
            changed = {m for m in state.keys() | previous.keys() if state.get(m) != previous.get(m)}
            # Rows exist only for the machines of the recorded state: an added machine has none to delete.
            if not changed or update_machines(
                con, experiment, changed, machine_paths(files, changed), set(previous), known
            ):
                brought = Brought(experiment, "updated")
        if brought.how == "computed":
            compute_experiment(con, experiment, machine_paths(files, files))
    # Dropped outside the tables' transaction: DuckDB refuses to commit one that changed a table and dropped
    # another of the same name, as the scratch schema's tables are named.
    con.execute(f"DROP SCHEMA IF EXISTS {scratch} CASCADE")
    return brought


@contextmanager
def _transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """One transaction: an experiment's forty-odd statements commit once, where each committed on its own
    before (a commit writes the database's log), and an update that fails or is interrupted half-way
    leaves the tables as they were."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
    except BaseException:
        with suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


# Experiments brought up to date at once. Each one's SQL reads its own schema and the main tables only
# (CONTRIBUTING.md, "An experiment"; tests/data/test_aggregate_incremental.py checks the SQL), so their order
# does not matter; a statement runs inside DuckDB without Python's lock, and an added machine's twenty updates
# are mostly such statements, each too small to keep DuckDB's own threads busy.
EXPERIMENT_WORKERS = max(1, min(4, os.cpu_count() or 1))


def bring_up_to_date(
    con: duckdb.DuckDBPyConnection,
    states: dict[str, dict[str, str]],
    previous: dict[str, dict[str, str]],
    files: ResultFiles,
) -> list[Brought]:
    """bring_tables for every experiment, several at a time; returns those brought up to date. Each
    experiment's state is forgotten before its tables change and recorded once they have, here on `con`
    alone: an aggregation stopped half-way computes again what it had not recorded."""
    for experiment, state in states.items():
        if state != previous.get(experiment, {}):
            forget_state(con, experiment)
    # Every experiment's tables listed in one query: each query of DuckDB's catalog functions is slow in a
    # database of twenty experiments, and each update asked twice.
    tables = catalog(con, *(experiment.replace("-", "_") for experiment in states))
    with CursorPool(con, EXPERIMENT_WORKERS) as pool:
        jobs = [
            pool.submit(
                bring_tables, experiment, states[experiment], previous.get(experiment, {}),
                files.get(experiment, {}), tables[experiment.replace("-", "_")],
            )
            for experiment in states
        ]  # fmt: skip
        brought = [one for job in jobs if (one := job.result()) is not None]
    # In one transaction: forty statements committed each on its own wrote the database's log forty times.
    with _transaction(con):
        for one in brought:
            record_state(con, one.experiment, states[one.experiment], previous.get(one.experiment, {}))
    return brought
