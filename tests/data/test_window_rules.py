"""connlab.data.window_rules: rows whose every cell parses but which no run could have written.

Each rule is held to three things: the rows the harness writes pass it (the fixture's rows, pgbench's golden
outputs as the harness turns them into rows, every committed row), a row that breaks it is refused with one
`path:line: field: reason` line naming the field, and the row shapes (validation's quickest check) never
let such a row through."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from connlab.data import validate, window_rules
from connlab.data.window_rules import RowContext, row_context, window_problems
from connlab.lab.pgbench import parse_report
from connlab.lab.results_file import _format
from support.paths import GOLDEN_DIR, PINNED_RESULTS

if TYPE_CHECKING:
    from support.rows import RowFactory, RunWriter

PROBLEM = re.compile(r"^(?P<path>/\S(?:.*?)):(?P<line>[0-9]+): (?P<field>[^:]+): (?P<message>.+)$")
NOW = datetime(2026, 6, 1, tzinfo=UTC)


@pytest.fixture
def context() -> RowContext:
    return row_context("clients-sweep", now=NOW)


def as_text(row: Mapping[str, Any]) -> dict[str, str]:
    """A row as the harness writes it and validation reads it back."""
    return {name: _format(value) for name, value in row.items()}


def fields(problems: list[str]) -> list[str]:
    return [problem.split(":", 1)[0] for problem in problems]


def test_the_fixtures_row_keeps_every_rule(make_row: RowFactory, context: RowContext) -> None:
    assert window_problems(as_text(make_row()), context) == []
    # The fixture derives the figures the rules tie to others from what a test gives.
    row = make_row(tps=5000.0, pass_no=2, client_saturated=True)
    assert window_problems(as_text(row), context) == []


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"profile": "weekly"}, "profile", "'weekly' is not a profile of clients-sweep (quick, full, tiny)"),
        ({"profile": "quick"}, "profile", "'quick', but the run id says 'full'"),
        ({"started_at": "2026-01-01 00:00:00"}, "started_at", "expected a UTC time as YYYY-MM-DDTHH:MM:SSZ"),
        ({"started_at": "2026-01-01T00:00:00.5Z"}, "started_at", "expected a UTC time"),
        ({"started_at": "2026-01-01T00:00:00+00:00"}, "started_at", "expected a UTC time"),
        ({"started_at": "2026-02-30T00:00:00Z"}, "started_at", "expected a UTC time"),
        ({"started_at": "2026-06-03T00:00:00Z"}, "started_at", "2026-06-03T00:00:00Z is in the future"),
        ({"pass_order": "desc"}, "pass_order", "'desc', but pass 1 runs asc"),
        ({"clients": 0, "jobs": 0}, "clients", "0; pgbench runs at least one client"),
        ({"jobs": 2}, "jobs", "2 threads for 1 clients"),
        ({"jobs": 0}, "jobs", "0 threads for 1 clients"),
        ({"duration_s": 0}, "duration_s", "0; pgbench's -T is at least 1 s"),
        ({"client_cores": 0}, "client_cores", "0; pgbench runs on at least one core"),
        ({"server_cpu_budget": 0.0}, "server_cpu_budget", "0 cores"),
        ({"clients_connected": 2}, "clients_connected", "2 of 1 clients"),
        ({"clients": 4, "clients_connected": 3}, "clients_connected", "3 of 4 in a window marked ok"),
        ({"exit_code": 2}, "exit_code", "2 in a window marked ok"),
        ({"ok": False, "exit_code": 0, "error": ""}, "error", "empty in a window marked failed"),
        ({"client_saturated": True, "client_cpu_cores": 0.5}, "client_saturated", "true, but pgbench used"),
        ({"client_cpu_cores": 0.95}, "client_saturated", "false, but pgbench used 0.95 of its 1 cores"),
        ({"client_cpu_budget": 2.0}, "client_cpu_budget", "2 cores is more than pgbench's 1 cores"),
        ({"client_cpu_cores": 3.0, "client_saturated": True}, "client_cpu_cores", "3, more than the 1"),
        ({"server_cpu_cores": 2.5}, "server_cpu_cores", "2.5, more than the server's budget of 1"),
        ({"steal_pct": 120.0}, "steal_pct", "120% of the CPU time"),
        ({"cpu_pressure_pct": 180.0}, "cpu_pressure_pct", "180% of the window"),
        ({"latency_p95_ms": 0.5}, "latency_p95_ms", "0.5 ms is below latency_p50_ms (0.9 ms)"),
        ({"latency_p95_ms": None, "latency_p99_ms": 0.5}, "latency_p99_ms", "below latency_p50_ms"),
        ({"mem_pss_sum_bytes": 2000, "mem_rss_sum_bytes": 1000}, "mem_pss_sum_bytes", "more than mem_rss"),
        ({"pooler_pss_peak_bytes": 9, "pooler_rss_peak_bytes": 8}, "pooler_pss_peak_bytes", "more than"),
        ({"pooler_start_pss_bytes": 9, "pooler_start_rss_bytes": 8}, "pooler_start_pss_bytes", "more than"),
        ({"pool_cl_waiting_avg": 3.5, "pool_cl_waiting_max": 3}, "pool_cl_waiting_avg", "more than"),
        ({"transactions": 0}, "transactions", "0 in a window marked ok"),
        ({"tps": 0.0}, "tps", "0 with 15000 transactions"),
        ({"tps": 2000.0, "transactions": 15000}, "tps", "is not 15000 transactions over a 15 s window"),
        ({"tps": 500.0, "transactions": 15000}, "tps", "(pgbench's tps is transactions / time run"),
    ],
)
def test_a_row_that_breaks_a_rule_is_refused_naming_its_field(
    make_row: RowFactory, context: RowContext, changes: dict[str, Any], field: str, message: str
) -> None:
    problems = window_problems(as_text(make_row(**changes)), context)
    assert fields(problems) == [field], problems
    assert message in problems[0]


def test_a_profile_no_spec_knows_is_checked_against_the_contracts(make_row: RowFactory) -> None:
    """A folder that names no experiment (the aggregation ignores it) still holds a known profile."""
    context = row_context("no-such-experiment", now=NOW)
    assert context.profiles == ("quick", "full", "tiny")
    assert window_problems(as_text(make_row()), context) == []
    assert fields(window_problems(as_text(make_row(profile="hourly")), context)) == ["profile"]


def test_a_failed_window_may_lack_what_an_ok_one_needs(make_row: RowFactory, context: RowContext) -> None:
    """pgbench's figures are for windows that counted: a failed one says why, and nothing else is asked."""
    refused = make_row(
        ok=False, exit_code=1, error="FATAL: sorry, too many clients already", tps=None, transactions=None,
        failed_transactions=None, latency_avg_ms=None, clients=150, jobs=1, clients_connected=99,
    )  # fmt: skip
    assert window_problems(as_text(refused), context) == []
    # An aborted run still prints a tps pgbench did not count: no rule ties it to anything.
    aborted = make_row(ok=False, exit_code=2, error="run was aborted", tps=12.0, transactions=15000)
    assert window_problems(as_text(aborted), context) == []
    # Exit 0 with no tps is a failure that explains itself (no transaction completed).
    silent = make_row(ok=False, exit_code=0, error="", tps=None, transactions=0)
    assert window_problems(as_text(silent), context) == []


