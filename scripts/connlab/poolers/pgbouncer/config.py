"""PgBouncer's configuration, pure: pgbouncer.ini, the auth file and the hba file for a `PoolerSetup`.

auth_type is hba: one pg_hba-style line per role (trust or scram-sha-256, as on the server). The auth file
holds the server's SCRAM verifiers (in the harness) or the run's password (in the snippet), never a
password written in a spec or a result.
"""

from __future__ import annotations

from connlab.contract.names import SERVER_USER, pool_alias
from connlab.contract.poolers.setup import PREPARED_STATEMENTS_SETTING, PoolerConfig, PoolerSetup

INI = "pgbouncer.ini"
AUTH_FILE = "userlist.txt"
HBA_FILE = "pgbouncer_hba.conf"
LOG_FILE = "pgbouncer.log"
PID_FILE = "pgbouncer.pid"
ADMIN_DATABASE = "pgbouncer"
# max_prepared_statements (1.21+) when the setup asks for prepared-statement support: the seed's value.
PREPARED_CACHE_SIZE = 200


def prepared_cache_size(settings: dict[str, object]) -> int | None:
    """max_prepared_statements for the setup's `prepared_statements` setting: `true` is the seed's 200, a
    number is itself (0: no tracking, what every version before 1.21 does); None where the setting is absent
    or false, so the version keeps its own default (none before 1.21, 200 from 1.24)."""
    value = settings.get(PREPARED_STATEMENTS_SETTING)
    if value is None or value is False:
        return None
    if value is True:
        return PREPARED_CACHE_SIZE
    return int(str(value))


def config_files(setup: PoolerSetup, *, knows_prepared_setting: bool = True) -> dict[str, str]:
    """knows_prepared_setting: whether the version run has max_prepared_statements (1.21+); before it the
    key is left out, as an unknown key stops PgBouncer at start, and 0 is what such a version does anyway
    (a count above 0 is refused before the start, connlab.contract.poolers.features)."""
    root = setup.root
    server = f"host={setup.server_host} port={setup.server_port}"
    main = setup.databases[0]
    databases = [f"{name} = {server} dbname={name}" for name in setup.databases] + [
        f"{pool_alias(size)} = {server} dbname={main} pool_size={size}" for size in setup.pool_sizes
    ]
    settings: dict[str, object] = {
        "listen_addr": "127.0.0.1",
        "listen_port": setup.port,
        "unix_socket_dir": root,
        "auth_type": "hba" if setup.hba_lines else "trust",
        "auth_file": root / AUTH_FILE,
        **({"auth_hba_file": root / HBA_FILE} if setup.hba_lines else {}),
        "pool_mode": setup.pool_mode,
        "default_pool_size": setup.pool_size,
        "max_client_conn": setup.max_client_conn,
        "admin_users": SERVER_USER,
        "stats_users": SERVER_USER,
        "logfile": root / LOG_FILE,
        "pidfile": root / PID_FILE,
        "server_login_retry": 1,
        **{key: value for key, value in setup.settings.items() if key != PREPARED_STATEMENTS_SETTING},
    }
    cache_size = prepared_cache_size(setup.settings)
    if cache_size is not None and knows_prepared_setting:
        settings["max_prepared_statements"] = cache_size
    lines = "\n".join(f"{key} = {value}" for key, value in settings.items())
    files = {
        INI: "[databases]\n" + "\n".join(databases) + f"\n\n[pgbouncer]\n{lines}\n",
        AUTH_FILE: "".join(f'"{user.name}" "{user.verifier}"\n' for user in setup.users),
    }
    if setup.hba_lines:
        files[HBA_FILE] = "\n".join(setup.hba_lines) + "\n"
    return files


def snippet_start(root: str) -> str:
    return f'pgbouncer -d "{root}/{INI}"'


CONFIG = PoolerConfig(
    kind="pgbouncer",
    label="PgBouncer",
    binary="pgbouncer",
    config_files=config_files,
    snippet_start=snippet_start,
    pid_file=PID_FILE,
    admin_database=ADMIN_DATABASE,
    remote=True,
)
