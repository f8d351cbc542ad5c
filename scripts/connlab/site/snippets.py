"""'Check it yourself' blocks: plain initdb / pg_ctl / psql / pgbench commands generated from an
experiment's spec, with the flags the harness used, so a reader can re-measure without the harness.

The test suite runs every block (with a tiny duration and scale) so a block on the site cannot rot.
"""

from __future__ import annotations

import shlex

from connlab.experiment import Plan, Workload, window_options
from connlab.lab.cluster import find_bindir

SNIPPET_PORT = 54329
POOLER_PORT = 64329


def _setting_flags(settings: dict[str, object]) -> str:
    return " ".join(f"-c {key}={value}" for key, value in settings.items())


def _connection(workload: Workload, default_transport: str) -> str:
    transport = workload.transport or default_transport
    port = "$POOLER_PORT" if workload.target == "pgbouncer" else "$PORT"
    if transport == "unix" and workload.role is None and port == "$PORT":
        return "$PG"
    host = '-h "$DIR"' if transport == "unix" else "-h 127.0.0.1"
    return f"{host} -p {port} -U {workload.role or 'postgres'}"


def _pgbouncer_lines(plan: Plan) -> list[str]:
    """PgBouncer as the harness runs it: transaction pooling, per-role auth through an hba file."""
    pooler = plan.spec.pooler
    assert pooler is not None
    users = [("postgres", "trust", "")] + [(r.name, r.auth, r.password or "") for r in plan.spec.roles]
    hba = "\\n".join(
        f"local all {name} {auth}\\nhost all {name} 127.0.0.1/32 {auth}" for name, auth, _ in users
    )
    userlist = "\\n".join(f'\\"{name}\\" \\"{password}\\"' for name, _, password in users)
    return [
        f"POOLER_PORT={POOLER_PORT}",
        f'printf "{userlist}\\n" > "$DIR/userlist.txt"',
        f'printf "{hba}\\n" > "$DIR/pgbouncer_hba.conf"',
        'cat > "$DIR/pgbouncer.ini" <<INI',
        "[databases]",
        "bench = host=$DIR port=$PORT dbname=bench",
        "[pgbouncer]",
        "listen_addr = 127.0.0.1",
        "listen_port = $POOLER_PORT",
        "unix_socket_dir = $DIR",
        "auth_type = hba",
        "auth_file = $DIR/userlist.txt",
        "auth_hba_file = $DIR/pgbouncer_hba.conf",
        f"pool_mode = {pooler.pool_mode}",
        f"default_pool_size = {pooler.pool_size}",
        "max_client_conn = 2000",
        "logfile = $DIR/pgbouncer.log",
        "pidfile = $DIR/pgbouncer.pid",
        "INI",
        'taskset -c 0 pgbouncer -d "$DIR/pgbouncer.ini"   # on the server\'s core, as the harness runs it',
        'trap \'kill $(cat "$DIR/pgbouncer.pid") 2>/dev/null || true; '
        '$BIN/pg_ctl -D "$DIR/data" -m fast stop >/dev/null 2>&1 || true; rm -rf "$DIR"\' EXIT',
    ]


def pgbench_block(plan: Plan, client_jobs: int = 1, client_counts: list[int] | None = None) -> str:
    """A bash script: throwaway cluster in a temporary folder, the experiment's roles and pg_hba lines,
    its pgbench windows (one pass), clean-up.

    Run it as the postgres user (PostgreSQL refuses root). The server gets core 0 and pgbench core 1
    through taskset, the portable stand-in for the harness's cgroups.
    """
    spec = plan.spec
    try:
        bindir = str(find_bindir())
    except Exception:  # a docs build on a machine without PostgreSQL still shows the block
        bindir = "/usr/lib/postgresql/15/bin"
    counts = client_counts or plan.client_counts
    settings = _setting_flags(dict(spec.server.settings))
    lines = [
        "set -euo pipefail",
        f"BIN={bindir}   # pg_config --bindir",
        "DIR=$(mktemp -d)   # everything lives here and is removed at the end",
        f"PORT={SNIPPET_PORT}",
        'trap \'$BIN/pg_ctl -D "$DIR/data" -m fast stop >/dev/null 2>&1 || true; rm -rf "$DIR"\' EXIT',
        '$BIN/initdb -D "$DIR/data" -U postgres --auth=trust -E UTF8 --locale=C --no-sync >/dev/null',
    ]
    hba = [line for role in spec.roles for line in role.hba_lines()]
    if hba:
        quoted = "\\n".join(hba)
        lines.append(
            f'printf \'{quoted}\\n\' | cat - "$DIR/data/pg_hba.conf" > "$DIR/hba" '
            '&& mv "$DIR/hba" "$DIR/data/pg_hba.conf"   # these lines first: pg_hba.conf matches top down'
        )
    lines += [
        'taskset -c 0 $BIN/pg_ctl -D "$DIR/data" -l "$DIR/server.log" -w start \\',
        f'  -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 {settings}" >/dev/null',
        'PG="-h $DIR -p $PORT -U postgres"',
        "psql $PG -qc 'CREATE DATABASE bench' postgres",
        f"pgbench $PG -i -s {plan.scale} -q bench",
    ]
    for role in spec.roles:
        password = f" PASSWORD '{role.password}'" if role.password else ""
        lines.append(
            f'psql $PG -qc "CREATE ROLE {role.name} LOGIN{password}" '
            f"-c 'GRANT ALL ON ALL TABLES IN SCHEMA public TO {role.name}' bench"
        )
    if spec.pooler is not None:
        lines += _pgbouncer_lines(plan)
    roles = {role.name: role for role in spec.roles}
    for workload in spec.workloads:
        flags = window_options(plan, workload, clients=1, jobs=client_jobs).flags(shell_variables=True)
        flags = [flag for flag in flags if flag != "-l"]  # the transaction log is only for percentiles
        text = " ".join(flag if flag.startswith("$") else shlex.quote(flag) for flag in flags)
        role = roles.get(workload.role or "")
        password = f"PGPASSWORD={role.password} " if role and role.password else ""
        connection = _connection(workload, spec.transport)
        # A workload measured at some client counts only (churn at one count) keeps to them here.
        workload_counts = [count for count in counts if workload.runs_at(count)] or workload.clients or counts
        lines += [
            f"echo '== {workload.label}'",
            f"for c in {' '.join(str(count) for count in workload_counts)}; do",
            f"  j=$(( c < {client_jobs} ? c : {client_jobs} ))",
            "  psql $PG -qc 'CHECKPOINT' bench",
            f"  printf '%4s clients: ' $c; {password}taskset -c 1 pgbench {connection} {text} bench \\",
            "    2>/dev/null \\",
            "    | grep -E '^(tps|latency average|average connection time)' | tr '\\n' ' '; echo",
            "done",
        ]
    return "\n".join(lines)
