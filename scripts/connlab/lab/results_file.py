"""A run's raw CSV: rows appended atomically, found again to resume an interrupted run."""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path

from connlab.contract.columns import COLUMN_NAMES
from connlab.errors import LabError


def _format(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6g}" if abs(value) < 1e-3 and value else f"{round(value, 4)}"
    return str(value)


def write_atomically(path: Path, text: str) -> None:
    """Replace the file's content through a temporary file and a rename. When the disk is full (or
    anything else fails) the old file stays as it was, the temporary file is removed, and the error
    says so in one line."""
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with temporary.open("w", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        kept = "is unchanged" if path.exists() else "was not created"
        raise LabError(
            f"cannot write {path}: {error.strerror}; the file {kept}; free some space (or fix the "
            f"folder's permissions) and rerun the same command to resume"
        ) from error


class ResultsFile:
    """results/<machine>/<exp>/<run-id>.csv. Each append rewrites the file through a temporary file and
    a rename, so a crash at any moment leaves either the old file or the new one, never half a row."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: list[dict[str, str]] = []
        if path.exists():
            with path.open(newline="") as handle:
                self.rows = list(csv.DictReader(handle))

    @property
    def run_id(self) -> str:
        return self.path.stem

    def append(self, row: dict[str, object]) -> None:
        formatted = {name: _format(row.get(name)) for name in COLUMN_NAMES}
        self._write([*self.rows, formatted])
        self.rows.append(formatted)

    def _write(self, rows: Iterable[dict[str, str]]) -> None:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=COLUMN_NAMES, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        write_atomically(self.path, buffer.getvalue())

    def done_keys(self) -> set[tuple[int, str, int, float]]:
        return {
            (int(row["pass_no"]), row["workload"], int(row["clients"]), float(row["server_cpu_budget"]))
            for row in self.rows
        }


def find_resumable(
    folder: Path,
    profile: str,
    spec_hash: str,
    planned: int,
    unfinished: Callable[[ResultsFile], bool] | None = None,
) -> ResultsFile | None:
    """The newest run of this profile and spec that has fewer rows than planned, or that `unfinished` says
    has more to measure beyond them (refinement's points, decided from the rows: connlab.lab.refine)."""
    for path in sorted(folder.glob(f"{profile}-*.csv"), reverse=True):
        results = ResultsFile(path)
        if not results.rows or results.rows[0].get("spec_hash") != spec_hash:
            continue
        if len(results.rows) < planned or (unfinished is not None and unfinished(results)):
            return results
    return None


def new_run_path(folder: Path, profile: str) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return folder / f"{profile}-{stamp}.csv"
