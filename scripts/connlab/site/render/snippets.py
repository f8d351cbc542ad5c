"""'Check it yourself' blocks: plain initdb / pg_ctl / psql / pgbench commands generated from an
experiment's spec, with the flags the harness used, so a reader can re-measure without the harness.

The shell lives in template partials (site_src/partials/snippets/, and each probe's own in its folder,
connlab/probes/<name>/snippet.sh.j2); this module only works out, from the plan and the contract, what goes
into them: the harness's pgbench flags (window_options), its pooler files (connlab.contract.poolers), its
probes' queries and intervals (connlab.contract.probes). The test suite runs every block (with a tiny
duration and scale) so a block on the site cannot rot.

The server gets core 0 and pgbench core 1 through taskset, the portable stand-in for the harness's cgroups.
An experiment with several CPU budgets (core-budget) or a CPU quota for pgbench (client-bound) needs
cgroups: that block runs as root, the server as postgres, pgbench in a cgroup of its own.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import jinja2

from connlab.contract.experiment import Plan, Workload, window_options
from connlab.contract.names import BENCH_DB, CFS_PERIOD_US, SERVER_USER, pool_alias, session_options
from connlab.contract.poolers.from_plan import plan_setup
from connlab.contract.poolers.registry import CONFIGS
from connlab.contract.probes.declaration import Probe
from connlab.contract.probes.registry import PROBES, SNIPPETS
from connlab.contract.tls import (
    POOLER_CLIENT_TLS,
    SSLMODE_PLAIN,
    SSLMODE_TLS,
    openssl_arguments,
    server_settings,
)
from connlab.paths import JINJA_CACHE_DIR, PARTIALS_DIR

SNIPPET_PORT = 54329
# Each pooler of a block listens on the next port from here.
POOLER_PORT = 64329
# The first line of every block, after "# ".
BLOCK_ORIGIN = "the {profile} profile of experiments/{experiment}/experiment.yaml, one pass"
SNIPPETS_DIR = PARTIALS_DIR / "snippets"
# Where a TLS block's throwaway certificate lives.
TLS_DIR = "$DIR/tls"

_ENV = jinja2.Environment(
    # The shared partials by name; a probe's as <probe>/snippet.sh.j2, from its folder.
    loader=jinja2.ChoiceLoader(
        [
            jinja2.FileSystemLoader(SNIPPETS_DIR),
            jinja2.PrefixLoader(
                {name: jinja2.FileSystemLoader(path.parent) for name, path in SNIPPETS.items()}
            ),
        ]
    ),
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,  # an included partial ends its last line
)


def _templates() -> jinja2.Environment:
    """The scripts' templates, compiled once and kept between builds as the pages' are (compiling them
    again would be paid by every build)."""
    if _ENV.bytecode_cache is None:
        JINJA_CACHE_DIR.mkdir(parents=True, exist_ok=True)
        _ENV.bytecode_cache = jinja2.FileSystemBytecodeCache(str(JINJA_CACHE_DIR))
    return _ENV


def _shell_word(flag: str) -> str:
    """A path under $DIR is double-quoted so it expands; $c and $j stay bare; the rest is quoted."""
    if flag.startswith("$DIR"):
        return f'"{flag}"'
    if flag.startswith("$"):
        return flag
    return shlex.quote(flag)


def _poolers(plan: Plan) -> list[dict[str, object]]:
    """Each pooler's files as its harness adapter writes them, with shell variables for paths and ports."""
    poolers = []
    stops: list[str] = []  # every pooler started so far: each clean-up stops them all
    for number, spec in enumerate(plan.spec.poolers):
        variable = "POOLER_PORT" if number == 0 else f"POOLER_PORT_{number + 1}"
        root = f"$DIR/{spec.instance}"
        config = CONFIGS.get(spec.kind)
        if config is None:  # a kind with no folder in connlab/poolers/ (the harness refuses it too)
            poolers.append({"kind": spec.instance, "port_variable": variable, "port": POOLER_PORT + number,
                            "root": root, "files": None})  # fmt: skip
            continue
        setup = plan_setup(
            plan,
            spec.instance,
            root=Path(root),
            port=f"${variable}",
            server_host="$DIR",
            server_port="$PORT",
            secret=lambda role: "$PASSWORD" if role.needs_password else "",
            password=lambda role: "$PASSWORD" if role.needs_password else None,
        )
        if plan.spec.uses_tls and spec.kind in POOLER_CLIENT_TLS:
            setup.settings.update(POOLER_CLIENT_TLS[spec.kind](TLS_DIR))
        # stop_pooler (block.sh.j2) waits until the pooler has gone: its port is free when the script ends.
        # The pid file's name may be a pattern (two PgBouncer processes): left unquoted, the shell expands it.
        stops.append(f'stop_pooler {config.stop_signal} "{root}"/{config.pid_file}')
        poolers.append({
            "kind": spec.instance, "port_variable": variable, "port": POOLER_PORT + number, "root": root,
            "files": sorted(config.config_files(setup).items()), "start": config.snippet_start(root),
            "pid_file": config.pid_file, "stop_poolers": "; ".join(stops),
            "admin_database": config.admin_database,
            "prepare": config.snippet_prepare(root, setup) if config.snippet_prepare else [],
            "binary": config.binary, "ready": variable.replace("PORT", "READY"),
            # Started with & (it stays in the foreground): no exit status says it started.
            "background": " & " in f"{config.snippet_start(root)} ",
            # Until a workload's query goes through it (pgbench_block), that it listens.
            "ready_check": f'bash -c ": > /dev/tcp/127.0.0.1/${variable}"',
        })  # fmt: skip
    return poolers


