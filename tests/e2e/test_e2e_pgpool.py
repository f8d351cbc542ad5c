"""PgPool-II for real through its adapter, SCRAM end to end, on a throwaway cluster: select-only at fewer
clients than num_init_children runs; at more, the run ends within its bound with a measured number of
clients served (the seed's ceiling, not a hang); and no pooler process outlives the adapter.

Run under the shared lock: it starts PostgreSQL, PgPool-II and pgbench.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from connlab.errors import LabError
from connlab.interrupts import kill_group
from connlab.lab import cluster as cluster_module
from connlab.lab.cluster import Cluster
from connlab.lab.host import find_program, free_port
from connlab.lab.pgbench import parse_report
from connlab.lab.poolers.base import PoolerSetup, PoolerUser
from connlab.poolers.pgpool.adapter import PgPool, children_counts
from connlab.probes.pooler_memory.sampler import PoolerMemorySampler

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("require_root", "require_postgres")]

CHILDREN = 4
WINDOW_S = 3
# Clients past the children wait at the pooler: libpq gives up on them after this, and the whole run is
# killed after BOUND_S in any case.
CONNECT_TIMEOUT_S = 4
BOUND_S = 30
HBA = [
    "local all bench scram-sha-256", "host all bench 127.0.0.1/32 scram-sha-256",
    "local all postgres trust", "host all postgres 127.0.0.1/32 trust",
]  # fmt: skip


@pytest.fixture
def scram_cluster(shared_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Cluster, str]]:
    monkeypatch.setattr(cluster_module, "LAB_DIR", shared_tmp / "lab")
    password = secrets.token_urlsafe(24)
    with Cluster("e2e-pgpool", {"password_encryption": "scram-sha-256"}, hba_lines=HBA) as cluster:
        cluster.execute(f"CREATE ROLE bench LOGIN PASSWORD '{password}'")
        cluster.execute("CREATE DATABASE bench OWNER bench")
        pgbench = find_program("pgbench", cluster.bindir)
        init = subprocess.run(
            [pgbench, "-i", "-s", "1", "-q", *cluster.client_args("unix", "bench"), "bench"],
            env={**os.environ, "PGPASSWORD": password}, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert init.returncode == 0, init.stderr
        yield cluster, password


def pgpool_for(cluster: Cluster, password: str) -> PgPool:
    setup = PoolerSetup(
        root=cluster.root / "pgpool", port=free_port(), server_host=str(cluster.socket_dir),
        server_port=cluster.port or 0, databases=["bench"], pool_size=CHILDREN,
        users=[PoolerUser("postgres"), PoolerUser("bench", password=password)], hba_lines=HBA,
    )  # fmt: skip
    return PgPool(setup)


def run_pgbench(
    pooler: PgPool, password: str, clients: int
) -> tuple[subprocess.CompletedProcess[str], float]:
    pgbench = find_program("pgbench", None)
    command = [pgbench, "-n", "-S", "-c", str(clients), "-j", str(clients), "-T", str(WINDOW_S),
               *pooler.client_args("tcp", "bench"), "bench"]  # fmt: skip
    env = {**os.environ, "PGPASSWORD": password, "PGCONNECT_TIMEOUT": str(CONNECT_TIMEOUT_S)}
    started = time.monotonic()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True
    )
    try:
        output, _ = process.communicate(timeout=BOUND_S)
    except subprocess.TimeoutExpired:
        kill_group(process)
        output = (process.stdout.read() if process.stdout else "") + "\n(killed at the bound)"
    return subprocess.CompletedProcess(command, process.returncode, output), time.monotonic() - started


def served_now(pooler: PgPool) -> int:
    """Clients PgPool-II's children serve now, read from their titles without logging in."""
    return int(children_counts(pooler.child_titles())["clients_served"])


