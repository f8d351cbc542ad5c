"""pgbench: the flags the harness passes, and the parser of pgbench 15's final report.

The golden files are real pgbench 15 outputs (stdout and stderr together) with their exit codes, and one of
pgbench 14 (a PyPI build), which prints no failed-transactions line; the expected figures below are copied
from those files by hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from connlab.lab.pgbench import (
    NO_TRANSACTION,
    PgbenchOptions,
    build_command,
    latency_percentiles_ms,
    parse_report,
    percentile,
    read_transaction_latencies_us,
)

TOO_MANY = "sorry, too many clients already"


@dataclass(frozen=True)
class Golden:
    name: str
    ok: bool
    tps: float | None
    transactions: int | None
    failed_transactions: int | None
    latency_avg_ms: float | None
    latency_stddev_ms: float | None
    initial_connection_ms: float | None
    avg_connection_ms: float | None


GOLDEN = [
    Golden("connect_per_tx_c1", True, 329.637329, 989, 0, 0.711, 0.086, None, 2.322),
    Golden("mixed_c2", True, 16152.253697, 48421, 0, 0.122, 0.161, 4.563, None),
    Golden("pg14_mixed_c2", True, 2313.380649, 6904, 0, 0.861, 5.018, 25.611, None),
    Golden("select_only_c4", True, 56739.384795, 169822, 0, 0.064, 0.073, 9.311, None),
    Golden("tcp_select_only_c2_no_progress", True, 40643.023684, 81144, 0, 0.049, None, 5.577, None),
    Golden("too_many_clients_c30", False, None, None, None, None, None, None, None),
    # -M prepared through a pooler that does not track prepared statements: pgbench 15 logs the server's
    # "already exists" when it prepares, and may still run to the end and exit 0.
    Golden("prepared_collision_c8", False, 18853.135781, 54962, 0, 0.424, None, 85.154, None),
    # Every login took longer than -T (the server delayed each by 2 s, pre_auth_delay): pgbench exits 0
    # having processed no transaction, and prints no tps.
    Golden("connecting_past_window_c2", False, None, 0, 0, None, None, None, None),
]


def read_golden(golden_dir: Path, name: str) -> tuple[str, int]:
    output = (golden_dir / f"{name}.txt").read_text()
    exit_code = int((golden_dir / f"{name}.exit").read_text().strip())
    return output, exit_code


def test_every_golden_file_has_expected_values(golden_dir: Path) -> None:
    names = sorted(path.stem for path in golden_dir.glob("*.txt"))
    assert names == sorted(golden.name for golden in GOLDEN)
    for name in names:
        assert (golden_dir / f"{name}.exit").is_file(), name


@pytest.mark.parametrize("golden", GOLDEN, ids=[golden.name for golden in GOLDEN])
def test_golden_report(golden_dir: Path, golden: Golden) -> None:
    output, exit_code = read_golden(golden_dir, golden.name)
    report = parse_report(output, exit_code)

    assert report.exit_code == exit_code
    assert report.tps == golden.tps
    assert report.transactions == golden.transactions
    assert report.failed_transactions == golden.failed_transactions
    assert report.latency_avg_ms == golden.latency_avg_ms
    assert report.latency_stddev_ms == golden.latency_stddev_ms
    assert report.initial_connection_ms == golden.initial_connection_ms
    assert report.avg_connection_ms == golden.avg_connection_ms
    assert report.ok is golden.ok
    assert report.aborted is False
    if golden.ok:
        assert report.errors == []
        assert report.error == ""


def test_a_run_that_logged_a_server_error_is_not_ok_even_at_exit_0(golden_dir: Path) -> None:
    """Its transactions ran, but only because every client prepares the same text under the same name:
    the statements collided on the pooler's server connections, and the window says so."""
    output, exit_code = read_golden(golden_dir, "prepared_collision_c8")
    report = parse_report(output, exit_code)
    assert exit_code == 0 and report.tps
    assert not report.ok
    assert report.error == 'ERROR:  prepared statement "P_0" already exists'


