"""Two PgBouncer processes on one port (`so_reuseport`), pure: each process's pgbouncer-<n>.ini, and the
auth and hba files they share.

PgBouncer is one process on one core; seed 004 found that process to be the ceiling and suggested more
poolers. With so_reuseport = 1 each process opens its own listening socket on the same port and the
kernel spreads new client connections over them. Each process keeps its own pools, so a pool size here is
per process: the server sees up to twice it. The unix sockets cannot be shared, so each process gets a
folder of its own (p1/, p2/) where the harness reaches that one process's admin console.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from connlab.contract.poolers.setup import PoolerConfig, PoolerSetup
from connlab.poolers.pgbouncer import config as pgbouncer

KIND = "pgbouncer-pair"
PROCESSES = (1, 2)


def ini_name(number: int) -> str:
    return f"pgbouncer-{number}.ini"


def log_name(number: int) -> str:
    return f"pgbouncer-{number}.log"


def pid_name(number: int | str) -> str:
    return f"pgbouncer-{number}.pid"


def socket_dir(root: Path, number: int) -> Path:
    return root / f"p{number}"


def process_settings(setup: PoolerSetup, number: int) -> dict[str, object]:
    """What differs between the two processes (their files and unix socket), and the shared port's switch."""
    return {
        "so_reuseport": 1,
        "unix_socket_dir": socket_dir(setup.root, number),
        "logfile": setup.root / log_name(number),
        "pidfile": setup.root / pid_name(number),
    }


def config_files(setup: PoolerSetup) -> dict[str, str]:
    files: dict[str, str] = {}
    for number in PROCESSES:
        own = replace(setup, settings={**setup.settings, **process_settings(setup, number)})
        single = pgbouncer.config_files(own)
        files[ini_name(number)] = single.pop(pgbouncer.INI)
        files.update(single)  # the auth and hba files, the same for both
    return files


def snippet_start(root: str) -> str:
    # Double quotes outside so the block's shell expands $DIR before the inner shell runs both starts.
    starts = " && ".join(f"pgbouncer -d '{root}/{ini_name(number)}'" for number in PROCESSES)
    return f'sh -c "{starts}"'


CONFIG = PoolerConfig(
    kind=KIND,
    label="PgBouncer, two processes",
    binary="pgbouncer",
    config_files=config_files,
    snippet_start=snippet_start,
    # Both processes' pid files: the snippet's clean-up expands the pattern and stops each.
    pid_file=pid_name("*"),
    admin_database=pgbouncer.ADMIN_DATABASE,
    version_args=None,  # PgBouncer's program: pgbouncer_version says which
)
