"""'Check it yourself' blocks: plain initdb / pg_ctl / psql / pgbench commands generated from an
experiment's spec, with the flags the harness used, so a reader can re-measure without the harness.

The test suite runs every block (with a tiny duration and scale) so a block on the site cannot rot.
"""

from __future__ import annotations

import shlex

from connlab.contract.experiment import Plan, Workload, window_options
from connlab.contract.names import CFS_PERIOD_US, pool_alias, session_options
from connlab.lab.cluster import find_bindir
from connlab.lab.poolers.pgbouncer import PoolSampler
from connlab.lab.probes import WaitEventSampler

SNIPPET_PORT = 54329
# The first line of every block, after "# ".
BLOCK_ORIGIN = "the {profile} profile of experiments/{experiment}/experiment.yaml, one pass"
POOLER_PORT = 64329


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
    users = [("postgres", "trust", "")] + [
        (r.name, r.auth, "$PASSWORD" if r.needs_password else "") for r in plan.spec.roles
    ]
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
        *[
            f"{pool_alias(size)} = host=$DIR port=$PORT dbname=bench pool_size={size}"
            for size in sorted({w.pool_size for w in plan.spec.workloads if isinstance(w.pool_size, int)})
        ],
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
        "admin_users = postgres",
        "logfile = $DIR/pgbouncer.log",
        "pidfile = $DIR/pgbouncer.pid",
        "INI",
        'taskset -c 0 pgbouncer -d "$DIR/pgbouncer.ini"   # on the server\'s core, as the harness runs it',
        'trap \'kill $(cat "$DIR/pgbouncer.pid") 2>/dev/null || true; '
        '$BIN/pg_ctl -D "$DIR/data" -m fast stop >/dev/null 2>&1 || true; rm -rf "$DIR"\' EXIT',
    ]


# A CPU quota needs a cgroup: v2 where the cpu controller is enabled at the root, else v1's cpu hierarchy.
QUOTA_LINES = [
    '[ "$(id -u)" = 0 ] || { echo "run this block as root: a CPU quota needs a cgroup" >&2; exit 1; }',
    "if grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then",
    "  CG=/sys/fs/cgroup/connlab-check; CGC=$CG-client; mkdir -p $CG $CGC",
    f'  quota() {{ echo "$1 {CFS_PERIOD_US}" > $CG/cpu.max; }}',
    f'  client_quota() {{ echo "$1 {CFS_PERIOD_US}" > $CGC/cpu.max; }}',
    "else",
    "  CG=/sys/fs/cgroup/cpu/connlab-check; CGC=$CG-client; mkdir -p $CG $CGC",
    f"  echo {CFS_PERIOD_US} > $CG/cpu.cfs_period_us; echo {CFS_PERIOD_US} > $CGC/cpu.cfs_period_us",
    '  quota() { echo "$1" > $CG/cpu.cfs_quota_us; }',
    '  client_quota() { [ "$1" = max ] && set -- -1; echo "$1" > $CGC/cpu.cfs_quota_us; }',
    "fi",
    'chown postgres "$DIR"',
    "AS_PG='runuser -u postgres --'   # PostgreSQL refuses to run as root",
]


