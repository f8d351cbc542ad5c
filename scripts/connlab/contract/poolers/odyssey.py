"""Odyssey's configuration, pure: odyssey.conf (its own brace syntax) for a `PoolerSetup`.

One `database { user {} }` route per database and user in transaction pooling with `pool_size` server
connections, the server over TCP on 127.0.0.1, an admin console on the database "console" (SHOW POOLS,
the server's own user, trust) and the log in the pooler's folder.

SCRAM: clients are checked against `password`, the server's stored SCRAM verifier where there is one (so
the password itself is not needed for that); Odyssey logs in to the server with `storage_password`, the
run's password. `pool_reserve_prepared_statement yes` needs `pool_discard no` (written always), or Odyssey
refuses to start. Sessions and queries are not logged (the seed's log filled 31 GB in days).
"""

from __future__ import annotations

from connlab.contract.names import SERVER_USER
from connlab.contract.poolers.setup import (
    PREPARED_STATEMENTS_SETTING,
    PoolerConfig,
    PoolerSetup,
    PoolerUser,
    server_tcp_host,
)
from connlab.errors import LabError

CONF = "odyssey.conf"
LOG_FILE = "pooler.log"
PID_FILE = "odyssey.pid"
CONSOLE_DB = "console"


def _string(value: object) -> str:
    text = str(value)
    if '"' in text or "\n" in text:
        raise LabError(f"odyssey: a config value may not hold a quote or a newline: {text[:20]!r}")
    return f'"{text}"'


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    return _string(value)


def prepared_statements(setup: PoolerSetup) -> bool:
    return bool(setup.settings.get(PREPARED_STATEMENTS_SETTING, False))


def global_settings(setup: PoolerSetup) -> dict[str, object]:
    root = setup.root
    extra = {key: value for key, value in setup.settings.items() if key != PREPARED_STATEMENTS_SETTING}
    return {
        "daemonize": False,  # foreground: the process is ours to watch and to stop
        "pid_file": str(root / PID_FILE),
        "unix_socket_dir": str(root),
        "unix_socket_mode": "0644",
        "log_file": str(root / LOG_FILE),
        "log_format": "%p %t %l [%i %s] (%c) %m\\n",
        "log_to_stdout": False,
        "log_config": False,
        "log_session": False,
        "log_query": False,
        "log_stats": False,
        "log_debug": False,
        "workers": 1,
        "resolvers": 1,
        **extra,
    }


def route(setup: PoolerSetup, user: PoolerUser, database: str) -> list[str]:
    if user.verifier and not user.password:
        raise LabError(f"odyssey: user {user.name} needs this run's password to log in to the server")
    if user.password:
        # The verifier where there is one: clients are checked without the password itself.
        auth = ["authentication " + _string("scram-sha-256"),
                "password " + _string(user.verifier or user.password)]  # fmt: skip
        storage_password = ["storage_password " + _string(user.password)]
    else:
        auth, storage_password = ["authentication " + _string("none")], []
    options = {
        "storage": "server",
        "storage_db": database,
        "storage_user": user.name,
        "pool": setup.pool_mode,
        "pool_size": setup.pool_size,
        "pool_timeout": 0,
        "pool_ttl": 0,
        "pool_discard": False,
        "pool_reserve_prepared_statement": prepared_statements(setup),
    }
    lines = [*auth, *[f"{key} {_value(value)}" for key, value in options.items()], *storage_password]
    return [f"    user {_string(user.name)} {{", *[f"        {line}" for line in lines], "    }"]


def config_text(setup: PoolerSetup) -> str:
    lines = [f"{key} {_value(value)}" for key, value in global_settings(setup).items()]
    lines += ["", "listen {", '    host "127.0.0.1"', f"    port {setup.port}", "}", ""]
    server_host = _string(server_tcp_host(setup.server_host))
    lines += ['storage "server" {', '    type "remote"', f"    host {server_host}"]
    lines += [f"    port {setup.server_port}", "}", "", 'storage "local" {', '    type "local"', "}", ""]
    for database in setup.databases:
        lines.append(f"database {_string(database)} {{")
        for user in setup.users:
            lines += route(setup, user, database)
        lines += ["}", ""]
    # The admin console: SHOW POOLS for the counters, as the server's own user (trust, as on the server).
    console = ['authentication "none"', 'role "admin"', 'pool "session"', 'storage "local"']
    lines += [f"database {_string(CONSOLE_DB)} {{", f"    user {_string(SERVER_USER)} {{",
              *[f"        {line}" for line in console], "    }", "}"]  # fmt: skip
    return "\n".join(lines) + "\n"


def config_files(setup: PoolerSetup) -> dict[str, str]:
    return {CONF: config_text(setup)}


def snippet_start(root: str) -> str:
    """In the background (the config keeps it in the foreground, as the harness watches it)."""
    return f'odyssey "{root}/{CONF}" &'


CONFIG = PoolerConfig(
    label="Odyssey",
    binary="odyssey",
    config_files=config_files,
    snippet_start=snippet_start,
    pid_file=PID_FILE,
    admin_database=CONSOLE_DB,
)
