"""pgcat for real through its adapter, on a throwaway cluster with SCRAM: clients logging in through it (MD5
to pgcat, SCRAM from pgcat to the server) in transaction pooling, the ceiling of its pool (clients past it
wait in its SHOW POOLS, the server never sees more), prepared statements with and without its cache, the
allocator it runs with, a stop with clients connected that leaves no process, and the prepared-statements
experiment's pgcat windows through `connlab run`.

The binary: the harness's (PGCAT_BIN, PATH, build/pgcat from `make poolers`), else ../shared/tools/pgcat's
(tests/support/pooler_binary.py); skipped only where neither is here. One cluster for the module (one worker).
"""

from __future__ import annotations

import contextlib
import csv
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest
import yaml

from connlab.contract.names import SERVER_USER
from connlab.contract.poolers import features
from connlab.interrupts import kill_group
from connlab.lab import cluster as cluster_module
from connlab.lab.cluster import Cluster
from connlab.lab.host import find_program, free_port
from connlab.lab.pgbench import PgbenchReport, parse_report
from connlab.lab.poolers.base import PoolerSetup, PoolerUser
from connlab.paths import DEBIAN_JEMALLOC, REPO_ROOT
from connlab.poolers.pgcat import adapter as pgcat_adapter
from connlab.poolers.pgcat.adapter import PgCat
from support.pooler_binary import find_pooler, skip_reason

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.xdist_group("pgcat"),
    pytest.mark.usefixtures("require_root", "require_postgres"),
]

POOL = 4
WINDOW_S = 3
BOUND_S = 30  # any pgbench here is killed after this
HBA = [
    "local all bench scram-sha-256", "host all bench 127.0.0.1/32 scram-sha-256",
    "local all postgres trust", "host all postgres 127.0.0.1/32 trust",
]  # fmt: skip
BENCH_BACKENDS = (
    "SELECT count(*) FROM pg_stat_activity WHERE usename = 'bench' AND datname = 'bench' "
    "AND backend_type = 'client backend'"
)


@pytest.fixture(scope="module")
def pgcat_binary() -> Path:
    binary = find_pooler(PgCat)
    if binary is None:
        pytest.skip(skip_reason(PgCat))
    return binary


@pytest.fixture(scope="module")
def scram_cluster(pgcat_binary: Path) -> Iterator[tuple[Cluster, str, str]]:
    """The cluster, bench's password and the server's SCRAM verifier of it; PGCAT_BIN names the binary."""
    if os.geteuid() != 0:
        pytest.skip("needs root (the server and pgcat run as the postgres user)")
    folder = Path(tempfile.mkdtemp(prefix="clt-", dir="/tmp"))
    folder.chmod(0o755)
    password = secrets.token_urlsafe(24)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(cluster_module, "LAB_DIR", folder / "lab")
            patch.setenv("PGCAT_BIN", str(pgcat_binary))
            with Cluster("e2e-pgcat", {"password_encryption": "scram-sha-256"}, hba_lines=HBA) as cluster:
                cluster.execute(f"CREATE ROLE bench LOGIN PASSWORD '{password}'")
                cluster.execute("CREATE DATABASE bench OWNER bench")
                verifier = cluster.execute("SELECT rolpassword FROM pg_authid WHERE rolname = 'bench'")[0][0]
                init = subprocess.run(
                    [find_program("pgbench", cluster.bindir), "-i", "-s", "1", "-q",
                     *cluster.client_args("unix", "bench"), "bench"],
                    env={**os.environ, "PGPASSWORD": password}, capture_output=True, text=True, timeout=120,
                )  # fmt: skip
                assert init.returncode == 0, init.stderr
                yield cluster, password, verifier
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def pgcat_for(cluster: Cluster, password: str, verifier: str, **settings: object) -> PgCat:
    setup = PoolerSetup(
        root=cluster.root / f"pgcat-{secrets.token_hex(4)}", port=free_port(),
        server_host=str(cluster.socket_dir), server_port=cluster.port or 0, databases=["bench"],
        pool_size=POOL, users=[PoolerUser(SERVER_USER), PoolerUser("bench", verifier, password)],
        settings=dict(settings),
    )  # fmt: skip
    return PgCat(setup)


def start_pgbench(
    pooler: PgCat, password: str, clients: int, *flags: str, seconds: int = WINDOW_S
) -> subprocess.Popen[str]:
    command = [find_program("pgbench", None), "-n", "-S", "-c", str(clients), "-j", "2", "-T", str(seconds),
               *flags, *pooler.client_args("tcp", "bench"), "bench"]  # fmt: skip
    env = {**os.environ, "PGPASSWORD": password, "PGCONNECT_TIMEOUT": "5"}
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True
    )


