"""`connlab validate` against generated contributions: what the contract allows passes, any one field taken
outside it is named, no input makes it raise, and nothing in results/ makes it wait.

Rows are generated within the contract (connlab.contract.columns and connlab.data.window_rules) and written
as the harness writes them (ResultsFile). Every test runs under pytest-timeout's limit: validation that
blocked (a named pipe opened for reading waits for a writer) fails its test instead of stalling the run.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import re
import shutil
import socket
import stat
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from connlab.contract.columns import (
    MAX_PLAUSIBLE_MS,
    NOT_RUN_ERROR,
    PUBLISHED_FILE_NAME,
    UPPER_BOUNDS,
    WINDOW_COLUMNS,
    Column,
)
from connlab.data import validate
from connlab.data.validate import validate_machine_folder, validate_results
from connlab.data.validate_cache import validate_results_cached
from connlab.lab.results_file import ResultsFile
from connlab.paths import MACHINE_FILE_NAME
from support.rows import machine_facts

# Validation of a generated folder takes milliseconds; a hang is what this limit catches.
pytestmark = pytest.mark.timeout(60)

PROBLEM = re.compile(r"^(?P<path>/\S(?:.*?)):(?P<line>[0-9]+): (?P<field>[^:]+): (?P<message>.+)$")
# Any problem line, whatever its field: one line, naming a path and a line number.
ONE_LINE_PROBLEM = re.compile(r"^/\S.*?:[0-9]+: .+$")
MACHINE = "box"
EXPERIMENT = "clients-sweep"
RUN_STAMP = "20250101T000000Z"
# Few examples each: enough to vary every column many times over, few enough for a run of seconds.
# No example database: a run leaves nothing in the working tree.
EXAMPLES = settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
COLUMNS = {column.name: column for column in WINDOW_COLUMNS}
# Free text as pgbench's error lines and the harness's names are: one line, no control characters.
ONE_LINE = st.text(
    st.characters(exclude_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=40
).filter(lambda text: NOT_RUN_ERROR not in text)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("properties")


@contextlib.contextmanager
def results_folder(base: Path) -> Iterator[Path]:
    """A fresh results/ under the module's temporary folder, for one example."""
    folder = Path(tempfile.mkdtemp(dir=base))
    try:
        yield folder / "results"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def rounded(low: float, high: float, places: int) -> st.SearchStrategy[float]:
    return st.floats(low, high, allow_nan=False, allow_infinity=False).map(lambda x: round(x, places))


