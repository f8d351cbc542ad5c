"""connlab.data.row_shapes: a run file read line by line against the shapes of a valid window's row.

tests/data/test_validate.py holds its answers to the row-by-row check's on malformed contributions and on
every single odd cell; these tests pin what it reads and where it declines a file to the other checks."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from connlab.contract.columns import WINDOW_COLUMNS
from connlab.data import row_shapes, validate

if TYPE_CHECKING:
    from support.rows import RunWriter

RUN_ID = "tiny-20260101T000000Z"


@pytest.fixture
def run_text(tmp_path: Path, write_run: RunWriter) -> str:
    """A valid run file of three windows, one of which failed."""
    rows = [{"workload": "mixed", "clients": clients} for clients in (1, 2, 4)]
    write_run(tmp_path / "results", "box", rows, profile="tiny", run_id=RUN_ID)
    text = (tmp_path / "results" / "box" / "clients-sweep" / f"{RUN_ID}.csv").read_text(encoding="utf-8")
    return _with_cells(text, 3, ok="false", error="pgbench: timed out", tps="", latency_avg_ms="")


def _with_cells(text: str, row_no: int, **cells: str) -> str:
    rows = list(csv.reader(io.StringIO(text)))
    for name, value in cells.items():
        rows[row_no][rows[0].index(name)] = value
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def _read(text: str) -> row_shapes.Windows | None:
    header, _, body = text.partition("\n")
    return row_shapes.read_windows(header, body)


def test_every_column_written_today_has_a_shape() -> None:
    """A column whose check is not written as a pattern would send every file to the slower checks."""
    for column in WINDOW_COLUMNS:
        for ok in (True, False):
            assert row_shapes._cell(column, ok) is not None, (column.name, ok)


def test_ok_and_failed_windows_are_read_with_their_places(run_text: str) -> None:
    windows = _read(run_text)
    assert windows is not None
    assert windows.named == {"run_id": {RUN_ID}, "machine": {"box"}, "experiment": {"clients-sweep"}}
    assert sorted(place[:3] for place in windows.places) == [
        ("1", "mixed", "1"), ("1", "mixed", "2"), ("1", "mixed", "4"),
    ]  # fmt: skip


def test_a_quoted_text_is_read_where_its_value_is_not_compared(run_text: str) -> None:
    # The CSV writer quotes an error message holding a comma or a quote; it is one valid text.
    assert _read(_with_cells(run_text, 3, error='pgbench: "x", then y')) is not None


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda text: text.replace(",mixed,", ',"mixed",', 1), id="a quoted workload"),
        pytest.param(lambda text: text.replace("\n", "\r\n"), id="CRLF lines"),
        pytest.param(lambda text: text.replace("mixed", "mi\x85xed", 1), id="a line break for splitlines"),
        pytest.param(lambda text: "\ufeff" + text, id="a byte-order mark"),
        pytest.param(lambda text: text + "\n", id="a blank line"),
        pytest.param(lambda text: text.replace(",true,", ",True,", 1), id="ok neither true nor false"),
        pytest.param(lambda text: _with_cells(text, 1, tps=""), id="an ok window without its throughput"),
        pytest.param(lambda text: _with_cells(text, 1, failed_transactions="2"), id="an ok window failing"),
        pytest.param(lambda text: _with_cells(text, 2, tps="1e3"), id="an exponent"),
        pytest.param(lambda text: _with_cells(text, 2, latency_avg_ms="123456"), id="six digits of ms"),
        pytest.param(lambda text: _with_cells(text, 2, pass_no="100"), id="the passes' bound"),
        pytest.param(lambda text: _with_cells(text, 2, error="x" * 5000), id="a text over its bound"),
    ],
)
def test_a_file_outside_the_shapes_is_left_to_the_other_checks(
    run_text: str, change: Callable[[str], str]
) -> None:
    assert _read(change(run_text)) is None


def test_a_window_written_twice_one_workload_quoted_is_a_repeat_for_validation(
    tmp_path: Path, run_text: str
) -> None:
    """Quoted and unquoted, one workload is one value: the shapes read neither, and the row-by-row check
    names the repeat."""
    header, first, *rest = run_text.splitlines(keepends=True)
    path = tmp_path / "results" / "box" / "clients-sweep" / f"{RUN_ID}.csv"
    path.write_text(header + first + first.replace(",mixed,", ',"mixed",') + "".join(rest), encoding="utf-8")
    problems = list(validate.validate_csv(path, "box"))
    assert len(problems) == 1 and "repeats line 2" in problems[0], problems


def test_a_line_longer_than_the_csv_modules_largest_field_is_left_to_the_other_checks(run_text: str) -> None:
    # A pattern's repetition has no bound of its own: the line's length stands in for its field's.
    events = ";".join(f"Lock:e{n}=1" for n in range(20_000))
    assert len(events) > csv.field_size_limit()
    assert _read(_with_cells(run_text, 1, wait_events=events)) is None
    assert _read(_with_cells(run_text, 1, wait_events="running=3;Lock:tuple=1")) is not None
