"""PgBouncer behind the pooler contract (connlab.lab.poolers.base): its files come from the pure config
module (connlab.poolers.pgbouncer.config) that the site's snippet prints too.

PgBouncer refuses to run as root, so as root it runs through runuser like the server does; SIGINT is its
safe shutdown. Its admin console (database "pgbouncer") speaks only the simple query protocol.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Callable, Iterator

import psycopg

from connlab.contract.poolers import features
from connlab.lab.poolers.admin import pool_waits
from connlab.lab.poolers.base import FeatureUnsupported, PoolerProcess
from connlab.poolers.pgbouncer import config


class PgBouncer(PoolerProcess):
    declaration = config.CONFIG
    env_var = "CONNLAB_PGBOUNCER"
    log_file = config.LOG_FILE

    def config_files(self) -> dict[str, str]:
        if config.prepared_cache_size(self.setup.settings) is None:
            return config.config_files(self.setup)
        knows = self.support(features.PREPARED_IN_TRANSACTION_MODE) == features.SUPPORTED
        return config.config_files(self.setup, knows_prepared_setting=knows)

    def prepare(self) -> None:
        """Prepared-statement support asked for on a version without it: a result ("not supported by this
        version") in each of its windows' rows, never a start that fails on an unknown key. Asked off
        (`prepared_statements: 0`), such a version runs as it is: off is all it does."""
        if config.prepared_cache_size(self.setup.settings):
            answer = self.support(features.PREPARED_IN_TRANSACTION_MODE)
            if answer != features.SUPPORTED:
                raise FeatureUnsupported(f"{self.name}: prepared statements in transaction mode: {answer}")

    def support(self, feature: str) -> str:
        return features.pgbouncer_support(feature, self.version())

    def command(self, binary: str) -> list[str]:
        # Foreground (no -d): the process is ours to watch and to stop.
        return [binary, str(self.setup.root / config.INI)]

    @classmethod
    def version(cls) -> str:
        result = subprocess.run([cls.binary(), "--version"], capture_output=True, text=True, check=False)
        return (result.stdout or result.stderr).strip().splitlines()[0]

    def admin(self) -> psycopg.Connection:
        return psycopg.connect(
            self.conninfo(config.ADMIN_DATABASE), autocommit=True, cursor_factory=psycopg.ClientCursor
        )

    def reset_server_connections(self) -> None:
        """RECONNECT: idle server connections close now, busy ones when released. Each window then
        starts from an empty pool, and the backends it counts are its own."""
        with self.admin() as conn:
            conn.execute("RECONNECT")

    @contextlib.contextmanager
    def pool_watch(self, database: str) -> Iterator[Callable[[], tuple[int, float]] | None]:
        """SHOW POOLS on one admin connection for the whole window."""
        with self.admin() as conn:

            def read() -> tuple[int, float]:
                cursor = conn.execute("SHOW POOLS")
                names = [column.name for column in cursor.description or []]
                return pool_waits(names, cursor.fetchall(), database)

            yield read


# What the registry (connlab.lab.poolers.registry) runs for this folder's kind.
ADAPTER = PgBouncer