@st.composite
def window(draw: st.DrawFn, *, clients: int, budget: float, ok: bool, tps: float) -> dict[str, Any]:
    """One window's figures within the contract: what pgbench and the harness could have written. tps: its
    throughput, where it has one, which no other pass of the window has (one that had, with every other
    figure too, would be a pasted pass: connlab.data.pasted_passes)."""
    duration = draw(st.integers(1, 1800))
    client_cores = draw(st.integers(1, 16))
    quota = draw(st.none() | rounded(0.1, 1.0, 2).map(lambda share: round(share * client_cores, 3)))
    allowed = quota or client_cores
    client_used = round(draw(st.floats(0, 1)) * allowed, 3)
    started = datetime(2025, 1, 1, tzinfo=UTC) + timedelta(seconds=draw(st.integers(0, 40_000_000)))
    percentiles = sorted(draw(st.lists(rounded(0.001, 10_000, 3), min_size=3, max_size=3)))
    row: dict[str, Any] = {
        "clients": clients,
        "jobs": draw(st.integers(1, min(clients, 16))),
        "duration_s": duration,
        "transport": draw(st.sampled_from(["unix", "tcp"])),
        "target": "direct",
        "started_at": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "ok": ok,
        "server_cpu_budget": budget,
        "server_cpu_cores": round(draw(st.floats(0, 1)) * budget, 3),
        "client_cores": client_cores,
        "client_cpu_budget": quota,
        "client_cpu_cores": client_used,
        # connlab.lab.counters: at least 90% of what pgbench was allowed (judged here on the written figure).
        "client_saturated": client_used >= 0.9 * allowed,
        "steal_pct": draw(rounded(0, 100, 2)),
        "cpu_pressure_pct": draw(st.none() | rounded(0, 100, 2)),
        "checkpoints": draw(st.integers(0, 5)),
        "autovacuums": draw(st.integers(0, 5)),
        "cpu_budget_method": draw(st.sampled_from(["cgroup-v1", "cgroup-v2", "taskset"])),
        "postgres_version": "15.18",
        "pgbench_flags": f"-n -b select-only -c {clients} -T {duration} -P 1 -l",
        "latency_p50_ms": percentiles[0],
        "latency_p95_ms": percentiles[1],
        "latency_p99_ms": percentiles[2],
    }
    rss = draw(st.none() | st.integers(0, 2**40))
    if rss is not None:
        row.update(mem_rss_sum_bytes=rss, mem_pss_sum_bytes=draw(st.integers(0, rss)), mem_backends=clients)
    if ok:
        row.update(
            exit_code=0,
            error="",
            tps=tps,
            # pgbench's tps is its transactions over the time run (window_rules._throughput_problems).
            transactions=max(1, round(tps * duration)),
            failed_transactions=0,
            latency_avg_ms=draw(rounded(0.01, 1000, 3)),
            latency_stddev_ms=draw(rounded(0, 100, 3)),
            initial_connection_ms=draw(rounded(0, 100, 3)),
            clients_connected=clients,
        )
    else:
        row.update(
            exit_code=draw(st.sampled_from([1, 2])),
            error=draw(ONE_LINE),
            tps=draw(st.none() | st.just(0.0) | st.just(tps)),
            clients_connected=draw(st.none() | st.integers(0, clients)),
        )
    return row


@st.composite
def run_rows(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]]]:
    """A complete run: each point (workload, clients) in every pass, each pass in its order."""
    profile = draw(st.sampled_from(["quick", "full", "tiny"]))
    # A point is a workload at a client count on a server budget, measured once in every pass.
    points = draw(st.lists(st.integers(1, 400), min_size=1, max_size=4, unique=True))
    budgets = [draw(st.sampled_from([0.25, 0.5, 1.0, 2.0, 4.0])) for _ in points]
    passes = draw(st.integers(1, 3))
    rates = [
        draw(st.lists(rounded(10, 100_000, 2), min_size=passes, max_size=passes, unique=True)) for _ in points
    ]
    rows = []
    for pass_no in range(1, passes + 1):
        for number, (clients, budget) in enumerate(zip(points, budgets, strict=True)):
            ok = draw(st.booleans() | st.just(True))
            tps = rates[number][pass_no - 1]
            rows.append({
                **draw(window(clients=clients, budget=budget, ok=ok, tps=tps)),
                "workload": f"w{number}",
                "pass_no": pass_no,
                "pass_order": "asc" if pass_no % 2 else "desc",
            })  # fmt: skip
    return profile, rows


def write_contribution(results: Path, profile: str, rows: list[dict[str, Any]]) -> Path:
    """results/box/ with its machine.yaml and the run: the run file's path."""
    run_id = f"{profile}-{RUN_STAMP}"
    path = results / MACHINE / EXPERIMENT / f"{run_id}.csv"
    run = ResultsFile(path)
    for number, row in enumerate(rows, start=1):
        run.append({
            **row, "run_id": run_id, "machine": MACHINE, "experiment": EXPERIMENT, "profile": profile,
            "spec_hash": "0123456789ab", "window_no": number,
        })  # fmt: skip
    facts = machine_facts(MACHINE, profile)
    (results / MACHINE).mkdir(parents=True, exist_ok=True)
    (results / MACHINE / MACHINE_FILE_NAME).write_text(yaml.safe_dump(facts, sort_keys=False))
    return path


def read_cells(path: Path) -> list[list[str]]:
    with path.open(newline="") as handle:
        return list(csv.reader(handle))


def write_cells(path: Path, rows: list[list[str]]) -> None:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    path.write_text(out.getvalue(), encoding="utf-8")


