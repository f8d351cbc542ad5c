"""End to end: `connlab run --server` against a PostgreSQL across a real TCP hop (tests/netns_server.py: a
network namespace joined to this host by a veth pair), with SCRAM, as a role that may create a database and
is not superuser.

A tiny clients-sweep and a tiny pgbouncer-trade run into a scratch results folder; the results validate, the
machine's page says what was measured and how far away; nothing outside the harness's own database changed
(every other database and the roles dump byte for byte as before), and the password is nowhere in the
results, the output or the pages. Every bad input is one line that leaves nothing on the server or here.

Each run's TMPDIR is a folder of the test's own, where the harness makes its private folder: what is left
there afterwards, and any pooler still running from there, is that run's leak and no other test's (pytest's
workers run these tests side by side).
"""

from __future__ import annotations

import contextlib
import csv
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
import yaml

from connlab.lab.poolers.base import PoolerProcess, PoolerUnavailable
from connlab.lab.poolers.odyssey import Odyssey
from netns_server import MAX_CONNECTIONS, RESTRICT_KEY, NamespacedServer, namespaced_server

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("require_root", "require_postgres")]

REPO_ROOT = Path(__file__).resolve().parents[1]
PINNED_RESULTS = REPO_ROOT / "tests" / "fixtures" / "results"
STATED_CORES = "2"


@pytest.fixture(scope="module")
def server() -> Iterator[NamespacedServer]:
    if shutil.which("ip") is None:
        pytest.skip("needs iproute2 (ip netns, veth)")
    with namespaced_server() as started:
        yield started


@pytest.fixture
def scratch() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="clr-", dir="/tmp"))
    folder.chmod(0o711)  # the poolers, run as postgres, pass through it to the harness's private folder
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def harness_tmp(scratch: Path) -> Path:
    """The TMPDIR of the runs from this scratch folder. The harness makes its private folder (mode 700, owned
    by postgres) in it, so this folder and the one above it are searchable by the poolers' user."""
    folder = scratch / "tmp"
    folder.mkdir(parents=True, exist_ok=True)
    for path in (folder.parent, folder):
        path.chmod(0o711)
    return folder


def left_behind(scratch: Path) -> list[str]:
    """What the runs from this scratch folder left: anything in their TMPDIR, and any pooler still running
    from there."""
    folder = harness_tmp(scratch)
    return sorted(str(path) for path in folder.iterdir()) + poolers_of({folder})


