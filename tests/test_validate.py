"""`connlab validate`: every problem in a results folder is one line, `path:line: field: what is wrong`."""

from __future__ import annotations

import csv
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from connlab.data.columns import COLUMN_NAMES
from connlab.data.validate import validate_csv, validate_machine_folder, validate_results

if TYPE_CHECKING:
    from conftest import RunWriter

PROBLEM = re.compile(r"^(?P<path>/\S(?:.*?)):(?P<line>[0-9]+): (?P<field>[^:]+): (?P<message>.+)$")
Edit = Callable[[list[list[str]]], None]


@pytest.fixture
def machine(tmp_path: Path, write_run: RunWriter) -> Path:
    """results/box/ with machine.yaml and one valid run of three windows."""
    rows = [{"workload": "mixed", "clients": clients} for clients in (1, 2, 4)]
    write_run(tmp_path / "results", "box", rows, profile="tiny", run_id="tiny-20260101T000000Z")
    return tmp_path / "results" / "box"


@pytest.fixture
def csv_path(machine: Path) -> Path:
    return machine / "clients-sweep" / "tiny-20260101T000000Z.csv"


def edit_csv(path: Path, edit: Edit) -> None:
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    edit(rows)
    with path.open("w", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows(rows)


def set_cell(row_no: int, column: str, value: str) -> Edit:
    """row_no counts data rows from 1 (file line row_no + 1)."""

    def edit(rows: list[list[str]]) -> None:
        rows[row_no][rows[0].index(column)] = value

    return edit


def only_problem(problems: list[str]) -> re.Match[str]:
    assert len(problems) == 1, problems
    match = PROBLEM.match(problems[0])
    assert match, problems[0]
    return match


def test_a_valid_folder_has_no_problems(machine: Path) -> None:
    assert list(validate_machine_folder(machine)) == []
    assert validate_results(machine.parent) == []


def test_an_empty_or_missing_results_folder_is_valid(tmp_path: Path) -> None:
    assert validate_results(tmp_path / "absent") == []
    assert validate_results(tmp_path) == []


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("clients", "abc", "expected integer (got 'abc')"),
        ("tps", "fast", "expected double (got 'fast')"),
        ("tps", "nan", "not a finite number ('nan')"),
        ("ok", "yes", "expected true or false (got 'yes')"),
        ("tps", "-1.5", "negative value -1.5"),
        ("clients", "-4", "negative value -4"),
        ("machine", "", "required value is empty"),
        ("run_id", "tiny-other", "'tiny-other' does not match the file name"),
    ],
)
def test_a_bad_value_is_one_line_naming_row_and_column(
    csv_path: Path, column: str, value: str, message: str
) -> None:
    edit_csv(csv_path, set_cell(2, column, value))
    problem = only_problem(list(validate_csv(csv_path)))
    assert problem["path"] == str(csv_path)
    assert problem["line"] == "3"  # header is line 1, the second row line 3
    assert problem["field"] == column
    assert problem["message"] == message


def test_an_empty_optional_value_is_fine(csv_path: Path) -> None:
    edit_csv(csv_path, set_cell(1, "latency_p99_ms", ""))
    edit_csv(csv_path, set_cell(1, "tps", ""))
    assert list(validate_csv(csv_path)) == []


def test_missing_column(csv_path: Path) -> None:
    def drop(rows: list[list[str]]) -> None:
        index = rows[0].index("steal_pct")
        for row in rows:
            del row[index]

    edit_csv(csv_path, drop)
    problem = only_problem(list(validate_csv(csv_path)))
    assert (problem["line"], problem["field"], problem["message"]) == (
        "1",
        "steal_pct",
        "required column missing",
    )


def test_unknown_column(csv_path: Path) -> None:
    def add(rows: list[list[str]]) -> None:
        for number, row in enumerate(rows):
            row.append("colour" if number == 0 else "blue")

    edit_csv(csv_path, add)
    problem = only_problem(list(validate_csv(csv_path)))
    assert (problem["line"], problem["field"], problem["message"]) == ("1", "colour", "unknown column")