def problem_lines(results: Path) -> list[re.Match[str]]:
    """validate_results's lines, each parsed; an exception or an unparsable line fails the test."""
    problems = validate_results(results)
    matches = [PROBLEM.match(problem) for problem in problems]
    assert all(matches), [problem for problem, match in zip(problems, matches, strict=True) if not match]
    return [match for match in matches if match]


@EXAMPLES
@given(run=run_rows())
def test_rows_within_the_contract_are_valid(base: Path, run: tuple[str, list[dict[str, Any]]]) -> None:
    with results_folder(base) as results:
        path = write_contribution(results, *run)
        assert validate_results(results) == []
        # The quickest checks answer such a file, with the same (empty) answer.
        text = path.read_text(encoding="utf-8")
        assert validate._clean_file_problems(path, text, MACHINE) == []
        assert validate._shaped_file_problems(path, text, MACHINE) in (None, [])


def invalid_values(column: Column, row: dict[str, str]) -> list[str]:
    """Texts outside the contract for this column of this row, each refused for this column alone."""
    ok = row["ok"] == "true"
    values = []
    if column.required or (ok and column.required_when_ok):
        values.append("")
    if column.type in ("INTEGER", "BIGINT"):
        values += ["abc", "1.5", "9" * 20]
    elif column.type == "DOUBLE":
        values += ["fast", "nan", "inf", "1e999"]
    elif column.type == "BOOLEAN":
        values += ["yes", "TRUE"]
    if column.minimum == 0 and column.type != "VARCHAR":
        values.append("-1")
    if column.name in UPPER_BOUNDS:
        values += ["0", str(UPPER_BOUNDS[column.name] + 1)]
    if column.name.endswith("_ms"):
        values.append(str(MAX_PLAUSIBLE_MS * 2))
    if column.pattern is not None:
        values.append("<b>1</b>")
    # Values that parse, and no run could have written in this row (the cross-field rules).
    values += {
        "profile": ["weekly", "quick" if row["profile"] != "quick" else "full"],
        "started_at": ["2999-01-01T00:00:00Z", "2026-01-01 00:00:00", "yesterday", "2026-13-01T00:00:00Z"],
        "pass_order": ["desc" if row["pass_order"] == "asc" else "asc", "sideways"],
        "run_id": ["tiny-other"],
        "machine": ["other-box"],
        "experiment": ["pool-size"],
        "jobs": [str(int(row["clients"]) + 1)],
        "clients": ["0"],
        "duration_s": ["0"],
        "client_cores": ["0"],
        "server_cpu_budget": ["0"],
        "steal_pct": ["150"],
        # Doubled: less time than the window ran (halved may still fit a long enough tail of transactions).
        "tps": [str(float(row["tps"]) * 2)] if ok else [],
        "transactions": ["0"] if ok else [],
        "failed_transactions": ["3"] if ok else [],
        "exit_code": ["2"] if ok else [],
        "client_saturated": [_flipped_saturation(row)] if _flipped_saturation(row) else [],
    }.get(column.name, [])
    return values


def _flipped_saturation(row: dict[str, str]) -> str | None:
    """client_saturated turned over, where the CPU figures leave no doubt what it must be."""
    allowed = float(row["client_cpu_budget"] or 0) or float(row["client_cores"])
    if abs(float(row["client_cpu_cores"]) - 0.9 * allowed) < 0.01:
        return None
    return "false" if row["client_saturated"] == "true" else "true"


