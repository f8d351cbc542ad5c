"""pgcat: config writer, start and stop, run whenever its binary is on PATH or named by PGCAT_BIN.

Contract: `PoolerProcess` (base.py). Where the binary is absent, `binary()` raises `PoolerUnavailable`
("pgcat: not available on this machine; ...") and the row says so: nothing is faked.

The config (pgcat.toml) is written by connlab.poolers.pgcat.config, the module the site's
check-it-yourself block prints too: one `[pools.<database>]` per database, one user entry per password user
with `pool_size` server connections, the throwaway cluster over TCP on 127.0.0.1, an admin console
(database "pgcat", its own user and a password generated per adapter) for `SHOW POOLS`.

SCRAM and its traps:
- pgcat logs in to the server with SCRAM from the plain password in the config (the run's generated one,
  in a mode-600 file removed with the cluster), but it checks its own clients with MD5 only (client SCRAM
  is an open feature request upstream): `support("scram-sha-256 client authentication")` says so, and the
  seed's "scram-sha-256 on both sides" held for pgcat's server side only.
- MD5 needs a password for every user: a user without one (the server's trust user) is left out of the
  config. The start check therefore logs in to the admin console instead.
- pgcat logs to the terminal only; the shell sends that to pooler.log. It has no unix socket: a
  unix-transport window through it is refused in one line.
- SIGINT starts a graceful shutdown that waits `shutdown_timeout` (60 s by default) for clients: 1 s here.
- `prepared_statements_cache_size` (setting `prepared_statements: true` -> 500, the seed's value) is a
  per-pool key; 0 leaves the cache off. The seed's pgcat aborted with it on; that is a result to record.
- The seed saw pgcat panic in `elapsed().unwrap()` when the clock stepped back: a window whose pooler
  exited is failed, and the next one starts it again.
"""

from __future__ import annotations

import secrets
from dataclasses import replace
from typing import ClassVar

from connlab.contract.names import SERVER_USER
from connlab.errors import LabError
from connlab.lab.poolers import admin, features
from connlab.lab.poolers.base import SUPPORTED, PoolerProcess, PoolerSetup, logging_to
from connlab.poolers.pgcat import config

ADMIN_DB = config.ADMIN_DB
ADMIN_USER = config.ADMIN_USER
# The per-pool prepared_statements_cache_size came with postgresml/pgcat#618 (October 2023); the first
# release carrying it is assumed to be 1.2: check against an installed binary's CONFIG.md.
PREPARED_SINCE = (1, 2)


class PgCat(PoolerProcess):
    name: ClassVar[str] = "pgcat"
    label: ClassVar[str] = config.CONFIG.label
    env_var: ClassVar[str] = "PGCAT_BIN"
    log_file: ClassVar[str] = config.LOG_FILE
    binary_name: ClassVar[str] = "pgcat"
    known_paths: ClassVar[tuple[str, ...]] = (
        "/usr/local/bin/pgcat",
        "/usr/bin/pgcat",
    )
    config_name: ClassVar[str] = config.CONF

    def __init__(self, setup: PoolerSetup) -> None:
        # The admin console's password: per adapter, never a fixed word (a fixed one only for golden tests).
        self.admin_password = str(
            setup.settings.get(config.ADMIN_PASSWORD_SETTING) or secrets.token_urlsafe(24)
        )
        settings = {**setup.settings, config.ADMIN_PASSWORD_SETTING: self.admin_password}
        super().__init__(replace(setup, settings=settings))

    def config_files(self) -> dict[str, str]:
        return config.config_files(self.setup)

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


# What the registry (connlab.lab.poolers) runs for this folder's kind.
ADAPTER = PgCat