def test_tps_is_held_to_pgbenchs_definition(make_row: RowFactory, context: RowContext) -> None:
    """15000 transactions in a 15 s window: about 1000 tps, and off by a fifth is refused either way."""
    for tps in (1000.0, 1001.0, 1016.0, 999.7):
        assert window_problems(as_text(make_row(tps=tps, transactions=15000)), context) == [], tps
    for tps in (800.0, 1200.0, 2000.0, 500.0):
        assert fields(window_problems(as_text(make_row(tps=tps, transactions=15000)), context)) == ["tps"]
    # Clients that took most of the window to connect leave pgbench a shorter time to count over: a higher
    # tps than the window's length implies, up to the window less the connection time.
    slow_start = make_row(tps=4000.0, transactions=15000, initial_connection_ms=11_250.0)
    assert window_problems(as_text(slow_start), context) == []
    # The last transactions may run past the window: the longer they can have been, the lower the tps may be.
    long_tail = make_row(
        tps=800.0, transactions=1500, duration_s=1, latency_avg_ms=500.0, latency_stddev_ms=80.0
    )
    assert window_problems(as_text(long_tail), context) == []
    short_tail = make_row(
        tps=800.0, transactions=1500, duration_s=1, latency_avg_ms=1.0, latency_stddev_ms=0.1
    )
    assert fields(window_problems(as_text(short_tail), context)) == ["tps"]