def test_mixed_report_takes_the_totals_not_a_script_section(golden_dir: Path) -> None:
    """The per-script sections repeat 'latency average' and 'tps' indented; only the totals count."""
    output, exit_code = read_golden(golden_dir, "mixed_c2")
    assert " - latency average = 0.074 ms" in output  # the select-only script's own figure
    report = parse_report(output, exit_code)
    assert report.latency_avg_ms == 0.122
    assert report.tps == 16152.253697


def test_progress_lines_are_not_the_report(golden_dir: Path) -> None:
    """Progress lines carry 'stddev' too; with no final stddev line the figure stays unknown."""
    output, exit_code = read_golden(golden_dir, "tcp_select_only_c2_no_progress")
    assert "latency stddev" not in output
    assert parse_report(output, exit_code).latency_stddev_ms is None

    output, exit_code = read_golden(golden_dir, "select_only_c4")
    report = parse_report(output, exit_code)
    assert report.latency_stddev_ms == 0.073  # not 0.048 from the first progress line


def test_too_many_clients_is_a_failed_window_with_one_error(golden_dir: Path) -> None:
    output, exit_code = read_golden(golden_dir, "too_many_clients_c30")
    report = parse_report(output, exit_code)
    assert report.ok is False
    assert TOO_MANY in report.error
    assert sum(TOO_MANY in error for error in report.errors) == 1
    # Clients 0-19 had connected when client 20 was refused (the golden run had max_connections 20).
    assert report.refused_client == 20


def test_a_run_without_a_refused_client_has_none(golden_dir: Path) -> None:
    output, exit_code = read_golden(golden_dir, "select_only_c4")
    assert parse_report(output, exit_code).refused_client is None


def test_an_error_repeated_by_every_client_is_reported_once() -> None:
    lines = ["pgbench (15.18 (Debian 15.18-0+deb12u1))"]
    for client in range(30):
        lines += [
            'pgbench: error: connection to server on socket "/tmp/lab/sock/.s.PGSQL.41153" failed: '
            f"FATAL:  {TOO_MANY}",
            f"pgbench: error: client {client} aborted while establishing connection",
        ]
    report = parse_report("\n".join(lines) + "\n", 2)
    assert report.ok is False
    assert TOO_MANY in report.error
    assert sum(TOO_MANY in error for error in report.errors) == 1
    assert sum("aborted while establishing connection" in error for error in report.errors) == 1
    assert len(report.errors) == 2


@pytest.mark.parametrize(
    "line",
    [
        'pgbench: error: connection to server on socket "/work/main/build/lab/x/sock/.s.PGSQL.41153" failed: '
        f"FATAL:  {TOO_MANY}",
        f'pgbench: error: connection to server at "127.0.0.1", port 41153 failed: FATAL:  {TOO_MANY}',
    ],
    ids=["unix-socket", "tcp"],
)
def test_error_drops_the_machine_specific_connection_prefix(line: str) -> None:
    """The error lands in committed CSVs and on the site: the socket path or port of one throwaway
    cluster must not be part of it (and would keep identical errors of two windows apart)."""
    report = parse_report(line + "\n", 1)
    assert TOO_MANY in report.error
    assert "connection to server" not in report.error
    assert ".s.PGSQL" not in report.error
    assert "41153" not in report.error


ABORTED_OUTPUT = """\
pgbench (15.18 (Debian 15.18-0+deb12u1))
pgbench: error: client 1 aborted in command 1 (SQL) of script 0; perhaps the backend died while processing
transaction type: <builtin: select only>
scaling factor: 1
query mode: simple
number of clients: 2
number of threads: 1
maximum number of tries: 1
duration: 3 s
number of transactions actually processed: 1200
number of failed transactions: 0 (0.000%)
latency average = 0.500 ms
initial connection time = 3.000 ms
tps = 1234.500000 (without initial connection time)
pgbench: error: Run was aborted; the above results are incomplete.
"""


def test_aborted_run_is_not_ok_even_with_a_tps_line() -> None:
    report = parse_report(ABORTED_OUTPUT, 2)
    assert report.tps == 1234.5  # printed, but incomplete
    assert report.aborted is True
    assert report.ok is False
    assert report.error != ""
    assert "perhaps the backend died while processing" in report.error


