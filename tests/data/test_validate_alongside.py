"""`connlab aggregate --validate` (make's data stage): validation in a second process while the aggregation
runs; the command reports validation's problems, not whatever the aggregation made of a bad file, and leaves
no validation process behind when it ends early."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import psutil
import pytest

from connlab.data import validate_alongside

if TYPE_CHECKING:
    from support.rows import RunWriter

RUN_ID = "tiny-20260101T000000Z"


@pytest.fixture
def results(tmp_path: Path, write_run: RunWriter) -> Path:
    rows = [{"workload": "mixed", "clients": clients} for clients in (1, 2, 4)]
    write_run(tmp_path / "results", "box", rows, profile="tiny", run_id=RUN_ID)
    return tmp_path / "results"


def run_aggregate(results: Path, build: Path, *options: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "CONNLAB_RESULTS_DIR": str(results),
        "CONNLAB_BUILD_DIR": str(build),
        "COLUMNS": "300",
    }
    return subprocess.run(
        [sys.executable, "-m", "connlab.cli", "aggregate", *options],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@pytest.mark.process
def test_valid_results_are_aggregated_and_said_valid(results: Path, tmp_path: Path) -> None:
    result = run_aggregate(results, tmp_path / "build", "--validate")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0] == "results/ is valid"
    assert result.stderr.splitlines()[1].startswith("aggregated into ")
    with duckdb.connect(str(tmp_path / "build" / "data" / "connlab.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM clients_sweep.points").fetchall()[0][0] > 0


@pytest.mark.process
def test_a_bad_file_is_reported_by_validation_alone(results: Path, tmp_path: Path) -> None:
    """A client count DuckDB cannot read either: the aggregation fails too, but only validation speaks."""
    path = results / "box" / "clients-sweep" / f"{RUN_ID}.csv"
    header, first, *rest = path.read_text().splitlines()
    cells = first.split(",")
    cells[header.split(",").index("clients")] = "many"
    path.write_text("\n".join([header, ",".join(cells), *rest]) + "\n")
    result = run_aggregate(results, tmp_path / "build", "--validate")
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines() == [f"{path}:2: clients: expected integer (got 'many')"]
    assert result.stderr.strip() == "1 problem(s) in results/"
    assert "Traceback" not in result.stderr
    alone = run_aggregate(results, tmp_path / "alone")
    assert alone.returncode != 0, "the aggregation alone no longer fails on this file: pick another"


@pytest.mark.process
def test_a_block_that_ends_early_stops_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while aggregating: the validation process (in a session of its own, which the terminal's
    signal does not reach) is stopped with the command, not left running."""
    monkeypatch.setattr(
        validate_alongside, "VALIDATE_COMMAND", (sys.executable, "-c", "import time; time.sleep(60)")
    )
    with pytest.raises(KeyboardInterrupt), validate_alongside.validation_alongside() as validation:
        pid = validation.process.pid
        time.sleep(0.2)
        raise KeyboardInterrupt
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


@pytest.mark.process
def test_what_validation_printed_is_kept_however_long(monkeypatch: pytest.MonkeyPatch) -> None:
    """Output goes to files: a validation printing far more than a pipe holds still ends on its own."""
    lines = 100_000
    script = f"for _ in range({lines}): print('problem ' * 10)"
    monkeypatch.setattr(validate_alongside, "VALIDATE_COMMAND", (sys.executable, "-c", script))
    with validate_alongside.validation_alongside() as validation:
        outcome = validation.outcome()
    assert outcome.returncode == 0
    assert len(outcome.stdout.splitlines()) == lines


@pytest.mark.process
def test_ctrl_c_stops_both_with_one_line(results: Path, tmp_path: Path) -> None:
    """SIGINT to the command's process group, as a terminal's Ctrl-C sends it, while validation runs beside
    the aggregation: one line, exit status 130, and the validation process (in a session of its own, which
    the signal does not reach) gone with the command."""
    env = {**os.environ, "CONNLAB_RESULTS_DIR": str(results), "CONNLAB_BUILD_DIR": str(tmp_path / "build")}
    command = subprocess.Popen(
        [sys.executable, "-m", "connlab.cli", "aggregate", "--validate"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    validation = None
    deadline = time.monotonic() + 30
    while validation is None and time.monotonic() < deadline and command.poll() is None:
        found = [child for child in psutil.Process(command.pid).children() if "validate" in child.cmdline()]
        validation = found[0] if found else None
    assert validation is not None, "validation did not start beside the aggregation"
    os.killpg(command.pid, signal.SIGINT)
    stdout, stderr = command.communicate(timeout=60)
    assert command.returncode == 130, stderr
    assert stderr.splitlines() == ["interrupted; rerun the same command to finish"]
    assert stdout == ""
    assert not validation.is_running() or validation.status() == psutil.STATUS_ZOMBIE


@pytest.mark.process
def test_duckdbs_error_for_ctrl_c_stops_both_without_waiting(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C during one of the aggregation's DuckDB statements comes out of DuckDB as its own error (see
    tests/test_interrupts.py): the command exits as interrupted at once, with one line, and stops the
    validation process instead of waiting for it and relaying what it printed."""
    from connlab import cli, interrupts
    from connlab.data import aggregate

    monkeypatch.setattr(
        validate_alongside, "VALIDATE_COMMAND", (sys.executable, "-c", "import time; time.sleep(60)")
    )
    monkeypatch.setattr(interrupts, "_interrupted", False)
    started: list[psutil.Process] = []

    def interrupted_statement(*_: object, **__: object) -> None:
        started.extend(
            child for child in psutil.Process().children() if "time.sleep(60)" in " ".join(child.cmdline())
        )
        interrupts._interrupted = True  # as the signal handler leaves it
        raise RuntimeError("Query interrupted")

    monkeypatch.setattr(aggregate, "aggregate_all", interrupted_statement)
    handlers = {signum: signal.getsignal(signum) for signum in interrupts.INTERRUPT_SIGNALS}
    begun = time.monotonic()
    try:
        with pytest.raises(SystemExit) as exit_:
            cli.aggregate(validate=True)
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    assert exit_.value.code == interrupts.INTERRUPTED_EXIT_STATUS
    assert time.monotonic() - begun < 30, "it waited for validation"
    assert capsys.readouterr().err.strip().splitlines() == ["interrupted; rerun the same command to finish"]
    assert started, "validation did not start"
    _, alive = psutil.wait_procs(started, timeout=10)
    assert alive == []
