"""Odyssey: config writer, start and stop, run whenever its binary is found: named by ODYSSEY_BIN, on
PATH, at a usual install path, or built into build/ by `make odyssey`.

Contract: `PoolerProcess` (base.py). Where the binary is absent, `binary()` raises `PoolerUnavailable`
("odyssey: not available on this machine; ...") and the row says so: nothing is faked.

The config (odyssey.conf, Odyssey's own brace syntax) is written by connlab.poolers.odyssey.config, the
module the site's check-it-yourself block prints too: one `database { user {} }` route per database and
user, transaction pooling with `pool_size` server connections per route, the server reached over TCP on
127.0.0.1, an admin console on the database "console" for `SHOW POOLS`, and the log in the adapter's folder.
It is written for the version the binary prints of itself (`odyssey --version`, read once at start): what
that version means by its defaults, with the 1.5.1 logging buffer bounded (see the config module).

SCRAM end to end:
- Client side: `authentication "scram-sha-256"` with `password` set to the server's stored SCRAM verifier
  (Odyssey's rules accept a plain password, an MD5 hash or a SCRAM secret there), so the password itself
  is not needed to check clients.
- Server side: Odyssey logs in with `storage_password`, the run's generated password in plain text; the
  file is mode 600 in the cluster's folder and removed with it.
- The seed's log filled 31 GB in days: sessions and queries are not logged here.

Odyssey has no console command that closes idle server connections (PgBouncer's RECONNECT), so its pool
stays open between windows (`pool_ttl 0`); the window tells its connections from other poolers' by their
client ports for the backends probe (connlab.lab.window.foreign_backends).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import ClassVar

from connlab.contract.names import SERVER_USER
from connlab.contract.poolers import features
from connlab.lab.poolers import admin
from connlab.lab.poolers.base import SUPPORTED, PoolerProcess, PoolerSetup, PoolerUnavailable
from connlab.poolers.odyssey import config

CONSOLE_DB = config.CONSOLE_DB
# The first release we know has pool_reserve_prepared_statement (the seed's 1.4.0).
PREPARED_SINCE = (1, 4)


def parsed_version(text: str) -> config.Version:
    """The version in `odyssey --version` text; PoolerUnavailable (a row that says why) where none."""
    version = features.parse_version(text)
    if version is None:
        raise PoolerUnavailable(f"odyssey: cannot tell its version from {text.strip()[:80]!r}")
    return version


class Odyssey(PoolerProcess):
    declaration = config.CONFIG
    env_var: ClassVar[str] = "ODYSSEY_BIN"
    log_file: ClassVar[str] = config.LOG_FILE
    config_name: ClassVar[str] = config.CONF

    def __init__(self, setup: PoolerSetup, version: config.Version | None = None) -> None:
        """`version`: the Odyssey the config is written for; None reads it from the binary at start (and
        writes for the newest known version until then)."""
        super().__init__(setup)
        self.odyssey_version = version

    def config_files(self) -> dict[str, str]:
        return config.config_files(self.setup, self.odyssey_version or config.NEWEST_KNOWN)

    def write_config(self) -> None:
        """The version the config is for, from the binary itself, read once before the first write."""
        if self.odyssey_version is None:
            self.odyssey_version = parsed_version(self.version())
        super().write_config()

    def command(self, binary: str) -> list[str]:
        return [binary, str(self.setup.root / self.config_name)]

    # --- while it runs ----------------------------------------------------------------------------
    def console_conninfo(self) -> str:
        return f"host=127.0.0.1 port={self.port} user={SERVER_USER} dbname={CONSOLE_DB}"

    def counters(self) -> dict[str, float]:
        return admin.show_pools(self.console_conninfo())

    @contextlib.contextmanager
    def pool_watch(self, database: str) -> Iterator[Callable[[], tuple[int, float]] | None]:
        """SHOW POOLS on one console connection for the whole window; its columns are PgBouncer's,
        maxwait and maxwait_us included."""
        with admin.watch_pools(self.console_conninfo(), database) as read:
            yield read

    def support(self, feature: str) -> str:
        if feature == features.PREPARED_IN_TRANSACTION_MODE:
            return features.not_in_version(self.version(), PREPARED_SINCE)
        if feature in (features.SCRAM_CLIENT_AUTH, features.TRANSACTION_POOLING):
            return SUPPORTED
        if feature == features.SERVER_CONNECTION_RESET:
            return "not supported: Odyssey closes idle server connections only by pool_ttl"
        return features.unknown_feature(feature)


# What the registry (connlab.lab.poolers.registry) runs for this folder's kind.
ADAPTER = Odyssey
