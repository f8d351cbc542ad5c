"""pgcat: config writer, start and stop, run whenever its binary is found: named by PGCAT_BIN, on PATH, at a
usual install path, or installed into build/ by `make poolers` (from a tools folder's checked binary).

Contract: `PoolerProcess` (base.py). Where the binary is absent, `binary()` raises `PoolerUnavailable`
("pgcat: not available on this machine; ...") and the row says so: nothing is faked.

The config (pgcat.toml) is written by connlab.poolers.pgcat.config, the module the site's
check-it-yourself block prints too: one `[pools.<database>]` per database, one user entry per password user
with `pool_size` server connections, the throwaway cluster over TCP on 127.0.0.1, an admin console
(database "pgcat", its own user and a password generated per adapter) for `SHOW POOLS`.

What pgcat 1.2.0 does, checked against the running binary (the config keys against its source's config.rs:
it ignores a key it does not know, so a misspelt one would pass unseen):
- It logs in to the server with SCRAM from the plain password in the config (the run's generated one, in a
  mode-600 file removed with the cluster), but it checks its own clients with MD5 only ("TODO: Add SASL
  support" in its client.rs): `support("scram-sha-256 client authentication")` says so, and the seed's
  "scram-sha-256 on both sides" held for pgcat's server side only.
- MD5 needs a password for every user: a user without one (the server's trust user) is left out of the
  config. The start check therefore logs in to the admin console instead.
- At start it opens one server connection per pool to learn the server's parameters (`validate_config`,
  on by default) and keeps it idle in the pool: the server sees pgcat before the first client.
- SHOW POOLS has PgBouncer's columns (cl_waiting, maxwait, maxwait_us, ...): the pools probe reads it as
  it reads PgBouncer's. SHOW STATS is per server address (total_xact_count, avg_wait_time, ...), not read.
- It logs to the terminal only, in colour unless told not to; the shell sends that to pooler.log. At its
  default level (INFO) it logs each server connection opened and closed and each client that leaves
  session state behind (SET, PREPARE), not each query. It has no unix socket: a
  unix-transport window through it is refused in one line. It is one process (tokio threads).
- SIGINT starts a graceful shutdown that waits `shutdown_timeout` (60 s by default) for clients: 1 s here.
- `prepared_statements_cache_size` (setting `prepared_statements: true` -> 500, the seed's value) is a
  per-pool key; 0 (the default) leaves the cache off.
- The seed saw pgcat panic in `elapsed().unwrap()` when the clock stepped back: a window whose pooler
  exited is failed, and the next one starts it again.

Its allocator: upstream links jemalloc; a build without it (the tools folder's, built from Debian's crates)
uses glibc's malloc, whose memory figures do not compare with upstream's. Where Debian's libjemalloc2 is
installed, such a build runs with it preloaded (LD_PRELOAD on pgcat's own exec, so runuser and the shell
run as they are). Which allocator the runs used is machine.yaml's `pgcat_allocator` (`facts()`).
"""

from __future__ import annotations

import contextlib
import functools
import secrets
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import ClassVar

from connlab.contract.names import SERVER_USER
from connlab.contract.poolers import features
from connlab.errors import LabError
from connlab.lab.poolers import admin
from connlab.lab.poolers.base import SUPPORTED, PoolerProcess, PoolerSetup, logging_to
from connlab.paths import DEBIAN_JEMALLOC
from connlab.poolers.pgcat import config

ADMIN_DB = config.ADMIN_DB
ADMIN_USER = config.ADMIN_USER
# The per-pool prepared_statements_cache_size came with postgresml/pgcat#618 (October 2023); 1.2.0 has it
# (its config.rs and CONFIG.md), and no earlier release does.
PREPARED_SINCE = (1, 2)
# jemalloc's own messages start with this: a binary that holds it links jemalloc (upstream's builds).
JEMALLOC_MARK = b"<jemalloc>"
LINKED_JEMALLOC = "jemalloc (linked in)"
PRELOADED_JEMALLOC = f"jemalloc (Debian's libjemalloc2 preloaded: {DEBIAN_JEMALLOC})"
GLIBC_MALLOC = "glibc malloc (built without jemalloc; libjemalloc2 is not installed to preload)"


@functools.cache
def _links_jemalloc(binary: str, mtime_ns: int) -> bool:
    """Whether the binary carries jemalloc's messages (read once per binary and modification)."""
    return JEMALLOC_MARK in Path(binary).read_bytes()


def allocator(binary: str) -> tuple[str, Path | None]:
    """The malloc `binary` runs with here, as machine.yaml says it, and the library to preload, if any."""
    if _links_jemalloc(binary, Path(binary).stat().st_mtime_ns):
        return LINKED_JEMALLOC, None
    if DEBIAN_JEMALLOC.is_file():
        return PRELOADED_JEMALLOC, DEBIAN_JEMALLOC
    return GLIBC_MALLOC, None


class PgCat(PoolerProcess):
    declaration = config.CONFIG
    env_var: ClassVar[str] = "PGCAT_BIN"
    log_file: ClassVar[str] = config.LOG_FILE
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

    @classmethod
    def facts(cls) -> dict[str, str]:
        return {"allocator": allocator(cls.binary())[0]}

    def command(self, binary: str) -> list[str]:
        root = self.setup.root
        preload = allocator(binary)[1]
        # `env` execs pgcat in its place: only pgcat's process gets the allocator, and the tree is the same.
        # NO_COLOR: its log is a file, not a terminal (the variable, where an older pgcat lacks the flag).
        run = ["env", "NO_COLOR=true", *([f"LD_PRELOAD={preload}"] if preload else []), binary]
        return logging_to(root / self.log_file, [*run, str(root / self.config_name)])

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

    @contextlib.contextmanager
    def pool_watch(self, database: str) -> Iterator[Callable[[], tuple[int, float]] | None]:
        """SHOW POOLS on one admin connection for the whole window (PgBouncer's columns)."""
        with admin.watch_pools(self.admin_conninfo(), database) as read:
            yield read

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


# What the registry (connlab.lab.poolers.registry) runs for this folder's kind.
ADAPTER = PgCat
