"""Two PgBouncer processes on one port: their files (pure), and on a throwaway cluster both processes
running, each reachable on its own socket and the shared port spreading logins over the two."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from connlab.contract.poolers.setup import PoolerSetup
from connlab.lab import cluster as cluster_module
from connlab.lab.cluster import Cluster
from connlab.lab.host import free_port
from connlab.lab.poolers.registry import POOLERS
from connlab.poolers.pgbouncer_pair import config
from connlab.poolers.pgbouncer_pair.adapter import PgBouncerPair


def ini_settings(text: str) -> dict[str, str]:
    section = text.split("[pgbouncer]", 1)[1]
    return dict(line.split(" = ", 1) for line in section.strip().splitlines())


def test_each_process_has_its_own_files_and_socket_on_the_shared_port() -> None:
    setup = PoolerSetup(root=Path("/run/x"), port=6432, server_host="/s", server_port=5432, databases=["b"])
    files = config.config_files(setup)
    assert set(files) == {"pgbouncer-1.ini", "pgbouncer-2.ini", "userlist.txt"}
    first, second = (ini_settings(files[config.ini_name(n)]) for n in config.PROCESSES)
    for settings in (first, second):
        assert (settings["so_reuseport"], settings["listen_port"]) == ("1", "6432")
    for key in ("unix_socket_dir", "logfile", "pidfile"):
        assert first[key] != second[key], key
    assert POOLERS[config.KIND] is PgBouncerPair


def test_the_block_starts_both_processes_on_the_servers_core() -> None:
    """One command, so the block's `taskset -c 0` covers both processes; in double quotes, so the block's
    shell expands $DIR before the inner shell (which has no DIR of its own) runs them."""
    start = config.snippet_start("$DIR/pgbouncer-pair")
    assert start.startswith('sh -c "') and start.count("pgbouncer -d '$DIR/pgbouncer-pair/") == 2


@pytest.mark.e2e
def test_both_processes_serve_the_shared_port(shared_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster_module, "LAB_DIR", shared_tmp / "lab")
    with Cluster("e2e-pair") as cluster:
        setup = PoolerSetup(
            root=cluster.root / "pair", port=free_port(), server_host=str(cluster.socket_dir),
            server_port=cluster.port or 0, databases=["postgres"],
        )  # fmt: skip
        with PgBouncerPair(setup) as pair:
            assert pair.running()
            assert sum(p.name() == "pgbouncer" for p in pair.processes()) == 2
            for process in (pair, pair.second):
                with process.admin() as admin:
                    assert admin.execute("SHOW VERSION").fetchone()
            for _ in range(20):  # the kernel spreads these over both listening sockets
                psycopg.connect(pair.conninfo("postgres"), connect_timeout=5).close()
            pair.reset_server_connections()
        assert not pair.running() and pair.processes() == []