class ServedSampler:
    """The most clients PgPool-II's children served at once during a run, from their process titles."""

    def __init__(self, pooler: PgPool) -> None:
        self.pooler = pooler
        self.most = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            self.most = max(self.most, served_now(self.pooler))

    def __enter__(self) -> ServedSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def test_pgpool_serves_scram_clients_up_to_its_children_and_then_ends_bounded(
    scram_cluster: tuple[Cluster, str],
) -> None:
    cluster, password = scram_cluster
    pooler = pgpool_for(cluster, password)
    assert PgPool.version().startswith("pgpool-II version 4.")
    with pooler:
        key = pooler.setup.root / ".pgpoolkey"
        assert key.stat().st_mode & 0o777 == 0o600 and key.owner() == "postgres"
        pool_passwd = (pooler.setup.root / "pool_passwd").read_text()
        assert pool_passwd.startswith("bench:AES") and password not in pool_passwd
        assert not (pooler.setup.root / "pg_enc.pairs").exists()
        before = pooler.counters()
        assert before["children"] == CHILDREN
        # The start check's login and counters()' own SHOW POOL_NODES may still be closing in their
        # children: wait on the titles alone, since counters() would log in again and keep one busy.
        deadline = time.monotonic() + 10
        while served_now(pooler) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert served_now(pooler) == 0, pooler.child_titles()

        with PoolerMemorySampler(pooler.processes, interval_s=0.2) as memory:
            fewer, _ = run_pgbench(pooler, password, CHILDREN - 2)
        report = parse_report(fewer.stdout, fewer.returncode)
        assert report.ok, fewer.stdout
        assert report.tps and report.tps > 0
        figures = memory.figures()
        # The parent, its helpers (PCP, worker, health check) and every child, plus runuser and sh.
        assert figures["pooler_processes_peak"] and figures["pooler_processes_peak"] >= CHILDREN + 2
        assert figures["pooler_pss_peak_bytes"] and figures["pooler_pss_peak_bytes"] > 0

        more = 2 * CHILDREN + 2
        with ServedSampler(pooler) as served:
            crowd, seconds = run_pgbench(pooler, password, more)
        crowd_report = parse_report(crowd.stdout, crowd.returncode)
        assert seconds < BOUND_S + 15, "the over-the-ceiling run was not bounded"
        # Clients past the children wait at the pooler until libpq's connect timeout ends them.
        assert not crowd_report.ok and "timeout expired" in crowd.stdout, crowd.stdout
        assert served.most == CHILDREN, (served.most, crowd.stdout)
        backends = cluster.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE usename = 'bench' AND backend_type = %s",
            ("client backend",),
        )[0][0]
        assert backends <= CHILDREN  # max_pool = 1: never more server connections than children
        pids = [process.pid for process in pooler.processes()]
        assert len(pids) >= CHILDREN + 2
    assert not pooler.running()
    assert [pid for pid in pids if psutil.pid_exists(pid)] == []


def test_pgpool_on_a_taken_port_is_one_line_naming_it_and_leaves_nothing(
    scram_cluster: tuple[Cluster, str],
) -> None:
    cluster, password = scram_cluster
    pooler = pgpool_for(cluster, password)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", pooler.port))
        holder.listen()
        with pytest.raises(LabError) as caught, pooler:
            pass
    message = str(caught.value)
    assert message.startswith("pgpool exited at start: ") and "\n" not in message
    assert "(no log)" not in message and "(empty log)" not in message
    assert not pooler.running() and pooler.processes() == []


def test_pgpool_without_its_key_fails_the_start_in_one_line(
    scram_cluster: tuple[Cluster, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The seed's trap: pgpool starts without the key in its environment, then refuses SCRAM logins."""
    cluster, password = scram_cluster
    pooler = pgpool_for(cluster, password)
    monkeypatch.setattr(pooler, "extra_environment", lambda: {"PGPOOLKEYFILE": "/nonexistent/.pgpoolkey"})
    with pytest.raises(LabError) as caught, pooler:
        pass
    message = str(caught.value)
    assert message.startswith("pgpool: SCRAM login of bench failed at start: ") and "\n" not in message
    assert "(log: " in message and "(no log)" not in message  # 4.3.5: "unable to decrypt password ..."
    assert not pooler.running() and pooler.processes() == []
