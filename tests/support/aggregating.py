"""One experiment's tables computed from a results folder, as the data stage does for an experiment
computed whole (connlab.data.bring_tables): what the tests of an experiment's SQL start from."""

from __future__ import annotations

from pathlib import Path

import duckdb

from connlab.data.experiment_tables import INPUT_TABLES, compute_experiment, table_list
from connlab.data.result_files import machine_paths, result_files_by_experiment


def aggregate_experiment(con: duckdb.DuckDBPyConnection, experiment: str, results_dir: Path) -> list[str]:
    """The experiment's tables from every machine's rows under results_dir; returns the tables its SQL made
    (its schema's, but the input tables)."""
    files = result_files_by_experiment(results_dir).get(experiment, {})
    compute_experiment(con, experiment, machine_paths(files, files))
    return [table for table in table_list(con, experiment.replace("-", "_")) if table not in INPUT_TABLES]