def pgbench_block(plan: Plan, client_jobs: int = 1, client_counts: list[int] | None = None) -> str:
    """A bash script: throwaway cluster in a temporary folder, the experiment's roles and pg_hba lines,
    its pgbench windows (one pass), clean-up.

    Run it as the postgres user (PostgreSQL refuses root). The server gets core 0 and pgbench core 1
    through taskset, the portable stand-in for the harness's cgroups. An experiment with several CPU
    budgets (core-budget) or a CPU quota for pgbench (client-bound) needs cgroups: that block runs as root,
    the server as postgres, pgbench in a cgroup of its own.
    """
    spec = plan.spec
    try:
        bindir = str(find_bindir())
    except Exception:  # a docs build on a machine without PostgreSQL still shows the block
        bindir = "/usr/lib/postgresql/15/bin"
    counts = client_counts or plan.client_counts
    settings = session_options(dict(spec.server.settings))
    # Quotas as fractions of the server's one core in the block (taskset -c 0).
    quotas = [round(share * CFS_PERIOD_US) for share in spec.server.budget_shares]
    with_quota = quotas != [CFS_PERIOD_US] or any(w.client_cpu_share for w in spec.workloads)
    lines = [
        # Names the spec the block comes from: a reader can compare, and the test suite finds the
        # experiment of each block on the built pages by this line.
        f"# {BLOCK_ORIGIN.format(experiment=plan.experiment, profile=plan.profile_name)}",
        "set -euo pipefail",
        f"BIN={bindir}   # pg_config --bindir",
        "DIR=$(mktemp -d)   # everything lives here and is removed at the end",
        f"PORT={SNIPPET_PORT}",
    ]
    as_pg = "$AS_PG " if with_quota else ""
    stop = f'{as_pg}$BIN/pg_ctl -D "$DIR/data" -m fast stop >/dev/null 2>&1 || true; rm -rf "$DIR"'
    if with_quota:
        lines += [*QUOTA_LINES, f"trap '{stop}; rmdir $CG $CGC' EXIT"]
    else:
        lines += [f"trap '{stop}' EXIT"]
    lines += [
        f'{as_pg}$BIN/initdb -D "$DIR/data" -U postgres --auth=trust -E UTF8 --locale=C --no-sync >/dev/null',
    ]
    hba = [line for role in spec.roles for line in role.hba_lines()]
    if hba:
        quoted = "\\n".join(hba)
        lines.append(
            f'printf \'{quoted}\\n\' | cat - "$DIR/data/pg_hba.conf" > "$DIR/hba" '
            '&& mv "$DIR/hba" "$DIR/data/pg_hba.conf"   # these lines first: pg_hba.conf matches top down'
        )
    # In the quota's cgroup before exec: every backend the postmaster forks inherits it.
    enter = 'sh -c "echo \\$\\$ > $CG/cgroup.procs && exec \\"\\$@\\"" sh ' if with_quota else ""
    lines += [
        f'{enter}taskset -c 0 {as_pg}$BIN/pg_ctl -D "$DIR/data" -l "$DIR/server.log" -w start \\',
        f'  -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 {settings}" >/dev/null',
        'PG="-h $DIR -p $PORT -U postgres"',
        "psql $PG -qc 'CREATE DATABASE bench' postgres",
        f"pgbench $PG -i -s {plan.scale} -q bench",
    ]
    if any(role.needs_password for role in spec.roles):
        lines.append("PASSWORD=$(od -An -N18 -tx1 /dev/urandom | tr -d ' \\n')   # a new one for each run")
    for role in spec.roles:
        password = " PASSWORD '$PASSWORD'" if role.needs_password else ""
        lines.append(
            f'psql $PG -qc "CREATE ROLE {role.name} LOGIN{password}" '
            f"-c 'GRANT ALL ON ALL TABLES IN SCHEMA public TO {role.name}' bench"
        )
    if spec.pooler is not None:
        lines += _pgbouncer_lines(plan)
    roles = {role.name: role for role in spec.roles}
    for workload in spec.workloads:
        options = window_options(plan, workload, clients=1, jobs=client_jobs, script_dir="$DIR")
        flags = [flag for flag in options.flags(shell_variables=True) if flag != "-l"]  # -l: percentiles only
        text = " ".join(_shell_word(flag) for flag in flags)
        if workload.script:
            lines += [
                f"cat > \"$DIR/{workload.id}.sql\" <<'SQL'",
                *workload.script.strip().splitlines(),
                "SQL",
            ]
        role = roles.get(workload.role or "")
        password = "PGPASSWORD=$PASSWORD " if role and role.needs_password else ""
        connection = _connection(workload, spec.transport)
        jobs = workload.jobs or client_jobs
        # A workload measured at some client counts only (churn at one count) keeps to them here.
        workload_counts = [count for count in counts if workload.runs_at(count)] or workload.clients or counts
        session = f"PGOPTIONS='{session_options(workload.settings)}' " if workload.settings else ""
        database = pool_alias(workload.pool_size) if isinstance(workload.pool_size, int) else "bench"
        # With cgroups, pgbench runs in its own (its CPU quota, if the workload sets one).
        enter_client = 'sh -c "echo \\$\\$ > $CGC/cgroup.procs && exec \\"\\$@\\"" sh ' if with_quota else ""
        pgbench = f"{password}{session}{enter_client}taskset -c 1 pgbench {connection} {text} {database}"
        if spec.sample_pools and workload.target == "pgbouncer":
            body = _pools_body(pgbench, plan.profile.duration_s, database)
        elif spec.measure_memory:
            body = _memory_body(pgbench, plan.profile.duration_s)
        elif spec.sample_wait_events:
            body = _wait_events_body(pgbench, plan.profile.duration_s)
        else:
            body = [
                f"  printf '%4s clients: ' $c; {pgbench} \\",
                "    2>/dev/null \\",
                "    | grep -E '^(tps|latency average|average connection time)' | tr '\\n' ' '; echo",
            ]
        loop = [
            f"for c in {' '.join(str(count) for count in workload_counts)}; do",
            f"  j=$(( c < {jobs} ? c : {jobs} ))",
            "  psql $PG -qc 'CHECKPOINT' bench",
            *body,
            "done",
        ]
        if not with_quota:
            lines += [f"echo '== {workload.label}'", *loop]
            continue
        # The harness alternates the budgets at every point; one pass of each, in turn, is enough here.
        share = workload.client_cpu_share
        quota_label = f", server quota $q of {CFS_PERIOD_US} us" if len(quotas) > 1 else ""
        lines += [
            f"client_quota {round(share * CFS_PERIOD_US) if share else 'max'}   # pgbench's CPU quota",
            f"for q in {' '.join(map(str, quotas))}; do",
            "  quota $q",
            f'  echo "== {workload.label}{quota_label}"',
            *[f"  {line}" for line in loop],
            "done",
        ]
    return "\n".join(lines)


