"""The raw results CSV: atomic appends, the keys already measured, and finding a run to resume."""

from __future__ import annotations

import csv
import errno
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from connlab.contract.columns import COLUMN_NAMES
from connlab.errors import LabError
from connlab.lab import results_file
from connlab.lab.results_file import ResultsFile, find_resumable, new_run_path

if TYPE_CHECKING:
    from support.rows import RowFactory


def parse(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1:]


def test_append_writes_every_column_in_order(tmp_path: Path, make_row: RowFactory) -> None:
    path = tmp_path / "m" / "clients-sweep" / "tiny-20260101T000000Z.csv"
    results = ResultsFile(path)
    results.append(make_row(tps=1234.56789, ok=True, avg_connection_ms=None, client_saturated=False))
    header, rows = parse(path)
    assert header == list(COLUMN_NAMES)
    [row] = rows
    values = dict(zip(header, row, strict=True))
    assert values["tps"] == "1234.5679"  # four decimals
    assert values["ok"] == "true"
    assert values["client_saturated"] == "false"
    assert values["avg_connection_ms"] == ""  # None is an empty field


def test_tiny_values_keep_their_significant_digits(tmp_path: Path, make_row: RowFactory) -> None:
    results = ResultsFile(tmp_path / "r.csv")
    results.append(make_row(latency_p50_ms=0.0000123, steal_pct=0.0))
    _, [row] = parse(results.path)
    values = dict(zip(COLUMN_NAMES, row, strict=True))
    assert float(values["latency_p50_ms"]) == pytest.approx(0.0000123)
    assert float(values["steal_pct"]) == 0.0


def test_appends_keep_the_file_whole_and_leave_no_temporary(tmp_path: Path, make_row: RowFactory) -> None:
    path = tmp_path / "tiny-20260101T000000Z.csv"
    results = ResultsFile(path)
    for number in range(1, 6):
        results.append(make_row(window_no=number, clients=number, error='a, "quoted" error'))
        header, rows = parse(path)
        assert len(rows) == number
        assert all(len(row) == len(header) for row in rows)
        assert [p.name for p in tmp_path.iterdir()] == [path.name]
    assert ResultsFile(path).rows == results.rows
    assert ResultsFile(path).rows[0]["error"] == 'a, "quoted" error'