@pytest.mark.slow
# 150 examples of milliseconds each passed the module's 60-s hang limit on a busy 2-core machine: a hang is
# still caught, at five times that.
@pytest.mark.timeout(300)
@settings(EXAMPLES, max_examples=150)  # a column and a value of each example: more of them to cover
@given(run=run_rows(), data=st.data())
def test_any_field_outside_the_contract_is_named(
    base: Path, run: tuple[str, list[dict[str, Any]]], data: st.DataObject
) -> None:
    """One cell of one row set outside the contract: a line names that row and that column."""
    with results_folder(base) as results:
        path = write_contribution(results, *run)
        cells = read_cells(path)
        header = cells[0]
        row_no = data.draw(st.integers(1, len(cells) - 1), label="row")
        row = dict(zip(header, cells[row_no], strict=True))
        column = data.draw(st.sampled_from([name for name in header if invalid_values(COLUMNS[name], row)]))
        value = data.draw(st.sampled_from(invalid_values(COLUMNS[column], row)), label="value")
        cells[row_no][header.index(column)] = value
        write_cells(path, cells)
        named = [
            match
            for match in problem_lines(results)
            if (match["path"], match["line"], match["field"]) == (str(path), str(row_no + 1), column)
        ]
        assert named, (column, value, validate_results(results))


def _agree(path: Path, text: str) -> None:
    """Where a quick check answers a file, its answer is the row-by-row one."""
    slow = list(validate._window_problems(path, text, MACHINE))
    for check in (validate._shaped_file_problems, validate._clean_file_problems):
        answer = check(path, text, MACHINE)
        assert answer is None or answer == slow, (check.__name__, answer, slow)


@EXAMPLES
@given(run=run_rows(), data=st.data())
def test_any_text_spliced_into_a_run_file_gives_problem_lines(
    base: Path, run: tuple[str, list[dict[str, Any]]], data: st.DataObject
) -> None:
    with results_folder(base) as results:
        path = write_contribution(results, *run)
        text = path.read_text(encoding="utf-8")
        at = data.draw(st.integers(0, len(text)), label="at")
        cut = data.draw(st.integers(0, 40), label="cut")
        spliced = text[:at] + data.draw(st.text(max_size=60), label="inserted") + text[at + cut :]
        path.write_text(spliced, encoding="utf-8")
        problem_lines(results)
        _agree(path, spliced)


@EXAMPLES
@given(content=st.binary(max_size=2000), target=st.sampled_from(["run", "machine", "published"]))
def test_any_bytes_in_any_file_give_problem_lines(base: Path, content: bytes, target: str) -> None:
    with results_folder(base) as results:
        run_file = write_contribution(results, "full", [])  # machine.yaml only: the run is written next
        paths = {
            "run": run_file,
            "machine": results / MACHINE / MACHINE_FILE_NAME,
            "published": results / "published-x" / PUBLISHED_FILE_NAME,
        }
        paths[target].parent.mkdir(parents=True, exist_ok=True)
        paths[target].write_bytes(content)
        problems = validate_results(results)
        # machine.yaml's problems name its keys as fields, and a key may be any text: one line each, still.
        assert all(ONE_LINE_PROBLEM.match(problem) for problem in problems), problems
        assert all(problem.startswith(f"{results}/") for problem in problems), problems


# -- what is not a regular file ----------------------------------------------------------------------------
NOT_REGULAR = "not a regular file; results/ holds regular files and folders only"


@pytest.fixture
def contribution(tmp_path: Path, write_run: Any) -> Path:
    """results/ with box/, one valid run and its machine.yaml."""
    write_run(
        tmp_path / "results", MACHINE, [{"clients": 1}], profile="quick", run_id="quick-20260101T000000Z"
    )
    return tmp_path / "results"


def refused(results: Path, cache: Path) -> list[str]:
    """The problems validate_results and the cached validation (what `connlab validate` runs) report: the
    same ones."""
    problems = validate_results(results)
    assert validate_results_cached(results, cache) == problems
    return problems


def run_file(results: Path) -> Path:
    return results / MACHINE / EXPERIMENT / "quick-20260102T000000Z.csv"


def test_a_named_pipe_named_like_a_run_file_is_refused_unread(contribution: Path, tmp_path: Path) -> None:
    path = run_file(contribution)
    os.mkfifo(path)
    expected = f"{path}:1: (file): a named pipe (FIFO), {NOT_REGULAR}"
    assert refused(contribution, tmp_path / "cache") == [expected]
    assert list(validate_machine_folder(contribution / MACHINE)) == [expected]