def golden_rows() -> Iterator[tuple[str, dict[str, Any]]]:
    """Each golden pgbench output that counted as a window, as the row fields the harness takes from it."""
    golden = GOLDEN_DIR / "pgbench"
    for path in sorted(golden.glob("*.txt")):
        output = path.read_text()
        report = parse_report(output, int(path.with_suffix(".exit").read_text().strip()))
        if not report.ok:
            continue
        number = {
            name: int(re.search(rf"^{label}: ([0-9]+)", output, re.M)[1])  # type: ignore[index]
            for name, label in (("clients", "number of clients"), ("jobs", "number of threads"))
        }
        duration = int(re.search(r"^duration: ([0-9]+) s", output, re.M)[1])  # type: ignore[index]
        yield (
            path.stem,
            {
                **number,
                "duration_s": duration,
                "tps": report.tps,
                "transactions": report.transactions,
                "failed_transactions": report.failed_transactions,
                "latency_avg_ms": report.latency_avg_ms,
                "latency_stddev_ms": report.latency_stddev_ms,
                "initial_connection_ms": report.initial_connection_ms,
                "avg_connection_ms": report.avg_connection_ms,
            },
        )


def test_every_golden_pgbench_window_keeps_the_rules(make_row: RowFactory, context: RowContext) -> None:
    checked = 0
    for name, figures in golden_rows():
        row = make_row(**figures, clients_connected=figures["clients"])
        assert window_problems(as_text(row), context) == [], name
        # The same window with its tps doubled is refused; halved too where pgbench reported the latency's
        # stddev (-P, as the harness always runs it), which bounds how long its last transactions ran.
        for factor in (2.0, 0.5) if figures["latency_stddev_ms"] is not None else (2.0,):
            wrong = as_text({**row, "tps": figures["tps"] * factor})
            assert fields(window_problems(wrong, context)) == ["tps"], (name, factor)
        checked += 1
    assert checked >= 5


def test_every_committed_row_keeps_the_rules() -> None:
    rows = 0
    for path in sorted(PINNED_RESULTS.glob("*/*/*.csv")):
        context = row_context(path.parent.name)
        with path.open(newline="") as handle:
            for line_no, values in enumerate(csv.DictReader(handle), start=2):
                assert window_problems(values, context) == [], f"{path}:{line_no}"
                rows += 1
    assert rows > 1000


class ReadRecorder(dict[str, str]):
    """A row that remembers which columns were read."""

    def __init__(self, values: Mapping[str, str]) -> None:
        super().__init__(values)
        self.read: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> str:
        self.read.add(key)
        return super().__getitem__(key)


def test_the_row_shapes_capture_every_column_the_rules_read(
    make_row: RowFactory, context: RowContext
) -> None:
    """The quickest check hands the rules only the columns it captured: a rule that read another would see
    it empty there and let its row through."""
    read: set[str] = set()
    for changes in ({}, {"ok": False, "error": ""}, {"client_cpu_budget": 0.5, "mem_pss_sum_bytes": 1}):
        row = ReadRecorder(as_text(make_row(**changes)))
        window_problems(row, context)
        read |= row.read
    assert read <= window_rules.COLUMNS_READ, read - window_rules.COLUMNS_READ


def test_a_row_that_breaks_a_rule_is_not_passed_by_the_quick_checks(
    tmp_path: Path, write_run: RunWriter
) -> None:
    """A file whose every cell has its shape, one row of which breaks a rule: the row shapes and the
    column-wise check decline it, and the row-by-row check names the line and the field."""
    rows = [{"clients": clients} for clients in (1, 2, 4)]
    path = write_run(tmp_path / "results", "box", rows, profile="tiny", run_id="tiny-20260101T000000Z")
    text = path.read_text()
    path.write_text(text.replace(",1000.0,", ",2000.0,", 1))  # the first row's tps, doubled
    text = path.read_text()
    assert validate._shaped_file_problems(path, text, "box") is None
    assert validate._clean_file_problems(path, text, "box") is None
    [problem] = validate.validate_csv(path, "box")
    match = PROBLEM.match(problem)
    assert match and (match["path"], match["line"], match["field"]) == (str(path), "2", "tps"), problem


def test_a_published_figure_is_in_the_unit_its_metric_names() -> None:
    assert window_rules.published_problems({"metric": "latency_avg_ms", "unit": "ms"}) == []
    assert window_rules.published_problems({"metric": "tps_share_of_peak", "unit": "share"}) == []
    assert window_rules.published_problems({"metric": "kappa", "unit": ""}) == []
    [problem] = window_rules.published_problems({"metric": "latency_avg_ms", "unit": "s"})
    assert problem == "unit: 's', but the metric 'latency_avg_ms' is in ms"
    assert fields(window_rules.published_problems({"metric": "tps", "unit": "ms"})) == ["unit"]
