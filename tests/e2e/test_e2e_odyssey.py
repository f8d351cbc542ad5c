"""Odyssey for real through its adapter, on a throwaway cluster with SCRAM: clients logging in through it in
transaction pooling, the ceiling of its pool (clients past it wait, the server never sees more), its own
server connections told from another pooler's, prepared statements with and without its support, and a stop
with clients connected that leaves no process.

The binary: the harness's (ODYSSEY_BIN, PATH, build/odyssey), else ../shared/tools/odyssey's
(tests/support/odyssey_binary.py); skipped only where neither is here. One cluster for the module (one
worker).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest

from connlab.interrupts import kill_group
from connlab.lab import cluster as cluster_module
from connlab.lab.cluster import Cluster
from connlab.lab.host import find_program, free_port
from connlab.lab.pgbench import PgbenchReport, parse_report
from connlab.lab.poolers.base import PoolerSetup, PoolerUser
from connlab.lab.window import BACKEND_PORTS_SQL, foreign_pids, server_client_ports
from connlab.poolers.odyssey import config
from connlab.poolers.odyssey.adapter import Odyssey, parsed_version
from support.odyssey_binary import SKIP_REASON, find_odyssey

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.xdist_group("odyssey"),
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
def odyssey_binary() -> Path:
    binary = find_odyssey()
    if binary is None:
        pytest.skip(SKIP_REASON)
    return binary


@pytest.fixture(scope="module")
def scram_cluster(odyssey_binary: Path) -> Iterator[tuple[Cluster, str, str]]:
    """The cluster, bench's password and the server's SCRAM verifier of it."""
    if os.geteuid() != 0:
        pytest.skip("needs root (the server and Odyssey run as the postgres user)")
    folder = Path(tempfile.mkdtemp(prefix="clt-", dir="/tmp"))
    folder.chmod(0o755)
    password = secrets.token_urlsafe(24)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(cluster_module, "LAB_DIR", folder / "lab")
            patch.setenv("ODYSSEY_BIN", str(odyssey_binary))
            with Cluster("e2e-odyssey", {"password_encryption": "scram-sha-256"}, hba_lines=HBA) as cluster:
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


def odyssey_for(
    cluster: Cluster, password: str, verifier: str, version: config.Version | None = None, **settings: object
) -> Odyssey:
    setup = PoolerSetup(
        root=cluster.root / f"odyssey-{secrets.token_hex(4)}", port=free_port(),
        server_host=str(cluster.socket_dir), server_port=cluster.port or 0, databases=["bench"],
        pool_size=POOL, users=[PoolerUser("postgres"), PoolerUser("bench", verifier, password)],
        settings=dict(settings),
    )  # fmt: skip
    return Odyssey(setup, version)


def start_pgbench(
    pooler: Odyssey, password: str, clients: int, *flags: str, seconds: int = WINDOW_S
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


def run_pgbench(pooler: Odyssey, password: str, clients: int, *flags: str) -> tuple[PgbenchReport, str]:
    return finish(start_pgbench(pooler, password, clients, *flags))


class Watch:
    """The most bench backends the server had, and the most clients Odyssey's SHOW POOLS had waiting,
    polled every 100 ms while a run goes on."""

    def __init__(self, cluster: Cluster, pooler: Odyssey) -> None:
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


def test_scram_clients_share_odysseys_pool_in_transaction_pooling(
    scram_cluster: tuple[Cluster, str, str], odyssey_binary: Path
) -> None:
    cluster, password, verifier = scram_cluster
    pooler = odyssey_for(cluster, password, verifier)
    with pooler:
        version = parsed_version(Odyssey.version())
        assert pooler.odyssey_version == version
        written = (pooler.setup.root / config.CONF).read_text()
        assert ("log_queue_depth 1000" in written) == (version >= config.LOG_BUFFER_SINCE)
        # Before the first client: no 31 MB logging buffer in it (runuser and Odyssey together).
        assert pooler.start_memory is not None and pooler.start_memory.rss_bytes < 25 * 2**20
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(pooler.conninfo("bench", "bench") + " password=wrong", connect_timeout=5).close()
        with psycopg.connect(pooler.conninfo("bench", "bench") + f" password={password}") as conn:
            assert conn.execute("SELECT current_user").fetchone() == ("bench",)
        report, output = run_pgbench(pooler, password, 2 * POOL)
        assert report.ok and report.tps and report.tps > 0, output
        assert report.failed_transactions in (0, None), output
        assert 0 < cluster.execute(BENCH_BACKENDS)[0][0] <= POOL  # the pool stays open between runs
        counters = pooler.counters()
        assert 0 < counters["sv_active"] + counters["sv_idle"] <= POOL + 1  # bench's pool and postgres'


def test_clients_past_the_pool_wait_at_odyssey_and_the_server_sees_the_pool(
    scram_cluster: tuple[Cluster, str, str],
) -> None:
    cluster, password, verifier = scram_cluster
    pooler = odyssey_for(cluster, password, verifier)
    with pooler:
        with Watch(cluster, pooler) as watch:
            report, output = run_pgbench(pooler, password, 5 * POOL)
        assert report.ok and report.clients_connected(5 * POOL) == 5 * POOL, output
        assert watch.polls > 5 and watch.backends == POOL, (watch.backends, watch.polls)
        assert watch.waiting > 0  # SHOW POOLS saw clients queued behind the pool

        # Odyssey keeps its pool between windows: those backends are its own, a direct one is another's.
        with psycopg.connect(f"host=127.0.0.1 port={cluster.port} user=postgres dbname=bench") as direct:
            other = direct.info.backend_pid
            rows = cluster.execute(BACKEND_PORTS_SQL)
            own_ports = server_client_ports(pooler.processes(), cluster.port or 0)
            assert len(own_ports) >= POOL
            assert foreign_pids(rows, own_ports) == {other}, (rows, own_ports)


@pytest.mark.parametrize(
    ("variant", "version", "settings", "works"),
    [
        ("this version's default config", None, {}, True),
        ("support switched on", None, {"prepared_statements": True}, True),
        ("1.4's default config: support off", (1, 4, 0), {}, False),
    ],
)
def test_prepared_statements_through_odyssey(
    scram_cluster: tuple[Cluster, str, str],
    variant: str,
    version: config.Version | None,
    settings: dict[str, object],
    works: bool,
) -> None:
    cluster, password, verifier = scram_cluster
    if (
        version is None
        and parsed_version(Odyssey.version()) < config.PREPARED_DEFAULT_ON_SINCE
        and not settings
    ):
        works = False  # before 1.5.0 the default config has no support
    pooler = odyssey_for(cluster, password, verifier, version, **settings)
    with pooler:
        report, output = run_pgbench(pooler, password, 2 * POOL, "-M", "prepared")
    collisions = [error for error in report.errors if "prepared statement" in error]
    if works:
        assert report.ok and report.tps and report.tps > 0, f"{variant}: {output}"
        assert collisions == [], f"{variant}: {output}"
    else:
        # More clients than server connections, and nothing tracks the statements: a client's PREPARE meets
        # another client's "P_0" on the server connection it lands on ("already exists"), or its EXECUTE
        # lands where there is none ("does not exist", and the run is aborted). pgbench 15 only logs the
        # first kind, so whether the run fails depends on timing; the collision itself does not.
        assert collisions, f"{variant}: exit {report.exit_code}: {output}"


def connected(counters: dict[str, float]) -> float:
    """Clients connected to the pooler, whether or not they hold a server connection this instant."""
    return counters.get("cl_active", 0.0) + counters.get("cl_waiting", 0.0)


def test_a_stop_with_clients_connected_leaves_no_process(scram_cluster: tuple[Cluster, str, str]) -> None:
    cluster, password, verifier = scram_cluster
    pooler = odyssey_for(cluster, password, verifier)
    with pooler:
        client = start_pgbench(pooler, password, 2 * POOL, seconds=20)
        # One reading decides: in transaction mode a connected client counts as cl_active only while it holds
        # a server connection, so a second SHOW POOLS may catch every client between transactions (waiting).
        deadline = time.monotonic() + 10
        counters = pooler.counters()
        while not (connected(counters) and counters.get("sv_active")) and time.monotonic() < deadline:
            time.sleep(0.2)
            counters = pooler.counters()
        assert connected(counters) and counters.get("sv_active"), f"no client got through: {counters}"
        pids = [process.pid for process in pooler.processes()]
        assert pids, "no Odyssey process to stop"
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