def test_row_with_the_wrong_number_of_fields(csv_path: Path) -> None:
    edit_csv(csv_path, lambda rows: rows[3].pop())
    problem = only_problem(list(validate_csv(csv_path)))
    assert (problem["line"], problem["field"]) == ("4", "(row)")
    assert problem["message"] == f"{len(COLUMN_NAMES) - 1} fields, expected {len(COLUMN_NAMES)}"


def test_a_file_that_is_not_utf8(csv_path: Path) -> None:
    csv_path.write_bytes(csv_path.read_bytes().replace(b"mixed", b"mix\xffd", 1))
    problem = only_problem(list(validate_csv(csv_path)))
    assert (problem["line"], problem["field"], problem["message"]) == ("1", "(file)", "not UTF-8 text")


def test_an_empty_file(csv_path: Path) -> None:
    csv_path.write_text("")
    problem = only_problem(list(validate_csv(csv_path)))
    assert (problem["line"], problem["field"]) == ("1", "(header)")


def test_a_symbolic_link_inside_a_machine_folder(machine: Path, csv_path: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.csv"
    outside.write_text(csv_path.read_text())
    link = csv_path.with_name("tiny-20260102T000000Z.csv")
    link.symlink_to(outside)
    problem = only_problem(list(validate_machine_folder(machine)))
    assert problem["path"] == str(link)
    assert (problem["line"], problem["field"]) == ("1", "(file)")
    assert "symbolic links are not accepted" in problem["message"]


def test_a_symbolic_link_as_a_machine_folder(machine: Path, tmp_path: Path) -> None:
    """results/<machine> itself may not be a link either: aggregation would follow it out of results/."""
    link = machine.parent / "linked-box"
    link.symlink_to(machine)
    problems = [problem for problem in validate_results(machine.parent) if "linked-box" in problem]
    assert problems, "a symlinked machine folder was accepted"
    problem = only_problem(problems)
    assert problem["path"] == str(link)
    assert "symbolic link" in problem["message"]


def test_unsafe_folder_name(machine: Path) -> None:
    bad = machine.rename(machine.with_name("Bad Name"))
    problem = only_problem(list(validate_machine_folder(bad)))
    assert problem["path"] == str(bad)
    assert (problem["line"], problem["field"]) == ("1", "(folder)")
    assert "machine id must be lower-case" in problem["message"]
    assert validate_results(bad.parent) == [problem.string]


def test_missing_machine_file(machine: Path) -> None:
    (machine / "machine.yaml").unlink()
    problem = only_problem(list(validate_machine_folder(machine)))
    assert problem["path"] == str(machine / "machine.yaml")
    assert (problem["line"], problem["field"]) == ("1", "(file)")
    assert problem["message"].startswith("missing")


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("id: box\nos: Debian: 12\ncores: 2\n", "2", "mapping values are not allowed here"),
        ("id: box\ncpu_model: [unclosed\nkernel: 6.1\n", "3", "expected ',' or ']', but got ':'"),
    ],
)
def test_broken_machine_yaml_names_the_line(machine: Path, text: str, line: str, message: str) -> None:
    (machine / "machine.yaml").write_text(text)
    problem = only_problem(list(validate_machine_folder(machine)))
    assert problem["path"] == str(machine / "machine.yaml")
    assert (problem["line"], problem["field"], problem["message"]) == (line, "(yaml)", message)


def test_machine_yaml_must_be_a_mapping(machine: Path) -> None:
    (machine / "machine.yaml").write_text("- just\n- a list\n")
    problem = only_problem(list(validate_machine_folder(machine)))
    assert (problem["field"], problem["message"]) == ("(top level)", "expected a mapping")


def test_every_problem_of_a_folder_is_reported(machine: Path, csv_path: Path) -> None:
    edit_csv(csv_path, set_cell(1, "tps", "-1"))
    edit_csv(csv_path, set_cell(3, "clients", "many"))
    (machine / "machine.yaml").unlink()
    problems = list(validate_machine_folder(machine))
    assert len(problems) == 3
    assert all(PROBLEM.match(problem) for problem in problems)
    assert {(m["line"], m["field"]) for m in map(PROBLEM.match, problems) if m} == {
        ("1", "(file)"),
        ("2", "tps"),
        ("4", "clients"),
    }