def _shell_word(flag: str) -> str:
    """A path under $DIR is double-quoted so it expands; $c and $j stay bare; the rest is quoted."""
    if flag.startswith("$DIR"):
        return f'"{flag}"'
    if flag.startswith("$"):
        return flag
    return shlex.quote(flag)


# What the wait-events experiment polls, from one connection (psql's \watch in the block).
WAIT_SQL = (
    "SELECT coalesce(wait_event_type || ':' || wait_event, 'running') FROM pg_stat_activity "
    "WHERE backend_type = 'client backend' AND state = 'active' AND datname = 'bench' "
    "AND pid <> pg_backend_pid()"
)


def _wait_events_body(pgbench: str, duration_s: int) -> list[str]:
    """pgbench in the background while psql samples pg_stat_activity every 100 ms; the five most
    frequent states, with their share of the samples."""
    return [
        f'  {pgbench} > "$DIR/pgbench.out" 2>&1 &',
        f"  printf '%s\\n\\\\watch {WaitEventSampler.INTERVAL_S:g}\\n' \"{WAIT_SQL}\" \\",
        f'    | timeout {duration_s} psql $PG -XAtq postgres > "$DIR/samples" 2>/dev/null || true',
        "  wait",
        "  printf '%4s clients: %s; ' $c \"$(grep -E '^tps' \"$DIR/pgbench.out\")\"",
        '  { grep -v "^$" "$DIR/samples" || true; } | sort | uniq -c | sort -rn \\',
        '    | awk \'{n[NR]=$1; s[NR]=$2; t+=$1} END {printf "%d samples:", t;'
        ' for (i=1; i<=NR && i<=5; i++) printf " %s %.0f%%", s[i], 100*n[i]/t; print ""}\'',
    ]


def _memory_body(pgbench: str, duration_s: int) -> list[str]:
    """pgbench holds $c idle connections; once all are idle, their RSS, PSS and RssAnon are summed."""
    count = (
        "psql $PG -XAtqc \"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
        "AND datname = 'bench' AND state = 'idle'\" postgres"
    )
    return [
        f"  {pgbench} >/dev/null 2>&1 &",
        f'  for i in $(seq {duration_s * 10}); do [ "$({count})" = "$c" ] && break; sleep 0.1; done',
        "  sleep 1   # let the fresh backends settle",
        "  pids=$(psql $PG -XAtqc \"SELECT pid FROM pg_stat_activity WHERE datname = 'bench'\" postgres)",
        "  for p in $pids; do",
        "    cat /proc/$p/smaps_rollup; grep RssAnon /proc/$p/status",
        "  done | awk -v c=$c '/^Rss:/ {r += $2} /^Pss:/ {p += $2} /^RssAnon:/ {a += $2}",
        '    END {printf "%4d idle connections, summed: RSS %d MiB, PSS %d MiB, RssAnon %d MiB\\n", c,',
        "      r / 1024, p / 1024, a / 1024}'",
        "  wait",
    ]


def _pools_body(pgbench: str, duration_s: int, database: str) -> list[str]:
    """pgbench through PgBouncer in the background while psql polls SHOW POOLS every 250 ms on the admin
    console; the mean and the most clients waiting for a server connection in the window's pool."""
    admin = "psql -h 127.0.0.1 -p $POOLER_PORT -U postgres -XAtq -F ' '"
    return [
        f'  {pgbench} > "$DIR/pgbench.out" 2>&1 &',
        f"  printf 'SHOW POOLS;\\n\\\\watch {PoolSampler.INTERVAL_S:g}\\n' \\",
        f"    | timeout {duration_s} {admin} pgbouncer \\",
        '    > "$DIR/pools" 2>/dev/null || true',
        "  wait",
        "  printf '%4s clients: %s; ' $c \"$(grep -E '^tps' \"$DIR/pgbench.out\")\"",
        f'  awk \'$1 == "{database}" {{n++; w += $4; if ($4 > m) m = $4}}'
        ' END {printf "clients waiting: mean %.2f, most %d\\n", n ? w / n : 0, m}\' "$DIR/pools"',
    ]
