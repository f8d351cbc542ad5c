"""Bringing every experiment's tables up to date with the recorded state (connlab.data.aggregate_state):
unchanged, the changed machines' rows replaced, or computed whole; several experiments at a time, each in
one transaction; then their CSV files written and the new state recorded."""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import as_completed
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from connlab.data.aggregate_state import forget_state, record_state
from connlab.data.cursor_pool import CursorPool
from connlab.data.experiment_tables import catalog, changed_schema, compute_experiment, update_machines
from connlab.data.result_files import ResultFiles, machine_paths
from connlab.data.table_files import export_tables


@dataclass(frozen=True)
class Brought:
    """An experiment whose tables were brought up to date, its CSV files still to write."""

    experiment: str
    how: str  # "computed" (every table made anew) or "updated" (the changed machines' rows)
    # Updated: the machines whose rows changed, their new rows in the scratch schema, and the schema's tables.
    changed: set[str] = field(default_factory=set)
    tables: list[str] | None = None


def bring_tables(
    con: duckdb.DuckDBPyConnection,
    experiment: str,
    state: dict[str, str],
    previous: dict[str, str],
    out_dir: Path,
    files: dict[str, list[tuple[str, str]]],
    known: dict[str, bool],
) -> Brought | None:
    """Bring the experiment's tables up to date, in one transaction: only the changed machines' rows
    recomputed, or everything computed again (its basis changed, or no state was kept). Returns which, for
    write_files to write the experiment's files; None where it was up to date. The caller forgets the
    experiment's recorded state before, and records the new one once the files are written. known: the
    experiment's tables as they were before, each with whether it has a machine column."""
    if not _due(experiment, state, previous, out_dir):
        return None
    con.execute(f"DROP SCHEMA IF EXISTS {changed_schema(experiment)} CASCADE")
    with _transaction(con):
        if previous.get("") == state[""]:
            changed = {m for m in state.keys() | previous.keys() if state.get(m) != previous.get(m)}
            # Rows exist only for the machines of the recorded state: an added machine has none to delete.
            if not changed or update_machines(
                con, experiment, changed, machine_paths(files, changed), set(previous), known
            ):
                return Brought(experiment, "updated", changed, list(known))
        compute_experiment(con, experiment, machine_paths(files, files))
    return Brought(experiment, "computed")


def write_files(con: duckdb.DuckDBPyConnection, brought: Brought, out_dir: Path) -> None:
    """The CSV files of an experiment whose tables were brought up to date; then its scratch schema goes.
    (Dropped outside the tables' transaction: DuckDB refuses to commit one that changed a table and dropped
    another of the same name, as the scratch schema's tables are named.)"""
    if brought.how == "computed":
        export_tables(con, brought.experiment, out_dir)
    else:
        export_tables(con, brought.experiment, out_dir, brought.changed, brought.tables)
    con.execute(f"DROP SCHEMA IF EXISTS {changed_schema(brought.experiment)} CASCADE")


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


def _due(experiment: str, state: dict[str, str], previous: dict[str, str], out_dir: Path) -> bool:
    return previous != state or not (out_dir / experiment).is_dir()


# Experiments brought up to date at once. Each one's SQL reads its own schema and the main tables only
# (ARCHITECTURE.md, "An experiment"; tests/test_aggregate_incremental.py checks the SQL), so their order does
# not matter; a statement runs inside DuckDB without Python's lock, and an added machine's twenty updates are
# mostly such statements, each too small to keep DuckDB's own threads busy.
EXPERIMENT_WORKERS = max(1, min(4, os.cpu_count() or 1))


def bring_up_to_date(
    con: duckdb.DuckDBPyConnection,
    states: dict[str, dict[str, str]],
    previous: dict[str, dict[str, str]],
    out_dir: Path,
    files: ResultFiles,
) -> list[Brought]:
    """bring_tables for every experiment, several at a time; returns those whose files are to be written
    (write_brought). Each experiment's state is forgotten before its tables change, here on `con` alone,
    and recorded only once its files are written."""
    for experiment, state in states.items():
        if _due(experiment, state, previous.get(experiment, {}), out_dir):
            forget_state(con, experiment)
    # Every experiment's tables listed in one query: DuckDB's catalog functions cost 15-35 ms a query in a
    # database of twenty experiments, and each update asked twice.
    tables = catalog(con, *(experiment.replace("-", "_") for experiment in states))
    with CursorPool(con, EXPERIMENT_WORKERS) as pool:
        jobs = [
            pool.submit(
                bring_tables, experiment, states[experiment], previous.get(experiment, {}), out_dir,
                files.get(experiment, {}), tables[experiment.replace("-", "_")],
            )
            for experiment in states
        ]  # fmt: skip
        return [brought for job in jobs if (brought := job.result()) is not None]


def write_brought(
    con: duckdb.DuckDBPyConnection,
    brought: list[Brought],
    states: dict[str, dict[str, str]],
    previous: dict[str, dict[str, str]],
    out_dir: Path,
) -> None:
    """The CSV files of the experiments brought up to date, several at a time; each experiment's state is
    recorded once its files are written. Nothing the aggregation does after bring_up_to_date reads these
    files, so a caller with a later stage to run can have them written meanwhile (aggregate_all's `later`)."""
    with CursorPool(con, EXPERIMENT_WORKERS) as pool:
        jobs = {pool.submit(write_files, one, out_dir): one.experiment for one in brought}
        for job in as_completed(jobs):
            job.result()
            experiment = jobs[job]
            record_state(con, experiment, states[experiment], previous.get(experiment, {}))
