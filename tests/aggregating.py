"""One experiment's tables computed from a results folder and written as CSV, as the data stage does for an
experiment computed whole (connlab.data.bring_tables): what the tests of an experiment's SQL start from."""

from __future__ import annotations

from pathlib import Path

import duckdb

from connlab.data.experiment_tables import compute_experiment
from connlab.data.result_files import machine_paths, result_files_by_experiment
from connlab.data.table_files import export_tables


def aggregate_experiment(
    con: duckdb.DuckDBPyConnection, experiment: str, out_dir: Path, results_dir: Path
) -> list[str]:
    """The experiment's tables from every machine's rows under results_dir; returns the tables written."""
    files = result_files_by_experiment(results_dir).get(experiment, {})
    compute_experiment(con, experiment, machine_paths(files, files))
    return export_tables(con, experiment, out_dir)
