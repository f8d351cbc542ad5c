"""Two PgBouncer processes sharing one port with so_reuseport (connlab.poolers.pgbouncer_pair.config),
behind the pooler contract: to the harness they are one pooler whose CPU is both processes' CPU.

The first process is this adapter's own (started by PoolerProcess); the second is a `_SecondProcess`
started after it and stopped before it. TCP clients reach either one as the kernel chooses, so everything
that must reach a given process (its readiness, its admin console) goes through that process's own unix
socket folder instead of the shared port.
"""

from __future__ import annotations

from pathlib import Path

import psutil
import psycopg

from connlab.contract.names import SERVER_USER
from connlab.contract.poolers.setup import PoolerSetup
from connlab.lab.host import chown_to_server_user
from connlab.lab.poolers.base import logs_in
from connlab.poolers.pgbouncer import config as single
from connlab.poolers.pgbouncer.adapter import PgBouncer
from connlab.poolers.pgbouncer_pair import config


class _OneOfThePair(PgBouncer):
    """One process of the pair: its own ini, log and unix socket folder."""

    number = 1

    def socket_conninfo(self, dbname: str, user: str = SERVER_USER) -> str:
        folder = config.socket_dir(self.setup.root, self.number)
        return f"host={folder} port={self.port} user={user} dbname={dbname}"

    def command(self, binary: str) -> list[str]:
        return [binary, str(self.setup.root / config.ini_name(self.number))]

    def accepts(self) -> bool:
        """This process, not whichever the shared port hands the login to."""
        return logs_in(self.socket_conninfo(self.setup.databases[0]))

    def admin(self) -> psycopg.Connection:
        return psycopg.connect(
            self.socket_conninfo(single.ADMIN_DATABASE), autocommit=True, cursor_factory=psycopg.ClientCursor
        )

    def log_tail(self) -> str:
        self.log_file = config.log_name(self.number)  # type: ignore[misc]  # per process, not per class
        return super().log_tail()


class _SecondProcess(_OneOfThePair):
    name = "pgbouncer-pair (second process)"
    number = 2

    def write_config(self) -> None:
        """The first process wrote both processes' files."""

    def prepare(self) -> None:
        """Nothing beyond the first process's preparation."""


class PgBouncerPair(_OneOfThePair):
    declaration = config.CONFIG
    log_file = config.log_name(1)

    def __init__(self, setup: PoolerSetup) -> None:
        super().__init__(setup)
        self.second = _SecondProcess(setup)

    def config_files(self) -> dict[str, str]:
        return config.config_files(self.setup)

    def prepare(self) -> None:
        for number in config.PROCESSES:
            folder: Path = config.socket_dir(self.setup.root, number)
            folder.mkdir(parents=True, exist_ok=True)
            chown_to_server_user(folder)

    def __enter__(self) -> PgBouncerPair:
        super().__enter__()
        try:
            self.second.__enter__()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        self.second.stop()
        super().stop()

    def running(self) -> bool:
        return super().running() and self.second.running()

    def processes(self) -> list[psutil.Process]:
        return [*super().processes(), *self.second.processes()]

    def reset_server_connections(self) -> None:
        """RECONNECT in each process: each keeps pools of its own."""
        super().reset_server_connections()
        self.second.reset_server_connections()

    def log_tail(self) -> str:
        return f"first: {super().log_tail()}; second: {self.second.log_tail()}"


# What the registry (connlab.lab.poolers.registry) runs for this folder's kind.
ADAPTER = PgBouncerPair