def finish(process: subprocess.Popen[str]) -> tuple[PgbenchReport, str]:
    try:
        output, _ = process.communicate(timeout=BOUND_S)
    except subprocess.TimeoutExpired:
        kill_group(process)
        return parse_report("", -9), "(killed at the bound)"
    return parse_report(output, process.returncode), output


def run_pgbench(pooler: PgCat, password: str, clients: int, *flags: str) -> tuple[PgbenchReport, str]:
    return finish(start_pgbench(pooler, password, clients, *flags))


def pgcat_process(pooler: PgCat) -> psutil.Process:
    [process] = [p for p in pooler.processes() if p.name() == "pgcat"]
    return process


class Watch:
    """The most bench backends the server had, and the most clients pgcat's SHOW POOLS had waiting, polled
    every 100 ms while a run goes on (through the adapter's pool_watch, as the pools probe reads it)."""

    def __init__(self, cluster: Cluster, pooler: PgCat) -> None:
        self.cluster, self.pooler = cluster, pooler
        self.backends = self.waiting = self.polls = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with (
            psycopg.connect(self.cluster.conninfo(), autocommit=True) as server,
            self.pooler.pool_watch("bench") as read,
        ):
            assert read is not None
            while not self._stop.wait(0.1):
                self.backends = max(self.backends, server.execute(BENCH_BACKENDS).fetchone()[0])  # type: ignore[index]
                self.waiting = max(self.waiting, read()[0])
                self.polls += 1

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def test_clients_log_in_through_pgcat_with_md5_and_it_logs_in_to_the_server_with_scram(
    scram_cluster: tuple[Cluster, str, str],
) -> None:
    cluster, password, verifier = scram_cluster
    pooler = pgcat_for(cluster, password, verifier)
    with pooler:
        version = features.parse_version(PgCat.version())
        assert version is not None and version >= (1, 2, 0), PgCat.version()
        # Its one process runs as postgres, and the memory probes read it (and runuser) from the start.
        assert pgcat_process(pooler).username() == SERVER_USER
        assert pooler.start_memory is not None and pooler.start_memory.processes == 2
        with psycopg.connect(pooler.admin_conninfo(), cursor_factory=psycopg.ClientCursor) as console:
            console.autocommit = True
            shown = console.execute("SHOW VERSION").fetchone()
        assert shown is not None and shown[0].endswith(".".join(str(part) for part in version)), shown
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(pooler.conninfo("bench", "bench") + " password=wrong", connect_timeout=5).close()
        # The trust user is left out of its config: MD5 needs a password.
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(pooler.conninfo("bench", SERVER_USER), connect_timeout=5).close()
        with psycopg.connect(pooler.conninfo("bench", "bench") + f" password={password}") as conn:
            assert conn.execute("SELECT current_user").fetchone() == ("bench",)
        report, output = run_pgbench(pooler, password, 2 * POOL)
        assert report.ok and report.tps and report.tps > 0, output
        assert report.failed_transactions in (0, None), output
        # Its server connections are SCRAM logins of bench, and no more than the pool.
        assert 0 < cluster.execute(BENCH_BACKENDS)[0][0] <= POOL
        counters = pooler.counters()
        assert 0 < counters["sv_active"] + counters["sv_idle"] <= POOL, counters


def test_pgcat_runs_with_the_allocator_machine_yaml_records(scram_cluster: tuple[Cluster, str, str]) -> None:
    cluster, password, verifier = scram_cluster
    said = PgCat.facts()["allocator"]
    pooler = pgcat_for(cluster, password, verifier)
    with pooler:
        maps = Path(f"/proc/{pgcat_process(pooler).pid}/maps").read_text()
        runuser_maps = Path(f"/proc/{pooler.processes()[-1].pid}/maps").read_text()
    preloaded = str(DEBIAN_JEMALLOC) in maps
    assert preloaded == (said == pgcat_adapter.PRELOADED_JEMALLOC), said
    assert preloaded == (DEBIAN_JEMALLOC.is_file() and said != pgcat_adapter.LINKED_JEMALLOC), said
    assert str(DEBIAN_JEMALLOC) not in runuser_maps  # only pgcat's own exec gets it


def test_clients_past_the_pool_wait_at_pgcat_and_the_server_sees_the_pool(
    scram_cluster: tuple[Cluster, str, str],
) -> None:
    cluster, password, verifier = scram_cluster
    pooler = pgcat_for(cluster, password, verifier)
    with pooler:
        with Watch(cluster, pooler) as watch:
            report, output = run_pgbench(pooler, password, 5 * POOL)
        assert report.ok and report.clients_connected(5 * POOL) == 5 * POOL, output
        assert watch.polls > 5 and watch.backends == POOL, (watch.backends, watch.polls)
        assert watch.waiting > 0  # SHOW POOLS saw clients queued behind the pool


