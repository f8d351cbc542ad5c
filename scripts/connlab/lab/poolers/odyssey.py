"""Odyssey: config writer, start and stop, run whenever its binary is on PATH or named by ODYSSEY_BIN.

Contract: `PoolerProcess` (base.py). Where the binary is absent, `binary()` raises `PoolerUnavailable`
("odyssey: not available on this machine; ...") and the row says so: nothing is faked.

The config (odyssey.conf, Odyssey's own brace syntax) is written by connlab.contract.poolers.odyssey, the
module the site's check-it-yourself block prints too: one `database { user {} }` route per database and
user, transaction pooling with `pool_size` server connections per route, the server reached over TCP on
127.0.0.1, an admin console on the database "console" for `SHOW POOLS`, and the log in the adapter's folder.

SCRAM end to end and its traps:
- Client side: `authentication "scram-sha-256"` with `password` set to the server's stored SCRAM verifier
  (Odyssey's rules accept a plain password, an MD5 hash or a SCRAM secret there), so the password itself
  is not needed to check clients.
- Server side: Odyssey logs in with `storage_password`, the run's generated password in plain text; the
  file is mode 600 in the cluster's folder and removed with it.
- A build without `-DUSE_SCRAM=ON` (and the server-dev headers) starts, then refuses every SCRAM login
  with "SCRAM auth is not supported in this build"; the start check (the postgres user, trust) cannot
  see that, the first SCRAM window does.
- `pool_reserve_prepared_statement yes` (setting `prepared_statements: true`) needs `pool_discard no`, or
  Odyssey refuses to start; `pool_discard no` is written always, which is also what PgBouncer does in
  transaction mode (no reset query between clients).
- The seed's log filled 31 GB in days: sessions and queries are not logged here.
"""

from __future__ import annotations

from typing import ClassVar

from connlab.contract.names import SERVER_USER
from connlab.contract.poolers import odyssey as config
from connlab.lab.poolers import admin, features
from connlab.lab.poolers.base import SUPPORTED, PoolerProcess

CONSOLE_DB = config.CONSOLE_DB
# The first release we know has pool_reserve_prepared_statement (the seed's 1.4.0).
PREPARED_SINCE = (1, 4)


class Odyssey(PoolerProcess):
    name: ClassVar[str] = "odyssey"
    label: ClassVar[str] = config.CONFIG.label
    env_var: ClassVar[str] = "ODYSSEY_BIN"
    log_file: ClassVar[str] = config.LOG_FILE
    binary_name: ClassVar[str] = "odyssey"
    known_paths: ClassVar[tuple[str, ...]] = (
        "/usr/local/bin/odyssey",
        "/usr/bin/odyssey",
    )
    config_name: ClassVar[str] = config.CONF

    def config_files(self) -> dict[str, str]:
        return config.config_files(self.setup)

    def command(self, binary: str) -> list[str]:
        return [binary, str(self.setup.root / self.config_name)]

    # --- while it runs ----------------------------------------------------------------------------
    def counters(self) -> dict[str, float]:
        return admin.show_pools(f"host=127.0.0.1 port={self.port} user={SERVER_USER} dbname={CONSOLE_DB}")

    def support(self, feature: str) -> str:
        if feature == features.PREPARED_IN_TRANSACTION_MODE:
            return features.not_in_version(self.version(), PREPARED_SINCE)
        if feature in (features.SCRAM_CLIENT_AUTH, features.TRANSACTION_POOLING):
            return SUPPORTED
        if feature == features.SERVER_CONNECTION_RESET:
            return "not supported: Odyssey closes idle server connections only by pool_ttl"
        return features.unknown_feature(feature)