def _connection(workload: Workload, default_transport: str, pooler: dict[str, object] | None) -> str:
    transport = workload.transport or default_transport
    if pooler is None and transport == "unix" and workload.role is None:
        return "$PG"
    port = f"${pooler['port_variable']}" if pooler else "$PORT"
    host = "-h 127.0.0.1" if transport == "tcp" else f'-h "{pooler["root"] if pooler else "$DIR"}"'
    return f"{host} -p {port} -U {workload.role or SERVER_USER}"


def _body(plan: Plan, workload: Workload, pooler: dict[str, object] | None) -> tuple[str, Probe | None]:
    """The partial that runs a window and its probe: the first of the experiment's probes that has one and
    applies (a pooler's probe only through a pooler whose admin console the block knows); else pgbench
    alone."""
    for name in plan.spec.probes:
        probe = PROBES[name]
        applies = not probe.needs_pooler or bool(
            pooler
            and pooler.get("files") is not None
            and (not probe.needs_admin_console or pooler.get("admin_database"))
        )
        if applies and name in SNIPPETS:
            return f"{name}/{SNIPPETS[name].name}", probe
    return "window.sh.j2", None


def pgbench_block(plan: Plan, client_jobs: int = 1, client_counts: list[int] | None = None) -> str:
    """A bash script to run as the postgres user, or as root where it needs cgroups (see above)."""
    spec = plan.spec
    counts = client_counts or plan.client_counts
    # Quotas as fractions of the server's one core in the block (taskset -c 0).
    quotas = [round(share * CFS_PERIOD_US) for share in spec.server.budget_shares]
    with_quota = quotas != [CFS_PERIOD_US] or any(w.client_cpu_share for w in spec.workloads)
    as_pg = "$AS_PG " if with_quota else ""
    # In a cgroup before exec: every process it forks inherits it.
    enter = 'sh -c "echo \\$\\$ > {cgroup}/cgroup.procs && exec \\"\\$@\\"" sh ' if with_quota else ""
    poolers = _poolers(plan)
    roles = {role.name: role for role in spec.roles}
    workloads = []
    # A plan over several versions holds each workload once per major; the block runs one server (the one
    # PG_BINDIR names), so it keeps one copy of each workload and says no version of its own.
    first_major = spec.server.versions[0] if spec.server.versions else None
    for workload in spec.workloads:
        if workload.postgres not in (None, first_major):
            continue
        options = window_options(plan, workload, clients=1, jobs=client_jobs, script_dir="$DIR")
        flags = [flag for flag in options.flags(shell_variables=True) if flag != "-l"]  # -l: percentiles only
        role = roles.get(workload.role or "")
        pooler = next((p for p in poolers if p["kind"] == workload.target), None)
        database = pool_alias(workload.pool_size) if isinstance(workload.pool_size, int) else BENCH_DB
        session = f"PGOPTIONS='{session_options(workload.settings)}' " if workload.settings else ""
        if workload.connect_timeout_s:
            session += f"PGCONNECT_TIMEOUT={workload.connect_timeout_s} "
        password = "PGPASSWORD=$PASSWORD " if role and role.needs_password else ""
        if spec.uses_tls:  # said either way, as the harness does
            password += f"PGSSLMODE={SSLMODE_TLS if workload.tls else SSLMODE_PLAIN} "
        connection = _connection(workload, spec.transport, pooler)
        if pooler and not pooler.get("checked_as"):
            # The block waits for a pooler to serve the first of its workloads' logins, as the harness does:
            # listening is not serving (PgPool-II forks its children first, slowly on a busy machine).
            pooler["checked_as"] = workload.id
            pooler["ready_check"] = (
                f"env {password}PGCONNECT_TIMEOUT=2 psql {connection} -XAtqc 'SELECT 1' {database}"
            )
        pgbench = (
            f"{password}{session}{enter.format(cgroup='$CGC')}taskset -c 1 pgbench {connection} "
            f"{' '.join(_shell_word(flag) for flag in flags)} {database}"
        )
        body, probe = _body(plan, workload, pooler)
        loop = _templates().get_template("loop.sh.j2").render(
            # A workload measured at some client counts only (churn at one count) keeps to them here.
            counts=[count for count in counts if workload.runs_at(count)] or workload.clients or counts,
            jobs=workload.jobs or client_jobs, database=BENCH_DB, body=body, pgbench=pgbench, probe=probe,
            duration_s=plan.profile.duration_s, pooler=pooler, target_database=database,
        )  # fmt: skip
        share = workload.client_cpu_share
        workloads.append({
            "id": workload.id, "loop": loop.rstrip("\n"),
            # Through a pooler the machine may lack: the loop runs only where the block could start it.
            "ready": pooler.get("ready") if pooler else None, "pooler": pooler["kind"] if pooler else None,
            "label": workload.label.removesuffix(f", PostgreSQL {workload.postgres}"),
            "script": workload.script.strip() if workload.script else None,
            "client_quota": round(share * CFS_PERIOD_US) if share else "max",
        })  # fmt: skip
    server = dict(spec.server.settings)
    if spec.uses_tls:
        server.update(server_settings(TLS_DIR))
    openssl = " ".join(_shell_word(word) for word in openssl_arguments(TLS_DIR)) if spec.uses_tls else ""
    stop = f'{as_pg}$BIN/pg_ctl -D "$DIR/data" -m fast stop >/dev/null 2>&1 || true; rm -rf "$DIR"'
    return _templates().get_template("block.sh.j2").render(
        # Names the spec the block comes from: a reader can compare, and the test suite finds the
        # experiment of each block on the built pages by this line.
        origin=BLOCK_ORIGIN.format(experiment=plan.experiment, profile=plan.profile_name),
        port=SNIPPET_PORT, with_quota=with_quota, period=CFS_PERIOD_US, stop=stop, as_pg=as_pg,
        hba=[line for role in spec.roles for line in role.hba_lines()],
        enter_server=enter.format(cgroup="$CG"),
        settings=session_options(server), database=BENCH_DB, scale=plan.scale, openssl=openssl,
        tls_dir=TLS_DIR,
        roles=spec.roles, poolers=poolers, workloads=workloads, quotas=quotas,
        # The harness alternates the budgets at every point; one pass of each, in turn, is enough here.
        quota_label=f", server quota $q of {CFS_PERIOD_US} us" if len(quotas) > 1 else "",
    ).rstrip("\n")  # fmt: skip