def test_aborted_marker_alone_fails_the_window() -> None:
    """Even with exit 0 the marker line fails the window."""
    output = ABORTED_OUTPUT.replace(
        "pgbench: error: client 1 aborted in command 1 (SQL) of script 0; "
        "perhaps the backend died while processing\n",
        "",
    )
    report = parse_report(output.replace("pgbench: error: ", ""), 0)
    assert report.aborted is True
    assert report.ok is False
    assert report.error == "run was aborted; the results are incomplete"


def test_failed_transactions_fail_the_window(golden_dir: Path) -> None:
    output, _ = read_golden(golden_dir, "select_only_c4")
    output = output.replace(
        "number of failed transactions: 0 (0.000%)", "number of failed transactions: 5 (0.003%)"
    )
    report = parse_report(output, 0)
    assert report.failed_transactions == 5
    assert report.tps == 56739.384795
    assert report.ok is False
    assert report.error == "5 failed transactions"


def test_nonzero_exit_without_message_fails_the_window(golden_dir: Path) -> None:
    output, _ = read_golden(golden_dir, "select_only_c4")
    report = parse_report(output, 1)
    assert report.ok is False
    assert report.error == "pgbench exited with status 1"


def test_report_as_dict_has_every_field(golden_dir: Path) -> None:
    output, exit_code = read_golden(golden_dir, "mixed_c2")
    data = parse_report(output, exit_code).as_dict()
    assert data["tps"] == 16152.253697
    assert data["errors"] == []
    assert set(data) >= {"exit_code", "transactions", "latency_avg_ms", "aborted"}


# -- transaction logs and percentiles ---------------------------------------------------------------------
def write_log(path: Path, latencies_us: list[int], extra_lines: tuple[str, ...] = ()) -> Path:
    lines = [f"0 {number} {latency} 0 1700000000 {number}" for number, latency in enumerate(latencies_us)]
    path.write_text("\n".join([*lines, *extra_lines]) + "\n")
    return path


def test_transaction_log_skips_skipped_and_failed_transactions(tmp_path: Path) -> None:
    log = write_log(
        tmp_path / "tx.100", [300, 100, 200], ("0 3 skipped 0 1700000001 5", "1 4 failed 0 1700000001 6")
    )
    assert read_transaction_latencies_us([log]) == [300, 100, 200]


def test_percentiles_are_nearest_rank_over_all_thread_logs(tmp_path: Path) -> None:
    # 20 latencies 100, 200, ..., 2000 us split over two thread logs, plus lines without a latency.
    first = write_log(tmp_path / "tx.100", [100 * n for n in range(1, 21, 2)], ("0 99 skipped 0 1 2",))
    second = write_log(tmp_path / "tx.100.1", [100 * n for n in range(2, 21, 2)], ("1 98 failed 0 1 2",))
    result = latency_percentiles_ms([first, second])
    # Nearest rank: p50 is the 10th of 20, p95 the 19th, p99 the 20th; never an interpolation.
    assert result == {"latency_p50_ms": 1.0, "latency_p95_ms": 1.9, "latency_p99_ms": 2.0}


def test_percentile_of_a_hundred_values() -> None:
    values = list(range(1, 101))
    assert percentile(values, 0.50) == 50.0
    assert percentile(values, 0.95) == 95.0
    assert percentile(values, 0.99) == 99.0
    assert percentile([7], 0.99) == 7.0


def test_percentiles_without_latencies_are_unknown(tmp_path: Path) -> None:
    log = tmp_path / "tx.1"
    log.write_text("0 0 skipped 0 1 2\n")
    assert latency_percentiles_ms([log]) == {
        "latency_p50_ms": None,
        "latency_p95_ms": None,
        "latency_p99_ms": None,
    }
    assert latency_percentiles_ms([]) == {
        "latency_p50_ms": None,
        "latency_p95_ms": None,
        "latency_p99_ms": None,
    }


# -- flags ------------------------------------------------------------------------------------------------
def flag_value(flags: list[str], name: str) -> str:
    assert flags.count(name) == 1, (name, flags)
    return flags[flags.index(name) + 1]


