"""pgcat: config writer, start and stop, run whenever its binary is on PATH or named by PGCAT_BIN.

Contract: `PoolerProcess` (base.py). Where the binary is absent, `binary()` raises `PoolerUnavailable`
("pgcat: not available on this machine; ...") and the row says so: nothing is faked.

The config (pgcat.toml) from the `PoolerSetup`: one `[pools.<database>]` per database in transaction mode,
one user entry per user with `pool_size` server connections, one shard whose single server is the
throwaway cluster over TCP on 127.0.0.1, an admin console (database "pgcat", its own user and a password
generated per adapter) for `SHOW POOLS`, no Prometheus exporter, no query parser.

SCRAM and its traps:
- pgcat logs in to the server with SCRAM from the plain password in the config (the run's generated one,
  in a mode-600 file removed with the cluster), but it checks its own clients with MD5 only (client SCRAM
  is an open feature request upstream): `support("scram-sha-256 client authentication")` says so, and the
  seed's "scram-sha-256 on both sides" held for pgcat's server side only.
- MD5 needs a password for every user: a user without one (the server's trust user) is refused when the
  config is written. The start check therefore logs in to the admin console instead.
- pgcat logs to the terminal only; the shell sends that to pooler.log. It has no unix socket: a
  unix-transport window through it is refused in one line.
- SIGINT starts a graceful shutdown that waits `shutdown_timeout` (60 s by default) for clients: 1 s here.
- `prepared_statements_cache_size` (setting `prepared_statements: true` -> 500, the seed's value) is a
  per-pool key; 0 leaves the cache off. The seed's pgcat aborted with it on; that is a result to record.
- The seed saw pgcat panic in `elapsed().unwrap()` when the clock stepped back: a window whose pooler
  exited is failed, and the next one starts it again.
"""

from __future__ import annotations

import json
import secrets
import subprocess
from typing import ClassVar

from connlab.contract.names import SERVER_USER
from connlab.errors import LabError
from connlab.lab.poolers import admin, features
from connlab.lab.poolers.base import SUPPORTED, PoolerProcess, PoolerSetup, find_binary, logging_to
from connlab.lab.poolers.odyssey import server_tcp_host

ADMIN_DB = "pgcat"
ADMIN_USER = "connlab_admin"
PREPARED_CACHE_SIZE = 500
VERSION_TIMEOUT_S = 10
# The per-pool prepared_statements_cache_size came with postgresml/pgcat#618 (October 2023); the first
# release carrying it is assumed to be 1.2: check against an installed binary's CONFIG.md.
PREPARED_SINCE = (1, 2)


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    return json.dumps(str(value))  # a JSON string is a valid TOML basic string


def _table(name: str, values: dict[str, object]) -> list[str]:
    return [f"[{name}]", *[f"{key} = {_toml(value)}" for key, value in values.items()], ""]


class PgCat(PoolerProcess):
    name: ClassVar[str] = "pgcat"
    label: ClassVar[str] = "pgcat"
    env_var: ClassVar[str] = "PGCAT_BIN"
    known_paths: ClassVar[tuple[str, ...]] = (
        "/usr/local/bin/pgcat",
        "/usr/bin/pgcat",
    )
    config_name: ClassVar[str] = "pgcat.toml"

    def __init__(self, setup: PoolerSetup) -> None:
        super().__init__(setup)
        # The admin console's password: per adapter, never a fixed word (a fixed one only for golden tests).
        self.admin_password = str(setup.settings.get("admin_password") or secrets.token_urlsafe(24))

    @classmethod
    def binary(cls) -> str:
        return find_binary("pgcat", cls.env_var, *cls.known_paths)

    @classmethod
    def version(cls) -> str:
        result = subprocess.run(
            [cls.binary(), "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT_S
        )
        return (result.stdout + result.stderr).strip()

    # --- configuration (pure) --------------------------------------------------------------------
    def general(self) -> dict[str, object]:
        own = (features.PREPARED_STATEMENTS_SETTING, "admin_password")
        extra = {key: value for key, value in self.setup.settings.items() if key not in own}
        return {
            "host": "127.0.0.1",
            "port": self.setup.port,
            "admin_username": ADMIN_USER,
            "admin_password": self.admin_password,
            "enable_prometheus_exporter": False,
            "worker_threads": 1,
            "connect_timeout": 5000,
            "server_lifetime": 86_400_000,
            "shutdown_timeout": 1000,
            "log_client_connections": False,
            "log_client_disconnections": False,
            **extra,
        }

    def pool_tables(self, database: str) -> list[str]:
        setup = self.setup
        cache = PREPARED_CACHE_SIZE if setup.settings.get(features.PREPARED_STATEMENTS_SETTING) else 0
        pool = {
            "pool_mode": setup.pool_mode,
            "default_role": "primary",
            "query_parser_enabled": False,
            "prepared_statements_cache_size": cache,
        }
        lines = _table(f"pools.{json.dumps(database)}", pool)
        for index, user in enumerate(setup.users):
            if not user.password:
                raise LabError(f"pgcat: user {user.name} has no password; pgcat checks every client with MD5")
            values = {"username": user.name, "password": user.password, "pool_size": setup.pool_size,
                      "min_pool_size": 0, "statement_timeout": 0}  # fmt: skip
            lines += _table(f"pools.{json.dumps(database)}.users.{index}", values)
        server = [server_tcp_host(setup.server_host), setup.server_port, "primary"]
        lines += _table(f"pools.{json.dumps(database)}.shards.0", {"servers": [server], "database": database})
        return lines

    def config_text(self) -> str:
        lines = _table("general", self.general())
        for database in self.setup.databases:
            lines += self.pool_tables(database)
        return "\n".join(lines)

    def config_files(self) -> dict[str, str]:
        return {self.config_name: self.config_text()}

    def command(self, binary: str) -> list[str]:
        root = self.setup.root
        return logging_to(root / self.log_file, [binary, str(root / self.config_name)])

    # --- while it runs ----------------------------------------------------------------------------
    def client_args(self, transport: str = "tcp", user: str = SERVER_USER) -> list[str]:
        if transport != "tcp":
            raise LabError("pgcat: listens on TCP only; a unix-socket window cannot run through it")
        return super().client_args(transport, user)

    def admin_conninfo(self) -> str:
        return (
            f"host=127.0.0.1 port={self.port} user={ADMIN_USER} dbname={ADMIN_DB} "
            f"password={self.admin_password}"
        )

    def accepts(self) -> bool:
        """The admin console answers (a trust user cannot log in through pgcat: MD5 for everyone)."""
        return admin.query_pools(self.admin_conninfo()) is not None

    def counters(self) -> dict[str, float]:
        return admin.show_pools(self.admin_conninfo())

    def support(self, feature: str) -> str:
        if feature == features.PREPARED_IN_TRANSACTION_MODE:
            return features.not_in_version(self.version(), PREPARED_SINCE)
        if feature == features.SCRAM_CLIENT_AUTH:
            return "not supported: pgcat checks clients with MD5 (SCRAM only towards the server)"
        if feature == features.TRANSACTION_POOLING:
            return SUPPORTED
        if feature == features.SERVER_CONNECTION_RESET:
            return "not supported: pgcat closes idle server connections only by idle_timeout"
        return features.unknown_feature(feature)