@pytest.mark.parametrize(
    ("variant", "settings", "works"),
    [("default config: no statement cache", {}, False), ("cache on", {"prepared_statements": True}, True)],
)
def test_prepared_statements_through_pgcat(
    scram_cluster: tuple[Cluster, str, str], variant: str, settings: dict[str, object], works: bool
) -> None:
    cluster, password, verifier = scram_cluster
    pooler = pgcat_for(cluster, password, verifier, **settings)
    with pooler:
        report, output = run_pgbench(pooler, password, 3 * POOL, "-M", "prepared")
    collisions = [error for error in report.errors if "prepared statement" in error]
    if works:
        assert report.ok and report.tps and report.tps > 0, f"{variant}: {output}"
        assert collisions == [] and report.failed_transactions in (0, None), f"{variant}: {output}"
    else:
        # More clients than server connections and nothing tracks the statements: a client's EXECUTE lands
        # on a server connection where its "P_0" does not exist, or its PREPARE on one where another's does.
        assert collisions, f"{variant}: exit {report.exit_code}: {output}"


def test_a_stop_with_clients_connected_leaves_no_process(scram_cluster: tuple[Cluster, str, str]) -> None:
    cluster, password, verifier = scram_cluster
    pooler = pgcat_for(cluster, password, verifier)
    with pooler:
        client = start_pgbench(pooler, password, 2 * POOL, seconds=20)
        deadline = time.monotonic() + 10
        counters = pooler.counters()
        while not counters.get("sv_active") and time.monotonic() < deadline:
            time.sleep(0.2)
            counters = pooler.counters()
        assert counters.get("sv_active"), f"no client got through: {counters}"
        pids = [process.pid for process in pooler.processes()]
        started = time.monotonic()
    stopped_s = time.monotonic() - started
    try:
        assert stopped_s < 10, f"the stop took {stopped_s:.1f} s"
        assert not pooler.running() and pooler.processes() == []
        alive = [pid for pid in pids if psutil.pid_exists(pid)]
        assert alive == [], [psutil.Process(pid).as_dict(["name", "status"]) for pid in alive]
        root = str(pooler.setup.root)
        left = [
            p.pid for p in psutil.process_iter(["cmdline"]) if any(root in a for a in p.info["cmdline"] or [])
        ]
        assert left == [], f"processes still naming {root}: {left}"
        with socket.socket() as probe:  # its port is free again (SO_REUSEADDR: its clients' TIME_WAIT aside)
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(("127.0.0.1", pooler.port))
            probe.listen()
    finally:
        with contextlib.suppress(Exception):
            kill_group(client)


def test_prepared_statements_experiment_through_pgcat(
    connlab_env: dict[str, str], pgcat_binary: Path
) -> None:
    """The experiment's pgcat windows with -M prepared, tiny: with the cache on they run clean; with the
    default config they fail with pgbench's error, a result. machine.yaml says which pgcat and allocator."""
    machine = "e2e-pgcat"
    env = {**connlab_env, "PGCAT_BIN": str(pgcat_binary)}
    workloads = ("pgcat-prepared", "pgcat-prepared-prepared")
    result = subprocess.run(
        [sys.executable, "-m", "connlab.cli", "run", "prepared-statements", "--profile", "tiny",
         "--machine", machine, *(arg for workload in workloads for arg in ("--workload", workload))],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    results = Path(env["CONNLAB_RESULTS_DIR"]) / machine
    [path] = sorted((results / "prepared-statements").glob("*.csv"))
    with path.open(newline="") as handle:
        rows = {row["workload"]: row for row in csv.DictReader(handle)}
    assert set(rows) == set(workloads), sorted(rows)
    cached, default = rows["pgcat-prepared-prepared"], rows["pgcat-prepared"]
    assert cached["ok"] == "true" and float(cached["tps"]) > 0, cached["error"]
    assert int(cached["pooler_rss_peak_bytes"]) > 0 and int(cached["pooler_start_processes"]) == 2, cached
    assert default["ok"] == "false" and "prepared statement" in default["error"], default
    facts = yaml.safe_load((results / "machine.yaml").read_text())
    assert facts["pgcat_version"] == ".".join(map(str, features.parse_version(PgCat.version()) or ()))
    assert facts["pgcat_allocator"] in (
        pgcat_adapter.LINKED_JEMALLOC, pgcat_adapter.PRELOADED_JEMALLOC, pgcat_adapter.GLIBC_MALLOC,
    )  # fmt: skip
