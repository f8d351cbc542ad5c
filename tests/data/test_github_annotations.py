"""`connlab validate --format github`: each problem an error annotation on its file and line, escaped as
GitHub's toolkit escapes workflow commands, so that nothing in a contribution can split or add a command."""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from connlab.data.github_annotations import annotation, escape_data, escape_property, parse_problem
from connlab.paths import MACHINE_FILE_NAME
from support.helpers import connlab

if TYPE_CHECKING:
    from support.rows import RunWriter

RUN_ID = "tiny-20260101T000000Z"


def test_a_message_is_escaped_as_the_toolkit_escapes_data() -> None:
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"


def test_a_property_is_escaped_as_the_toolkit_escapes_properties() -> None:
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_a_problem_line_is_an_error_on_its_file_and_line(tmp_path: Path) -> None:
    problem = f"{tmp_path}/results/box/machine.yaml:7: cores: expected 2, got 1: 50% off"
    assert annotation(problem, tmp_path) == (
        "::error file=results/box/machine.yaml,line=7,title=cores::expected 2, got 1: 50%25 off"
    )


def test_a_path_holding_what_looks_like_a_line_number_is_split_where_the_file_is(tmp_path: Path) -> None:
    """A contributor names the files: the split taken is the one whose path exists."""
    odd = tmp_path / "results" / "box" / "notes:3: (file): fine.txt"
    odd.parent.mkdir(parents=True)
    odd.write_text("x\n")
    problem = parse_problem(f"{odd}:1: (file): unexpected file")
    assert problem is not None
    assert (problem.path, problem.line, problem.field, problem.message) == (
        str(odd),
        1,
        "(file)",
        "unexpected file",
    )


def test_a_line_of_no_problem_form_annotates_the_run(tmp_path: Path) -> None:
    assert annotation("something odd\nhappened", tmp_path) == "::error::something odd%0Ahappened"


def bad_contribution(results: Path, write_run: RunWriter) -> int:
    """results/box/ with a malformed cell on line 3 of its run file and a machine.yaml whose cores are not
    a number; the line of machine.yaml's cores."""
    rows = [{"workload": "mixed", "clients": clients} for clients in (1, 2, 4)]
    run_file = write_run(results, "box", rows, profile="tiny", run_id=RUN_ID)
    with run_file.open(newline="") as handle:
        cells = list(csv.reader(handle))
    cells[2][cells[0].index("tps")] = "12,5%"  # a comma and a percent sign: both escaped where they must be
    with run_file.open("w", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows(cells)
    machine_yaml = results / "box" / MACHINE_FILE_NAME
    lines = machine_yaml.read_text().splitlines()
    cores_line = next(number for number, line in enumerate(lines, 1) if line.startswith("cores:"))
    lines[cores_line - 1] = "cores: '2, or 100%'"
    machine_yaml.write_text("\n".join(lines) + "\n")
    return cores_line


@pytest.mark.process
def test_a_bad_contribution_gives_one_annotation_per_problem(tmp_path: Path, write_run: RunWriter) -> None:
    """The results folder stands where a checkout's results/ stands: files are named from its parent, the
    checkout's root, as GitHub names a pull request's files."""
    cores_line = bad_contribution(tmp_path / "results", write_run)
    env = {
        **os.environ,
        "CONNLAB_RESULTS_DIR": str(tmp_path / "results"),
        "CONNLAB_BUILD_DIR": str(tmp_path / "build"),
    }
    result = connlab("validate", "--format", "github", env=env)
    run_file = f"results/box/clients-sweep/{RUN_ID}.csv"
    assert result.stdout.splitlines() == [
        f"::error file=results/box/machine.yaml,line={cores_line},title=cores::Input should be a valid "
        "integer, unable to parse string as an integer (got '2, or 100%25')",
        f"::error file={run_file},line=3,title=tps::expected double (got '12,5%25')",
    ]
    assert result.returncode == 1
    assert result.stderr.strip() == "2 problem(s) in results/"


@pytest.mark.process
def test_a_file_name_cannot_add_a_workflow_command(tmp_path: Path, write_run: RunWriter) -> None:
    """A line break in a file's name would start a command of the contributor's on the next line of the
    step's output; escaped, each problem stays one annotation."""
    rows = [{"workload": "mixed", "clients": 1}]
    write_run(tmp_path / "results", "box", rows, profile="tiny", run_id=RUN_ID)
    (tmp_path / "results" / "box" / "x\n::warning title=pwned::injected").write_text("x\n")
    env = {
        **os.environ,
        "CONNLAB_RESULTS_DIR": str(tmp_path / "results"),
        "CONNLAB_BUILD_DIR": str(tmp_path / "build"),
    }
    result = connlab("validate", "--format", "github", env=env)
    lines = result.stdout.splitlines()
    assert lines, result.stderr
    assert all(line.startswith("::error ") for line in lines), lines
    assert [line for line in lines if "injected" in line] == [
        "::error file=results/box/x%0A%3A%3Awarning title=pwned%3A%3Ainjected,line=1,title=(file)::"
        "unexpected file; this folder holds machine.yaml and <experiment>/<run-id>.csv"
    ]
