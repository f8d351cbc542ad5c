"""End to end: `connlab run --server` and `connlab run-all --server` against a PostgreSQL across a real TCP
hop (tests/support/netns_server.py: a network namespace joined to this host by a veth pair), with SCRAM, as a
role that may create a database and is not superuser.

One run-all of a tiny clients-sweep and a tiny pgbouncer-trade writes a scratch results folder; the results
validate, the machine's page says what was measured and how far away; nothing outside the harness's own
database changed (every other database and the roles dump byte for byte as before), and the password is
nowhere in the results, the output or the pages. Every bad input is one line that leaves nothing on the
server or here, and so is a Ctrl-C at each step of a run.

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
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
import yaml

from connlab.lab.poolers.base import PoolerProcess, PoolerUnavailable
from connlab.poolers.odyssey.adapter import Odyssey
from connlab.site.layout import machine_fragment, stamped_sources
from support.helpers import CONNLAB_COMMAND, connlab
from support.netns_server import MAX_CONNECTIONS, RESTRICT_KEY, NamespacedServer, namespaced_server
from support.paths import PINNED_RESULTS, REPO_ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("require_root", "require_postgres")]

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


def talking_to(server: NamespacedServer) -> list[str]:
    """Processes of this host still aimed at the server: a pgbench the run left (the server's own processes
    run in its namespace under its data folder, and name this host's address, not the server's)."""
    return [
        " ".join(p.info["cmdline"])
        for p in psutil.process_iter(["cmdline"])
        if p.info["cmdline"] and any(server.server_ip in arg for arg in p.info["cmdline"])
    ]


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


def server_args(url: str, yes: bool = True) -> list[str]:
    return ["--profile", "tiny", "--server", url, "--server-cores", STATED_CORES, *(["--yes"] if yes else [])]


def run_args(experiment: str, url: str) -> list[str]:
    return ["run", experiment, *server_args(url)]


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


def test_run_all_measures_a_tiny_sweep_and_pgbouncer_trade_on_the_named_server_and_touches_nothing_else(
    server: NamespacedServer, scratch: Path
) -> None:
    """`connlab run-all` of both experiments against the server, the password from PGPASSWORD (the URL's is
    the other tests'): one results folder naming both hosts, every window measured over the network."""
    password = server.passwords["tester"]
    before = server.dump()
    shutil.copytree(PINNED_RESULTS, scratch / "results")  # the site needs its other machines
    result = connlab(
        "run-all", "clients-sweep", "pgbouncer-trade", *server_args(server.url()),
        env=environment(scratch, PGPASSWORD=password), timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stderr.count("dropped database bench") == 2, result.stderr
    # pgbouncer-trade's direct windows at 16 clients need more than max_connections leaves: left out, said so.
    room = rf"max_connections {MAX_CONNECTIONS} leaves room for \d+ "
    trimmed = rf"pgbouncer-trade: .*{room}.*direct-select-only at 16"
    assert re.search(trimmed, result.stderr.replace("\n", "")), result.stderr

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
    assert not left_behind(scratch)

    # Validation, aggregation and the machine's page treat it like any machine.
    built = connlab("aggregate", "--validate", env=environment(scratch), timeout=600)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    rendered = connlab("render", env=environment(scratch), timeout=600)
    assert rendered.returncode == 0, rendered.stderr[-2000:]
    page = stamped_sources(scratch / "build" / "docs") / machine_fragment(machine.name)  # its HTML fragment
    assert re.search(
        r"remote server, measured from a client over a network with [0-9.]+ ms round trip", page.read_text()
    ), page

    assert_secret_kept(password, scratch, result, built, rendered)


def assert_secret_kept(password: str, scratch: Path, *results: subprocess.CompletedProcess[str]) -> None:
    """The password in no output and no file the runs wrote (results, logs, pages)."""
    assert not any(password in result.stdout + result.stderr for result in results)
    assert not [path for path, data in texts_under(scratch) if password.encode() in data]


def test_run_all_asks_once_naming_the_server_the_time_and_the_load(
    server: NamespacedServer, scratch: Path
) -> None:
    """Without --yes and without a terminal to answer on, run-all stops at its one question, which names the
    server, both experiments, their total time and their load; nothing is created."""
    before = server.dump()
    url = server.url(with_password=True)
    result = connlab(
        "run-all", "clients-sweep", "pgbouncer-trade", *server_args(url, yes=False), env=environment(scratch),
        timeout=120,
    )  # fmt: skip
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert result.returncode == 2 and len(errors) == 1, result.stderr
    assert re.search(
        rf"error: clients-sweep, pgbouncer-trade \(tiny\) will load postgresql://tester@{server.server_ip}:5432"
        r"/postgres \(stated 2 cores\) for about \d+ min: \d+ windows of 1 s, up to \d+ clients at once, "
        r"read-write; each creates database bench .*Not confirmed: rerun with --yes",
        errors[0],
    ), errors[0]
    assert server.dump() == before and "bench" not in server.databases()
    assert not left_behind(scratch) and not (scratch / "results").exists()


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
    assert_secret_kept(server.passwords["tester"], scratch, result)  # given in the URL this time


def _signal_mask(pid: int, field: str) -> int:
    """A mask of /proc/PID/status (SigBlk, SigCgt), 0 once the process is gone."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1], 16)
    return 0


def _descendants(pid: int) -> list[list[str]]:
    """The command lines of the run's children and theirs (pgbench, runuser and the pooler under it)."""
    lines = []
    with contextlib.suppress(psutil.Error):
        for child in psutil.Process(pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                lines.append(child.cmdline())
    return lines


def _pgbench(pid: int, init: bool) -> bool:
    return any(
        line and Path(line[0]).name == "pgbench" and ("-i" in line) == init for line in _descendants(pid)
    )


def _rows_written(scratch: Path) -> int:
    return sum(len(rows_of(folder)) for folder in (scratch / "results").glob("*/pgbouncer-trade"))


# Where a Ctrl-C lands, told from outside the run as it happens, never by a delay: the connlab command has
# started (its entry holds SIGINT while it imports: bit 1 of SigBlk); pgbench -i loads the harness's
# database; PgBouncer is starting beside the client; a window measures, one at least already written.
CTRL_C_STEPS: dict[str, Callable[[int, Path], bool]] = {
    "start-up, before connecting": lambda pid, _: bool(
        _signal_mask(pid, "SigBlk") & 1 << (signal.SIGINT - 1)
        or _signal_mask(pid, "SigCgt") & 1 << (signal.SIGTERM - 1)
    ),
    "pgbench -i": lambda pid, _: _pgbench(pid, init=True),
    "pooler start": lambda pid, _: any(
        any(Path(arg).name == "pgbouncer" for arg in line) for line in _descendants(pid)
    ),
    "window": lambda pid, scratch: _rows_written(scratch) > 0 and _pgbench(pid, init=False),
}


@pytest.mark.parametrize("step", list(CTRL_C_STEPS))
def test_ctrl_c_at_each_step_exits_130_and_leaves_nothing_on_the_server_or_here(
    server: NamespacedServer, scratch: Path, step: str
) -> None:
    """SIGINT to the run's process group, as a terminal's Ctrl-C, at each step of a run against the server:
    status 130 and one line, its database dropped, no private folder, no pooler or pgbench left, the server
    as it was, and no partial row."""
    before = server.dump()
    process = subprocess.Popen(
        [*CONNLAB_COMMAND, *run_args("pgbouncer-trade", server.url(with_password=True))],
        cwd=REPO_ROOT, env=environment(scratch), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    reached = CTRL_C_STEPS[step]
    deadline = time.monotonic() + 240
    try:
        while not reached(process.pid, scratch):
            assert process.poll() is None, f"the run ended before {step}: {process.stderr.read()[-2000:]}"
            assert time.monotonic() < deadline, f"the run never reached {step}"
            time.sleep(0.002)
        os.killpg(process.pid, signal.SIGINT)
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    assert process.returncode == 130, stderr[-2000:]
    assert "Traceback" not in stderr and "error:" not in stderr, stderr[-2000:]
    assert stderr.strip().splitlines()[-1].startswith("interrupted"), stderr[-2000:]
    assert "bench" not in server.databases()
    assert server.dump() == before
    assert not left_behind(scratch) and not talking_to(server)
    for path in (scratch / "results").glob("*/pgbouncer-trade/*.csv"):
        lines = path.read_text().splitlines()
        assert all(len(row) == len(lines[0].split(",")) for row in csv.reader(lines)), path
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