def environment(scratch: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PG", "MACHINE"))}
    env.update(
        TMPDIR=str(harness_tmp(scratch)),
        CONNLAB_RESULTS_DIR=str(scratch / "results"),
        CONNLAB_BUILD_DIR=str(scratch / "build"),
        CONNLAB_LOCK_FILE=str(scratch / "measure.lock"),
        COLUMNS="200",
        PYTHONUNBUFFERED="1",
        **extra,
    )
    return env


def connlab(*args: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "connlab.cli", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_args(experiment: str, url: str) -> list[str]:
    return ["run", experiment, "--profile", "tiny", "--server", url, "--server-cores", STATED_CORES, "--yes"]


def poolers_of(folders: set[Path]) -> list[str]:
    """Poolers still running from within these folders (their configuration is in a run's private folder)."""
    return [
        " ".join(p.info["cmdline"])
        for p in psutil.process_iter(["cmdline"])
        if p.info["cmdline"] and any(str(f) in arg for f in folders for arg in p.info["cmdline"])
    ]


def rows_of(folder: Path) -> list[dict[str, str]]:
    return [row for path in sorted(folder.glob("*.csv")) for row in csv.DictReader(path.open())]


def texts_under(folder: Path) -> Iterator[tuple[Path, bytes]]:
    for path in folder.rglob("*"):
        if path.is_file():
            yield path, path.read_bytes()


def test_a_tiny_sweep_and_pgbouncer_trade_measure_the_named_server_and_touch_nothing_else(
    server: NamespacedServer, scratch: Path
) -> None:
    password = server.passwords["tester"]
    before = server.dump()
    shutil.copytree(PINNED_RESULTS, scratch / "results")  # the site needs its other machines
    # The password once from PGPASSWORD, once from the URL: neither may show anywhere. Each run into a
    # results folder of its own, joined after: with the client, the pooler and the server on this host's two
    # cores, one-client calibrations a minute apart differ more than connlab.lab.calibration lets one
    # machine folder's runs differ.
    sweep = connlab(*run_args("clients-sweep", server.url()), env=environment(scratch, PGPASSWORD=password))
    trade = connlab(
        *run_args("pgbouncer-trade", server.url(with_password=True)), env=environment(scratch / "trade")
    )
    for experiment in (scratch / "trade" / "results").glob("*/pgbouncer-trade"):
        shutil.copytree(experiment, scratch / "results" / experiment.parent.name / experiment.name)
    for result in (sweep, trade):
        assert result.returncode == 0, result.stderr[-3000:]
        assert "dropped database bench" in result.stderr
    # pgbouncer-trade's direct windows at 16 clients need more than max_connections leaves: left out, said so.
    trimmed = rf"max_connections {MAX_CONNECTIONS} leaves room for \d+ .*left out.*direct-select-only at 16"
    assert re.search(trimmed, trade.stderr.replace("\n", "")), trade.stderr

    machines = [path for path in (scratch / "results").iterdir() if path.name.startswith(server.server_ip)]
    assert [path.name for path in machines] == [
        f"{server.server_ip}-5432-from-{machines[0].name.split('-from-')[1]}"
    ]
    machine = machines[0]
    facts = yaml.safe_load((machine / "machine.yaml").read_text())
    assert facts["cpu_budget_method"] == "remote" and facts["server_cores"] == float(STATED_CORES)
    remote = facts["remote_server"]
    assert remote["host"] == server.server_ip and remote["stated_cores"] == float(STATED_CORES)
    assert remote["max_connections"] == MAX_CONNECTIONS and remote["password_encryption"] == "scram-sha-256"
    assert remote["ssl"] == "on" and remote["rtt_ms"] > 0
    assert remote["server_host_probes"] == "not available for a remote server"

    sweep_rows = rows_of(machine / "clients-sweep")
    trade_rows = rows_of(machine / "pgbouncer-trade")
    assert sweep_rows and trade_rows
    for row in sweep_rows + trade_rows:
        assert row["ok"] == "true", row["error"]
        assert row["transport"] == "tcp" and row["cpu_budget_method"] == "remote"
        assert row["server_cpu_cores"] == "" and float(row["server_rtt_ms"]) > 0
        assert row["server_cpu_budget"] == "2.0"
    pooled = [row for row in trade_rows if row["target"] == "pgbouncer"]
    assert pooled and all(int(row["server_backends_max"]) <= 4 for row in pooled)  # a pool of 2x = 4
    assert not any(row["workload"].startswith("direct-") and row["clients"] == "16" for row in trade_rows)

    # Nothing outside its own database: every other database and the roles as they were; its own is gone.
    assert server.dump() == before
    assert "bench" not in server.databases()
    assert not left_behind(scratch) and not left_behind(scratch / "trade")

    # Validation, aggregation and the machine's page treat it like any machine.
    built = connlab("aggregate", "--validate", env=environment(scratch), timeout=600)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    rendered = connlab("render", env=environment(scratch), timeout=600)
    assert rendered.returncode == 0, rendered.stderr[-2000:]
    page = next((scratch / "build" / "docs").rglob(f"{machine.name}.*"))  # Markdown, or its HTML fragment
    assert re.search(
        r"remote server, measured from a client over a network with [0-9.]+ ms round trip", page.read_text()
    ), page

    secret = password.encode()
    outputs = [sweep.stdout, sweep.stderr, trade.stdout, trade.stderr, built.stderr, rendered.stderr]
    assert not any(password in text for text in outputs)
    assert not [path for path, data in texts_under(scratch) if secret in data]


# Each bad input: how the URL is made, the line it must print, and what the server holds meanwhile.
BAD_INPUTS = {
    "unreachable": (lambda s: s.url(port=5999), "cannot reach postgresql://tester@"),
    "wrong password": (lambda s: s.url().replace("tester@", "tester:not-the-password@"), "wrong password"),
    "no CREATEDB": (lambda s: s.url("nocreate", with_password=True), "may not create a database"),
    "TLS required": (lambda s: s.url("tls_only", with_password=True), "requires TLS"),
    "a database named bench that is not ours": (
        lambda s: s.url(with_password=True),
        "exists and was not created by connlab",
    ),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_a_bad_input_is_one_line_and_leaves_nothing(
    server: NamespacedServer, scratch: Path, case: str
) -> None:
    make_url, message = BAD_INPUTS[case]
    foreign = case.startswith("a database named bench")
    if foreign:
        server.execute("CREATE DATABASE bench")
        server.execute("CREATE TABLE precious (id int); INSERT INTO precious VALUES (42)", "bench")
    try:
        before = server.dump()
        bench_before = _dump_bench(server) if foreign else None
        result = connlab(*run_args("clients-sweep", make_url(server)), env=environment(scratch), timeout=120)
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert result.returncode == 2, result.stderr[-2000:]
        assert len(errors) == 1 and message in errors[0], result.stderr
        assert "Traceback" not in result.stderr
        for user, password in server.passwords.items():
            assert password not in result.stderr + result.stdout, user
        assert server.dump() == before
        assert ("bench" in server.databases()) == foreign
        if foreign:
            assert _dump_bench(server) == bench_before
        assert not left_behind(scratch)
        assert not (scratch / "results").exists() or not any((scratch / "results").rglob("*.csv"))
    finally:
        if foreign:
            server.execute("DROP DATABASE IF EXISTS bench")


def _dump_bench(server: NamespacedServer) -> bytes:
    return subprocess.run(
        [
            str(server.bindir / "pg_dump"),
            "-h",
            str(server.socket_dir),
            "-U",
            "postgres",
            *RESTRICT_KEY,
            "-d",
            "bench",
        ],
        check=True,
        capture_output=True,
    ).stdout


def test_a_server_with_too_few_connections_gets_the_plan_fitted_to_it(
    server: NamespacedServer, scratch: Path
) -> None:
    """Others hold all but a few of max_connections: the 4-client windows are left out, said in one line,
    and the 1-client windows measured."""
    held = MAX_CONNECTIONS - 3 - 3 - 1  # superuser-reserved, the harness's own, and room for one client
    with contextlib.ExitStack() as stack:
        for _ in range(held):
            stack.enter_context(server.admin())
        before = server.dump()
        result = connlab(*run_args("clients-sweep", server.url(with_password=True)), env=environment(scratch))
    assert result.returncode == 0, result.stderr[-2000:]
    assert re.search(
        r"max_connections 20 leaves room for 1 of this run's connections; left out, needing "
        r"more: mixed at 4 client\(s\)",
        result.stderr.replace("\n", ""),
    ), result.stderr
    rows = [row for folder in (scratch / "results").glob("*/clients-sweep") for row in rows_of(folder)]
    assert rows and {row["clients"] for row in rows} == {"1"}
    assert server.dump() == before and "bench" not in server.databases()
    assert not left_behind(scratch)


# From the interpreter's start: its imports take about a second, then the checks, the database, pgbench -i,
# PgBouncer and the windows follow within a few seconds each.
@pytest.mark.parametrize("delay_s", [1.5, 3.0, 5.0, 8.0])
def test_ctrl_c_at_any_step_leaves_nothing_on_the_server_or_here(
    server: NamespacedServer, scratch: Path, delay_s: float
) -> None:
    """SIGINT to the run's process group while it connects, creates its database, loads it, starts PgBouncer
    or measures: status 130, its database dropped, no private folder, no pooler, the server as it was."""
    before = server.dump()
    process = subprocess.Popen(
        [sys.executable, "-m", "connlab.cli", *run_args("pgbouncer-trade", server.url(with_password=True))],
        cwd=REPO_ROOT,
        env=environment(scratch),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    time.sleep(delay_s)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode in (130, 0), stderr[-2000:]  # 0: it had finished before the signal
    assert "Traceback" not in stderr
    if process.returncode == 130:
        assert "interrupted" in stderr
    assert "bench" not in server.databases()
    assert server.dump() == before
    assert not left_behind(scratch)
    assert server.passwords["tester"] not in stderr


def test_pgpool_and_odyssey_run_beside_the_client_in_front_of_the_named_server(scratch: Path) -> None:
    """pooler-churn's pools of 100 need a server with room for them: a second server, max_connections 150.
    PgPool-II and Odyssey (where installed) start here and log in to it as the URL's user; pgcat is not set
    up in front of a named server, and the run says so at the end."""
    with namespaced_server(max_connections=150, second=True) as roomy:
        before = roomy.dump()
        result = connlab(*run_args("pooler-churn", roomy.url(with_password=True)), env=environment(scratch))
        assert roomy.dump() == before and "bench" not in roomy.databases()
    assert result.returncode == 2 and "pgcat: not set up in front of a remote server" in result.stderr
    rows = [row for folder in (scratch / "results").glob("*/pooler-churn") for row in rows_of(folder)]
    ran = {row["target"] for row in rows if row["ok"] == "true"}
    assert {"direct", "pgbouncer", "pgpool"} <= ran, [(row["target"], row["error"]) for row in rows]
    assert ("odyssey" in ran) == _installed(Odyssey)
    assert all(row["transport"] == "tcp" for row in rows)
    assert roomy.passwords["tester"] not in result.stderr
    assert not left_behind(scratch)


def _installed(pooler: type[PoolerProcess]) -> bool:
    try:
        pooler.binary()
    except PoolerUnavailable:
        return False
    return True