@pytest.mark.parametrize(
    "options",
    [
        PgbenchOptions(builtins=("select-only",), clients=4, jobs=1, duration_s=3),
        PgbenchOptions(builtins=("select-only",), clients=1, jobs=1, duration_s=3, transaction_log=False),
        PgbenchOptions(
            builtins=("tpcb-like",), clients=8, jobs=2, duration_s=3, connect_per_transaction=True
        ),
    ],
)
def test_progress_is_always_on(options: PgbenchOptions) -> None:
    flags = options.flags()
    assert flag_value(flags, "-P") == "1"
    assert flag_value(options.flags(shell_variables=True), "-P") == "1"


def test_jobs_never_exceed_clients() -> None:
    for clients in range(1, 9):
        for jobs in range(1, 9):
            options = PgbenchOptions(builtins=("select-only",), clients=clients, jobs=jobs, duration_s=1)
            flags = options.flags()
            assert flag_value(flags, "-c") == str(clients)
            assert flag_value(flags, "-j") == str(min(clients, jobs))


def test_flags_carry_every_option() -> None:
    options = PgbenchOptions(
        builtins=("select-only@9", "simple-update@1"),
        clients=16,
        jobs=2,
        duration_s=15,
        protocol="prepared",
        connect_per_transaction=True,
        extra=("--random-seed", "7"),
    )
    flags = options.flags()
    assert flags[0] == "-n"
    assert [flags[i + 1] for i, flag in enumerate(flags) if flag == "-b"] == [
        "select-only@9",
        "simple-update@1",
    ]
    assert flag_value(flags, "-T") == "15"
    assert flag_value(flags, "-M") == "prepared"
    assert "-C" in flags
    assert "-l" in flags
    assert flags[-2:] == ["--random-seed", "7"]
    assert (
        "-l"
        not in PgbenchOptions(
            builtins=("select-only",), clients=1, jobs=1, duration_s=1, transaction_log=False
        ).flags()
    )


def test_shell_variables_replace_clients_and_jobs_only() -> None:
    options = PgbenchOptions(builtins=("select-only",), clients=4, jobs=2, duration_s=3)
    plain = options.flags()
    shell = options.flags(shell_variables=True)
    assert flag_value(shell, "-c") == "$c"
    assert flag_value(shell, "-j") == "$j"
    substituted = [{"$c": "4", "$j": "2"}.get(flag, flag) for flag in shell]
    assert substituted == plain


def test_build_command_puts_connection_first_and_database_last(tmp_path: Path) -> None:
    options = PgbenchOptions(builtins=("select-only",), clients=2, jobs=1, duration_s=1)
    command = build_command(
        "/usr/bin/pgbench", options, ["-h", "/sock", "-p", "5432"], "bench", tmp_path / "tx"
    )
    assert command[:5] == ["/usr/bin/pgbench", "-h", "/sock", "-p", "5432"]
    assert command[-1] == "bench"
    assert flag_value(command, "--log-prefix") == str(tmp_path / "tx")
    without_log = build_command("pgbench", options, [], "bench")
    assert "--log-prefix" not in without_log
    # No folder given: no -l either, or pgbench would write pgbench_log.<pid> into the working directory.
    assert "-l" in command
    assert "-l" not in without_log


def test_pgbench_14_reports_no_failures_only_for_a_clean_run(golden_dir: Path) -> None:
    """pgbench 14 prints no failed-transactions line: zero is inferred from a clean exit, never otherwise."""
    output, exit_code = read_golden(golden_dir, "pg14_mixed_c2")
    assert parse_report(output, exit_code).failed_transactions == 0
    failed = parse_report(output, 2)
    assert failed.failed_transactions is None
    assert failed.ok is False


def test_a_window_with_no_transaction_fails_and_says_why() -> None:
    """pgbench 15 exits 0 and prints no throughput when its clients took the whole window to connect: the
    window is a failure with a reason, never a row that failed without one."""
    output = (
        "transaction type: <builtin: TPC-B (sort of)>\nscaling factor: 1\nquery mode: simple\n"
        "number of clients: 400\nnumber of threads: 1\nmaximum number of tries: 1\nduration: 1 s\n"
        "number of transactions actually processed: 0\n"
    )
    report = parse_report(output, 0)
    assert (report.transactions, report.tps, report.ok) == (0, None, False)
    assert report.error == NO_TRANSACTION
