"""PgPool-II's configuration, pure: pgpool.conf, pool_hba.conf and an empty pcp.conf for a `PoolerSetup`.

`pool_size` becomes `num_init_children` with `max_pool = 1`: PgPool-II holds at most as many server
connections as the other poolers' pool (one backend per child, cached for the child's next client). A
client past `num_init_children` waits at the pooler (`reserved_connections = 0`): the seed's ceiling.

pool_passwd's path is absolute: pg_enc resolves a relative one against its own working folder. The file
itself is not written here: it holds each SCRAM user's password AES-encrypted by pg_enc with a key that
only the process environment (PGPOOLKEYFILE) names, so the harness (and the snippet's prepare lines) make
it before the start.

In the snippet the ports are shell variables: written bare (not quoted) so the heredoc expands them, and
pcp_port as shell arithmetic on the pooler's port.
"""

from __future__ import annotations

import re

from connlab.contract.poolers.setup import PREPARED_STATEMENTS_SETTING, PoolerConfig, PoolerSetup

CONF = "pgpool.conf"
HBA_FILE = "pool_hba.conf"
PCP_FILE = "pcp.conf"
KEY_FILE = ".pgpoolkey"
POOL_PASSWD = "pool_passwd"
PID_FILE = "pgpool.pid"
# "$PORT" or "$(($POOLER_PORT + 1))": a number in the snippet's shell, written bare so the heredoc expands it.
# Only port variables: "$DIR" is a folder, quoted like any text.
_SHELL_NUMBER = re.compile(r"\$[A-Z_0-9]*PORT[A-Z_0-9]*|\$\(\(\$[A-Z_0-9]*PORT[A-Z_0-9]* \+ 1\)\)")


def _quote(value: object) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int) or (isinstance(value, str) and _SHELL_NUMBER.fullmatch(value)):
        return str(value)  # a number, or a shell variable or arithmetic standing for one (the snippet)
    return "'" + str(value).replace("'", "''") + "'"


def _next_port(port: int | str) -> int | str:
    return port + 1 if isinstance(port, int) else f"$(({port} + 1))"


def settings(setup: PoolerSetup) -> dict[str, object]:
    root = setup.root
    return {
        "backend_clustering_mode": "raw",
        "listen_addresses": "127.0.0.1",
        "port": setup.port,
        "socket_dir": str(root),
        # PCP only on a unix socket in our folder; its port names the socket file, nothing listens.
        "pcp_listen_addresses": "",
        "pcp_port": _next_port(setup.port),
        "pcp_socket_dir": str(root),
        "backend_hostname0": setup.server_host,
        "backend_port0": setup.server_port,
        "backend_weight0": 1,
        "backend_flag0": "DISALLOW_TO_FAILOVER",
        # The pool: one child per client, each caching one backend -> pool_size server connections.
        "num_init_children": setup.pool_size,
        "max_pool": 1,
        "connection_cache": True,
        "child_life_time": 0,
        "child_max_connections": 0,
        "connection_life_time": 0,
        "client_idle_limit": 0,
        "reserved_connections": 0,  # past the children, clients wait (the seed's ceiling)
        "enable_pool_hba": True,
        "pool_passwd": str(root / POOL_PASSWD),
        "allow_clear_text_frontend_auth": False,
        "load_balance_mode": False,
        "health_check_period": 0,
        "sr_check_period": 0,
        "failover_on_backend_error": False,
        "use_watchdog": False,
        "memory_cache_enabled": False,
        "pid_file_name": str(root / PID_FILE),
        "logdir": str(root),
        "log_destination": "stderr",
        "logging_collector": False,
        "log_min_messages": "warning",
        **{key: value for key, value in setup.settings.items() if key != PREPARED_STATEMENTS_SETTING},
    }


def hba_lines(setup: PoolerSetup) -> list[str]:
    """pg_hba-style lines per role; without them, trust for trust users and SCRAM for the others."""
    if setup.hba_lines:
        return list(setup.hba_lines)
    lines = []
    for user in setup.users:
        method = "scram-sha-256" if user.verifier or user.password else "trust"
        lines += [f"local all {user.name} {method}", f"host all {user.name} 127.0.0.1/32 {method}"]
    return lines


def config_files(setup: PoolerSetup) -> dict[str, str]:
    conf = "".join(f"{key} = {_quote(value)}\n" for key, value in settings(setup).items())
    return {
        CONF: conf,
        HBA_FILE: "\n".join(hba_lines(setup)) + "\n",
        PCP_FILE: "",  # PCP is unused; pgpool still wants the file
    }


def snippet_prepare(root: str, setup: PoolerSetup) -> list[str]:
    """A fresh key file, and each SCRAM user's password AES-encrypted into pool_passwd by pg_enc."""
    key = f"{root}/{KEY_FILE}"
    lines = [f'od -An -N24 -tx1 /dev/urandom | tr -d \' \\n\' > "{key}"; chmod 600 "{key}"']
    lines += [
        f'pg_enc -m -f "{root}/{CONF}" -k "{key}" -u {user.name} "{user.password}" >/dev/null'
        for user in setup.users
        if user.password
    ]
    return lines


def snippet_start(root: str) -> str:
    """In the background (pgpool daemonizes without -n), the key named in its environment."""
    return (
        f'env PGPOOLKEYFILE="{root}/{KEY_FILE}" pgpool -f "{root}/{CONF}" -F "{root}/{PCP_FILE}" '
        f'-a "{root}/{HBA_FILE}"'
    )


CONFIG = PoolerConfig(
    kind="pgpool",
    label="PgPool-II",
    binary="pgpool",
    config_files=config_files,
    snippet_start=snippet_start,
    pid_file=PID_FILE,
    # SIGTERM is PgPool-II's smart shutdown, which waits for every client; SIGINT is its fast one.
    stop_signal="INT",
    snippet_prepare=snippet_prepare,
    remote=True,
    # four-poolers' line per machine that measured two of its versions (pgpool-versions).
    across_machine_facts=("pgpool_versions_summary",),
)
