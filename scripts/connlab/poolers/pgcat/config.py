"""pgcat's configuration, pure: pgcat.toml for a `PoolerSetup`.

One `[pools.<database>]` per database in the setup's pool mode, one user entry per user with `pool_size`
server connections, one shard whose single server is the throwaway cluster over TCP on 127.0.0.1, an admin
console (database "pgcat", its own user and password) for SHOW POOLS, no Prometheus exporter, no query
parser. `prepared_statements_cache_size` (setting `prepared_statements: true` -> 500, the seed's value) is
per pool; 0 leaves the cache off.

pgcat checks its own clients with MD5 (SCRAM only towards the server) from the plain password in the
config: a user without a password (the server's trust user) cannot log in through it and is left out; a
setup with no password user at all is refused. The admin password comes in `settings["admin_password"]`
(the adapter generates one per run; the snippet a shell variable).
"""

from __future__ import annotations

import json
import re

from connlab.contract.poolers.setup import (
    PREPARED_STATEMENTS_SETTING,
    PoolerConfig,
    PoolerSetup,
    server_tcp_host,
)
from connlab.errors import LabError

CONF = "pgcat.toml"
LOG_FILE = "pooler.log"
PID_FILE = "pgcat.pid"  # written by the snippet's start line; pgcat writes none of its own
ADMIN_DB = "pgcat"
ADMIN_USER = "connlab_admin"
ADMIN_PASSWORD_SETTING = "admin_password"
PREPARED_CACHE_SIZE = 500
_SHELL_NUMBER = re.compile(r"\$[A-Z_0-9]*PORT[A-Z_0-9]*")  # a port variable, not "$DIR"


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    if isinstance(value, str) and _SHELL_NUMBER.fullmatch(value):
        return value  # the snippet's port variable: bare, so the heredoc makes it a TOML integer
    return json.dumps(str(value))  # a JSON string is a valid TOML basic string


def _table(name: str, values: dict[str, object]) -> list[str]:
    return [f"[{name}]", *[f"{key} = {_toml(value)}" for key, value in values.items()], ""]


def general(setup: PoolerSetup) -> dict[str, object]:
    own = (PREPARED_STATEMENTS_SETTING, ADMIN_PASSWORD_SETTING)
    extra = {key: value for key, value in setup.settings.items() if key not in own}
    return {
        "host": "127.0.0.1",
        "port": setup.port,
        "admin_username": ADMIN_USER,
        "admin_password": str(setup.settings.get(ADMIN_PASSWORD_SETTING, "")),
        "enable_prometheus_exporter": False,
        "worker_threads": 1,
        "connect_timeout": 5000,
        "server_lifetime": 86_400_000,
        "shutdown_timeout": 1000,
        "log_client_connections": False,
        "log_client_disconnections": False,
        **extra,
    }


def pool_tables(setup: PoolerSetup, database: str) -> list[str]:
    cache = PREPARED_CACHE_SIZE if setup.settings.get(PREPARED_STATEMENTS_SETTING) else 0
    pool = {
        "pool_mode": setup.pool_mode,
        "default_role": "primary",
        "query_parser_enabled": False,
        "prepared_statements_cache_size": cache,
    }
    lines = _table(f"pools.{json.dumps(database)}", pool)
    users = [user for user in setup.users if user.password]
    if not users:
        raise LabError("pgcat: no user has a password; pgcat checks every client with MD5")
    for index, user in enumerate(users):
        values = {"username": user.name, "password": user.password, "pool_size": setup.pool_size,
                  "min_pool_size": 0, "statement_timeout": 0}  # fmt: skip
        lines += _table(f"pools.{json.dumps(database)}.users.{index}", values)
    server = [server_tcp_host(setup.server_host), setup.server_port, "primary"]
    lines += _table(f"pools.{json.dumps(database)}.shards.0", {"servers": [server], "database": database})
    return lines


def config_text(setup: PoolerSetup) -> str:
    lines = _table("general", general(setup))
    for database in setup.databases:
        lines += pool_tables(setup, database)
    return "\n".join(lines)


def config_files(setup: PoolerSetup) -> dict[str, str]:
    return {CONF: config_text(setup)}


def snippet_start(root: str) -> str:
    """In the background, its terminal log to a file, and its process id where the clean-up finds it."""
    return f'pgcat "{root}/{CONF}" > "{root}/{LOG_FILE}" 2>&1 & echo $! > "{root}/{PID_FILE}"'


CONFIG = PoolerConfig(
    kind="pgcat",
    label="pgcat",
    binary="pgcat",
    config_files=config_files,
    snippet_start=snippet_start,
    pid_file=PID_FILE,
    # Its console needs its own user and password: the snippets' SHOW POOLS probe (as postgres) cannot.
    admin_database=None,
    # The malloc it ran with (machine.yaml's pgcat_allocator): builds without jemalloc exist, and memory
    # figures depend on it.
    facts=("allocator",),
)