def test_a_crash_before_the_rename_leaves_the_previous_file(
    tmp_path: Path, make_row: RowFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "tiny-20260101T000000Z.csv"
    results = ResultsFile(path)
    results.append(make_row(window_no=1))
    results.append(make_row(window_no=2))
    before = path.read_bytes()

    def crash(source: object, target: object) -> None:
        raise OSError(errno.EIO, "simulated crash between write and rename")

    monkeypatch.setattr(results_file.os, "replace", crash)
    with pytest.raises(LabError, match="simulated crash between write and rename; the file is unchanged"):
        results.append(make_row(window_no=3))
    monkeypatch.undo()

    assert path.read_bytes() == before
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left beside it
    header, rows = parse(path)
    assert [row[header.index("window_no")] for row in rows] == ["1", "2"]
    assert len(results.rows) == 2  # the in-memory rows did not run ahead of the file
    results.append(make_row(window_no=3))
    assert len(ResultsFile(path).rows) == 3


def test_append_is_a_rename_not_an_overwrite(tmp_path: Path, make_row: RowFactory) -> None:
    """A reader holding the old file keeps a complete old version: the new file is a new inode."""
    path = tmp_path / "tiny-20260101T000000Z.csv"
    results = ResultsFile(path)
    results.append(make_row(window_no=1))
    with path.open(newline="") as reader:
        inode = os.fstat(reader.fileno()).st_ino
        results.append(make_row(window_no=2))
        old = list(csv.reader(reader))
    assert len(old) == 2  # header and the one row it had when opened
    assert os.stat(path).st_ino != inode
    assert len(ResultsFile(path).rows) == 2


def test_done_keys(tmp_path: Path, make_row: RowFactory) -> None:
    results = ResultsFile(tmp_path / "tiny-20260101T000000Z.csv")
    assert results.done_keys() == set()
    results.append(make_row(pass_no=1, workload="mixed", clients=1))
    results.append(make_row(pass_no=1, workload="select-only", clients=4))
    results.append(make_row(pass_no=2, workload="mixed", clients=4, ok=False, tps=None))
    budget = float(make_row()["server_cpu_budget"])  # type: ignore[arg-type]
    expected = {(1, "mixed", 1, budget), (1, "select-only", 4, budget), (2, "mixed", 4, budget)}
    assert results.done_keys() == expected
    assert ResultsFile(results.path).done_keys() == expected  # read back from disk


def test_run_id_is_the_file_stem(tmp_path: Path) -> None:
    assert ResultsFile(tmp_path / "quick-20260101T000000Z.csv").run_id == "quick-20260101T000000Z"
    path = new_run_path(tmp_path, "tiny")
    assert path.parent == tmp_path
    assert path.name.startswith("tiny-") and path.suffix == ".csv"


# -- resuming ---------------------------------------------------------------------------------------------
def write_rows(folder: Path, name: str, count: int, spec_hash: str, make_row: RowFactory) -> Path:
    results = ResultsFile(folder / name)
    for number in range(1, count + 1):
        results.append(make_row(window_no=number, clients=number, spec_hash=spec_hash, run_id=results.run_id))
    return results.path


def test_resumes_the_incomplete_run_with_the_same_spec(tmp_path: Path, make_row: RowFactory) -> None:
    incomplete = write_rows(tmp_path, "tiny-20260101T000000Z.csv", 3, "aaaaaaaaaaaa", make_row)
    found = find_resumable(tmp_path, "tiny", "aaaaaaaaaaaa", planned=18)
    assert found is not None
    assert found.path == incomplete
    assert len(found.rows) == 3


def test_complete_runs_are_not_resumed(tmp_path: Path, make_row: RowFactory) -> None:
    write_rows(tmp_path, "tiny-20260101T000000Z.csv", 18, "aaaaaaaaaaaa", make_row)
    assert find_resumable(tmp_path, "tiny", "aaaaaaaaaaaa", planned=18) is None


def test_runs_of_another_spec_or_profile_are_not_resumed(tmp_path: Path, make_row: RowFactory) -> None:
    write_rows(tmp_path, "tiny-20260101T000000Z.csv", 3, "bbbbbbbbbbbb", make_row)
    write_rows(tmp_path, "quick-20260101T000000Z.csv", 3, "aaaaaaaaaaaa", make_row)
    assert find_resumable(tmp_path, "tiny", "aaaaaaaaaaaa", planned=18) is None


def test_resumes_the_newest_incomplete_run(tmp_path: Path, make_row: RowFactory) -> None:
    write_rows(tmp_path, "tiny-20260101T000000Z.csv", 2, "aaaaaaaaaaaa", make_row)
    newest = write_rows(tmp_path, "tiny-20260301T000000Z.csv", 5, "aaaaaaaaaaaa", make_row)
    write_rows(tmp_path, "tiny-20260401T000000Z.csv", 18, "aaaaaaaaaaaa", make_row)  # complete
    write_rows(tmp_path, "tiny-20260501T000000Z.csv", 1, "cccccccccccc", make_row)  # other spec
    found = find_resumable(tmp_path, "tiny", "aaaaaaaaaaaa", planned=18)
    assert found is not None
    assert found.path == newest


def test_nothing_to_resume_in_a_missing_folder(tmp_path: Path) -> None:
    assert find_resumable(tmp_path / "absent", "tiny", "aaaaaaaaaaaa", planned=18) is None


def test_a_full_disk_is_one_line_and_keeps_the_file(
    tmp_path: Path, make_row: RowFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "tiny-20260101T000000Z.csv"
    results = ResultsFile(path)
    results.append(make_row(window_no=1))
    before = path.read_bytes()

    def full(descriptor: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(results_file.os, "fsync", full)
    with pytest.raises(LabError) as caught:
        results.append(make_row(window_no=2))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"cannot write {path}: No space left on device; the file is unchanged")
    assert "rerun the same command to resume" in message
    assert path.read_bytes() == before
    assert list(tmp_path.iterdir()) == [path]
