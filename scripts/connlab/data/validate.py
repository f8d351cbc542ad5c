"""`make validate`: every results folder checked as data, one line per problem.

Format: `path:line: field: what is wrong`. Nothing in a results folder is executed or rendered as a
template; YAML is safe-loaded, CSVs are parsed as text.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterator
from pathlib import Path

import yaml

from connlab.data.columns import COLUMN_NAMES, WINDOW_COLUMNS
from connlab.data.machine_schema import SAFE_ID_PATTERN
from connlab.paths import MACHINE_FILE_NAME, RESULTS_DIR

MAX_FILE_BYTES = 20 * 2**20
SAFE_ID = re.compile(SAFE_ID_PATTERN)
NON_NEGATIVE = {
    "tps",
    "transactions",
    "failed_transactions",
    "latency_avg_ms",
    "latency_stddev_ms",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_p99_ms",
    "initial_connection_ms",
    "avg_connection_ms",
    "server_cpu_cores",
    "client_cpu_cores",
    "steal_pct",
    "cpu_pressure_pct",
    "checkpoints",
    "autovacuums",
    "clients",
    "jobs",
    "duration_s",
}


def _check_value(kind: str, text: str) -> str | None:
    """None when the text is a valid value of the DuckDB type, else the reason."""
    try:
        if kind in ("INTEGER", "BIGINT"):
            int(text)
        elif kind == "DOUBLE":
            if not math.isfinite(float(text)):
                return f"not a finite number ({text!r})"
        elif kind == "BOOLEAN" and text not in ("true", "false"):
            return f"expected true or false (got {text!r})"
    except ValueError:
        return f"expected {kind.lower()} (got {text!r})"
    return None


def validate_csv(path: Path) -> Iterator[str]:
    if path.stat().st_size > MAX_FILE_BYTES:
        yield f"{path}:1: (file): larger than {MAX_FILE_BYTES // 2**20} MiB"
        return
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        yield f"{path}:1: (file): not UTF-8 text"
        return
    reader = csv.reader(text.splitlines())
    header = next(reader, None)
    if header is None:
        yield f"{path}:1: (header): empty file"
        return
    missing = [name for name in COLUMN_NAMES if name not in header]
    unknown = [name for name in header if name not in COLUMN_NAMES]
    for name in missing:
        yield f"{path}:1: {name}: required column missing"
    for name in unknown:
        yield f"{path}:1: {name}: unknown column"
    if missing or unknown:
        return
    for line_no, row in enumerate(reader, start=2):
        if len(row) != len(header):
            yield f"{path}:{line_no}: (row): {len(row)} fields, expected {len(header)}"
            continue
        values = dict(zip(header, row, strict=True))
        for column in WINDOW_COLUMNS:
            text_value = values[column.name]
            if text_value == "":
                if column.required:
                    yield f"{path}:{line_no}: {column.name}: required value is empty"
                continue
            problem = _check_value(column.type, text_value)
            if problem:
                yield f"{path}:{line_no}: {column.name}: {problem}"
            elif column.name in NON_NEGATIVE and float(text_value) < 0:
                yield f"{path}:{line_no}: {column.name}: negative value {text_value}"
        if values["run_id"] != path.stem:
            yield f"{path}:{line_no}: run_id: {values['run_id']!r} does not match the file name"


def validate_machine_folder(folder: Path) -> Iterator[str]:
    if not SAFE_ID.match(folder.name):
        yield f"{folder}:1: (folder): machine id must be lower-case letters, digits, '.', '_' or '-'"
        return
    machine_file = folder / MACHINE_FILE_NAME
    if not machine_file.is_file():
        yield f"{machine_file}:1: (file): missing; `connlab run` writes it"
    else:
        try:
            data = yaml.safe_load(machine_file.read_text(encoding="utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError) as error:
            mark = getattr(error, "problem_mark", None)
            yield f"{machine_file}:{mark.line + 1 if mark else 1}: (yaml): {getattr(error, 'problem', error)}"
        else:
            if not isinstance(data, dict):
                yield f"{machine_file}:1: (top level): expected a mapping"
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            yield f"{path}:1: (file): symbolic links are not accepted in results"
        elif path.is_file() and path.suffix == ".csv":
            yield from validate_csv(path)


def validate_results(results_dir: Path = RESULTS_DIR) -> list[str]:
    problems: list[str] = []
    for folder in sorted(p for p in results_dir.iterdir() if p.is_dir()) if results_dir.exists() else []:
        problems.extend(validate_machine_folder(folder))
    return problems
