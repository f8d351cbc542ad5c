"""Odyssey's configuration, pure: odyssey.conf (its own brace syntax) for a `PoolerSetup` and the Odyssey
version it is written for.

One `database { user {} }` route per database and user in transaction pooling with `pool_size` server
connections, the server over TCP on 127.0.0.1, an admin console on the database "console" (SHOW POOLS,
the server's own user, trust) and the log in the pooler's folder.

SCRAM: clients are checked against `password`, the server's stored SCRAM verifier where there is one (so
the password itself is not needed for that); Odyssey logs in to the server with `storage_password`, the
run's password. Since 1.5 SCRAM is always built in. Sessions and queries are not logged (the seed's log
filled 31 GB in days).

What a version means by its defaults, written so that every run measures the same thing:
- The logging buffer. From 1.5.1 `log_async yes` (the default) preallocates `log_queue_depth` slots,
  30000 by default: a 31 MB resident mapping before the first client, which is not what "the pooler's
  memory" means and which 1.4 (the seed's) did not have. The buffer is bounded with
  `log_queue_depth LOG_QUEUE_DEPTH`, which keeps Odyssey's default asynchronous logging; both keys are
  unknown before 1.5.1, where an unknown key stops Odyssey at start, so they are written only from there.
- Prepared statements. The "default config" writes the version's own default of
  `pool_reserve_prepared_statement` (1.4: no, written; from 1.5.0 yes, left to the default); the "with
  support" variant (setting `prepared_statements: true`) switches it on explicitly. `pool_discard no` is
  written always: 1.4 refuses `pool_discard yes` beside prepared-statement support, and it is what
  PgBouncer does in transaction mode (no reset query between clients).

`config_files(setup)` (what the site's check-it-yourself block prints) writes for `NEWEST_KNOWN`, the
version this project measured; the harness passes the version the binary printed of itself.
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

Version = tuple[int, int, int]
# The version the snippet writes for: the one this project measured.
NEWEST_KNOWN: Version = (1, 5, 1)
# From this version `log_async` and `log_queue_depth` exist and the default buffer is 30000 slots.
LOG_BUFFER_SINCE: Version = (1, 5, 1)
LOG_QUEUE_DEPTH = 1000
# From this version pool_reserve_prepared_statement defaults to yes (1.4: no).
PREPARED_DEFAULT_ON_SINCE: Version = (1, 5, 0)


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


def log_buffer_settings(version: Version) -> dict[str, object]:
    """The bounded logging buffer where the version has one; nothing before (the keys are unknown there)."""
    return {"log_queue_depth": LOG_QUEUE_DEPTH} if version >= LOG_BUFFER_SINCE else {}


def log_buffer_note(version: Version) -> str:
    """What the config did with the logging buffer of this version, in words a page can print."""
    if version >= LOG_BUFFER_SINCE:
        return f"log_queue_depth {LOG_QUEUE_DEPTH} (the default 30000 preallocates about 31 MB)"
    return "no logging buffer in this version"


def prepared_statement_settings(setup: PoolerSetup, version: Version) -> dict[str, object]:
    """Support on where asked for; otherwise the version's own default: written where it is "no" (1.4),
    left out where it is "yes" (1.5.0 and later), so the "default config" is that version's default."""
    if prepared_statements(setup):
        return {"pool_reserve_prepared_statement": True}
    if version < PREPARED_DEFAULT_ON_SINCE:
        return {"pool_reserve_prepared_statement": False}
    return {}


def global_settings(setup: PoolerSetup, version: Version = NEWEST_KNOWN) -> dict[str, object]:
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
        **log_buffer_settings(version),
        "workers": 1,
        "resolvers": 1,
        **extra,
    }


def route(setup: PoolerSetup, user: PoolerUser, database: str, version: Version = NEWEST_KNOWN) -> list[str]:
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
        **prepared_statement_settings(setup, version),
    }
    lines = [*auth, *[f"{key} {_value(value)}" for key, value in options.items()], *storage_password]
    return [f"    user {_string(user.name)} {{", *[f"        {line}" for line in lines], "    }"]


def config_text(setup: PoolerSetup, version: Version = NEWEST_KNOWN) -> str:
    lines = [f"{key} {_value(value)}" for key, value in global_settings(setup, version).items()]
    lines += ["", "listen {", '    host "127.0.0.1"', f"    port {setup.port}", "}", ""]
    server_host = _string(server_tcp_host(setup.server_host))
    lines += ['storage "server" {', '    type "remote"', f"    host {server_host}"]
    lines += [f"    port {setup.server_port}", "}", "", 'storage "local" {', '    type "local"', "}", ""]
    for database in setup.databases:
        lines.append(f"database {_string(database)} {{")
        for user in setup.users:
            lines += route(setup, user, database, version)
        lines += ["}", ""]
    # The admin console: SHOW POOLS for the counters, as the server's own user (trust, as on the server).
    console = ['authentication "none"', 'role "admin"', 'pool "session"', 'storage "local"']
    lines += [f"database {_string(CONSOLE_DB)} {{", f"    user {_string(SERVER_USER)} {{",
              *[f"        {line}" for line in console], "    }", "}"]  # fmt: skip
    return "\n".join(lines) + "\n"


def config_files(setup: PoolerSetup, version: Version = NEWEST_KNOWN) -> dict[str, str]:
    return {CONF: config_text(setup, version)}


def snippet_start(root: str) -> str:
    """In the background (the config keeps it in the foreground, as the harness watches it)."""
    return f'odyssey "{root}/{CONF}" &'


CONFIG = PoolerConfig(
    kind="odyssey",
    label="Odyssey",
    binary="odyssey",
    config_files=config_files,
    snippet_start=snippet_start,
    pid_file=PID_FILE,
    admin_database=CONSOLE_DB,
    remote=True,
    # four-poolers' line per machine that ran Odyssey, from main.odyssey_config (facts.py).
    across_machine_facts=("odyssey_summary",),
)