def test_a_socket_named_like_a_run_file_is_refused(
    contribution: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = run_file(contribution)
    monkeypatch.chdir(path.parent)  # a socket's path is limited to 107 bytes: bound by its name
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(path.name)
        assert refused(contribution, tmp_path / "cache") == [f"{path}:1: (file): a socket, {NOT_REGULAR}"]


def test_a_symbolic_link_named_like_a_run_file_is_refused(contribution: Path, tmp_path: Path) -> None:
    path = run_file(contribution)
    path.symlink_to(next((contribution / MACHINE / EXPERIMENT).glob("*.csv")))
    expected = f"{path}:1: (file): symbolic links are not accepted in results"
    assert refused(contribution, tmp_path / "cache") == [expected]


@pytest.mark.parametrize(
    ("kind", "name"), [(stat.S_IFCHR, "a character device"), (stat.S_IFBLK, "a block device")]
)
def test_a_device_named_like_a_run_file_is_refused(
    contribution: Path, tmp_path: Path, kind: int, name: str
) -> None:
    path = run_file(contribution)
    try:
        os.mknod(path, kind | 0o600, os.makedev(1, 3))  # /dev/null's numbers
    except PermissionError:
        pytest.skip("making a device file needs root (CAP_MKNOD)")
    assert refused(contribution, tmp_path / "cache") == [f"{path}:1: (file): {name}, {NOT_REGULAR}"]


def test_a_folder_named_like_a_run_file_is_refused(contribution: Path, tmp_path: Path) -> None:
    path = run_file(contribution)
    path.mkdir()
    expected = f"{path}:1: (folder): a folder named like a run file; a run file is a regular file"
    assert refused(contribution, tmp_path / "cache") == [expected]


@pytest.mark.parametrize("name", [MACHINE_FILE_NAME, PUBLISHED_FILE_NAME])
def test_a_named_pipe_for_machine_yaml_or_published_csv_is_refused(
    contribution: Path, tmp_path: Path, name: str
) -> None:
    folder = contribution / (MACHINE if name == MACHINE_FILE_NAME else "published-x")
    if name == PUBLISHED_FILE_NAME:
        folder.mkdir()
        published = machine_facts(
            "published-x",
            "published",
            cpu_budget_method="published",
            published=True,
            article="A",
            server_cores=2,
        )
        (folder / MACHINE_FILE_NAME).write_text(yaml.safe_dump(published))
    else:
        (folder / name).unlink()
    os.mkfifo(folder / name)
    expected = f"{folder / name}:1: (file): a named pipe (FIFO), {NOT_REGULAR}"
    assert refused(contribution, tmp_path / "cache") == [expected]


def test_a_named_pipe_at_the_top_of_results_is_refused(contribution: Path, tmp_path: Path) -> None:
    for name in ("stray", ".gitkeep"):
        os.mkfifo(contribution / name)
    assert refused(contribution, tmp_path / "cache") == [
        f"{contribution / name}:1: (file): results/ holds one folder per machine and nothing else"
        for name in (".gitkeep", "stray")
    ]


def test_a_file_replaced_by_a_pipe_after_its_lstat_is_not_waited_on(
    contribution: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """lstat said regular file, then the path became a named pipe: the open neither follows nor blocks,
    and fstat refuses what it opened."""
    path = run_file(contribution)
    os.mkfifo(path)
    regular, real_lstat = os.lstat(contribution / MACHINE / MACHINE_FILE_NAME), os.lstat

    def lstat(target: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        return regular if Path(target) == path else real_lstat(target, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", lstat)
    assert validate._read_text(path, validate.MAX_FILE_BYTES) == (None, f"a named pipe (FIFO), {NOT_REGULAR}")
    assert validate.regular_file_bytes(path) is None


def test_a_folder_named_machine_yaml_is_refused(contribution: Path, tmp_path: Path) -> None:
    path = contribution / MACHINE / MACHINE_FILE_NAME
    path.unlink()
    path.mkdir()
    expected = f"{path}:1: (file): a folder where a regular file belongs"
    assert refused(contribution, tmp_path / "cache") == [expected]
