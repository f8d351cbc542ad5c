"""The sweep: run an experiment's windows in pass order on a throwaway cluster, one CSV row per window.

A rerun of the same experiment and profile resumes an interrupted run: windows already in the CSV are
skipped. Ctrl-C or SIGTERM at any moment stops pgbench and the server, and writes no partial row.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import psycopg.sql
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from connlab.data.machine_schema import SAFE_ID_PATTERN
from connlab.errors import LabError
from connlab.experiment import Plan, Role, Window, Workload, window_options
from connlab.lab import machine, memory, probes
from connlab.lab.cluster import SERVER_USER, Cluster, find_bindir, find_program
from connlab.lab.cpu_budget import CpuBudget, create_budget
from connlab.lab.interrupts import group_guard, run_in_group
from connlab.lab.pgbench import (
    PgbenchOptions,
    PgbenchReport,
    build_command,
    latency_percentiles_ms,
    parse_report,
)
from connlab.lab.poolers.pgbouncer import PgBouncer, PoolSampler, pool_alias
from connlab.lab.results_file import ResultsFile, find_resumable, new_run_path
from connlab.lab.versions import open_benches
from connlab.paths import LAB_DIR, experiment_results_dir

BENCH_DB = "bench"
# pgbench gets its window twice over plus this before it is killed: a window can never hang the sweep
# (a frozen server, a pooler that never answers), yet a slow start at hundreds of clients still fits.
PGBENCH_GRACE_S = 20
# Building the benchmark tables: minutes at the full profile's scale on a slow disk, never an hour.
PGBENCH_INIT_TIMEOUT_S = 1800


def pgbench_deadline_s(duration_s: int) -> int:
    """How long a window's pgbench may run before it is killed and the window recorded as failed."""
    return 2 * duration_s + PGBENCH_GRACE_S


# Well under the default ephemeral port range (32768-60999) that TIME_WAIT sockets draw on.
TIME_WAIT_LIMIT = 5000


@dataclass
class Bench:
    """A cluster prepared for pgbench: initialised, with its budget and the client's pinning."""

    cluster: Cluster
    budget: CpuBudget
    pgbench: str
    transport: str
    roles: dict[str, Role] = field(default_factory=dict)
    pooler: PgBouncer | None = None
    # This run's generated passwords of the SCRAM roles; they live in memory only.
    passwords: dict[str, str] = field(default_factory=dict)

    def transport_of(self, workload: Workload) -> str:
        return workload.transport or self.transport

    @property
    def client_cores(self) -> int:
        return len(self.budget.plan.client_cores)

    def health_problem(self) -> str | None:
        """Why the next window cannot be measured (server or pooler gone or frozen), or None."""
        problem = self.cluster.health_problem()
        if problem is None and self.pooler is not None and not self.pooler.running():
            problem = f"PgBouncer exited (its log: {self.pooler.log_tail()})"
        return problem

    def run_pgbench(
        self, options: PgbenchOptions, log_dir: Path | None, workload: Workload | None = None
    ) -> tuple[PgbenchReport, float]:
        """Run one pgbench as the workload's role over its transport; return its report and CPU time."""
        prefix = log_dir / "tx" if log_dir else None
        role = self.roles.get(workload.role) if workload and workload.role else None
        transport = self.transport_of(workload) if workload else self.transport
        user = role.name if role else SERVER_USER
        if workload is not None and workload.target == "pgbouncer" and self.pooler is not None:
            connection = self.pooler.client_args(transport, user)
        else:
            connection = self.cluster.client_args(transport, user)
        command = build_command(self.pgbench, options, connection, database_of(workload), prefix)
        environment = dict(os.environ)
        if role and role.name in self.passwords:
            environment["PGPASSWORD"] = self.passwords[role.name]
        if workload is not None and workload.settings:
            environment["PGOPTIONS"] = session_options(workload.settings)
        usage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        deadline_s = pgbench_deadline_s(options.duration_s)
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=self.budget.enter_client,
            start_new_session=True,
            env=environment,
        )
        with group_guard(process):
            try:
                output, _ = process.communicate(timeout=deadline_s)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                output, _ = process.communicate()
                output += (
                    f"\npgbench: error: hung; killed {deadline_s} s after it started "
                    f"(a {options.duration_s} s window)"
                )
        usage_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = probes.client_cpu_seconds(usage_after) - probes.client_cpu_seconds(usage_before)
        return parse_report(output, process.returncode), cpu


def clients_connected(report: PgbenchReport, clients: int) -> int | None:
    """All the window's clients once pgbench got to run; how many the server took before it refused one;
    None when pgbench failed before its run for another reason."""
    if report.refused_client is not None:
        return report.refused_client
    return clients if report.tps is not None else None


def database_of(workload: Workload | None) -> str:
    """The database pgbench connects to: the benchmark's, or its PgBouncer alias with a pool size."""
    return pool_alias(workload.pool_size) if workload is not None and workload.pool_size else BENCH_DB


def client_cpu_budget(bench: Bench, workload: Workload) -> float | None:
    """pgbench's CPU quota in cores for this workload, or None for its whole pinned cores."""
    if workload.client_cpu_share is None:
        return None
    return round(workload.client_cpu_share * bench.client_cores, 3)


def session_options(settings: dict[str, object]) -> str:
    """PGOPTIONS for session settings, e.g. '-c synchronous_commit=off'."""
    return " ".join(f"-c {key}={value}" for key, value in settings.items())


def prepare_database(cluster: Cluster, scale: int, prewarm: list[str]) -> None:
    cluster.execute(f"CREATE DATABASE {BENCH_DB}")
    command = [find_program("pgbench", cluster.bindir), *cluster.client_args(), "-i", "-s", str(scale), "-q",
               BENCH_DB]  # fmt: skip
    try:
        result = run_in_group(command, timeout_s=PGBENCH_INIT_TIMEOUT_S)
    except subprocess.TimeoutExpired as error:
        raise LabError(f"pgbench -i did not finish within {PGBENCH_INIT_TIMEOUT_S} s") from error
    if result.returncode != 0:
        raise LabError(f"pgbench -i failed: {result.stderr.strip().splitlines()[-1]}")
    cluster.execute("VACUUM ANALYZE", dbname=BENCH_DB)
    if prewarm:
        cluster.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm", dbname=BENCH_DB)


def settle(cluster: Cluster, prewarm: list[str]) -> None:
    """Before each window: pull the tables into shared buffers and flush dirty pages, so every window
    starts from the same state and no checkpoint from the previous window lands inside this one."""
    for relation in prewarm:
        cluster.execute("SELECT pg_prewarm(%s)", (relation,), dbname=BENCH_DB)
    cluster.execute("CHECKPOINT", dbname=BENCH_DB)


def measure_window(bench: Bench, plan: Plan, window: Window, window_no: int) -> dict[str, object]:
    """One window with its probes; returns the CSV row. Raises LabError when the server or the pooler
    died or froze during the window: that window is not recorded and a rerun measures it again."""
    # After a crashed backend the server restarts and refuses connections for a moment.
    bench.cluster.wait_ready(timeout_s=60)
    log_dir = Path(tempfile.mkdtemp(prefix="txlog-", dir=bench.cluster.root))
    options = window_options(
        plan, window.workload, window.clients, jobs=bench.client_cores, script_dir=str(log_dir)
    )
    if window.workload.script:
        (log_dir / f"{window.workload.id}.sql").write_text(window.workload.script)
    bench.budget.set_cores(window.budget)
    client_quota = client_cpu_budget(bench, window.workload)
    bench.budget.set_client_cores(client_quota)
    if bench.pooler is not None:
        bench.pooler.close_server_connections()
        wait_for_no_backends(bench.cluster)
    settle(bench.cluster, plan.spec.database.prewarm)
    if options.connect_per_transaction and bench.transport_of(window.workload) == "tcp":
        wait_for_ephemeral_ports()
    started_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    conninfo = bench.cluster.conninfo()
    sampler = probes.BackendSampler(conninfo, BENCH_DB) if plan.spec.sample_backends else None
    waits = probes.WaitEventSampler(conninfo, BENCH_DB) if plan.spec.sample_wait_events else None
    memory_probe = (
        memory.IdleMemoryProbe(conninfo, BENCH_DB, window.clients, bench.budget, options.duration_s)
        if plan.spec.measure_memory
        else None
    )
    pools = (
        PoolSampler(bench.pooler, database_of(window.workload))
        if plan.spec.sample_pools and bench.pooler is not None and window.workload.target == "pgbouncer"
        else None
    )
    try:
        pooler_before = bench.pooler.cpu_seconds() if bench.pooler else None
        before = probes.take_snapshot(bench.cluster, bench.budget, BENCH_DB)
        with contextlib.ExitStack() as running:
            for probe in (sampler, waits, memory_probe, pools):
                if probe is not None:
                    running.enter_context(probe)
            report, client_cpu = bench.run_pgbench(options, log_dir, window.workload)
        problem = bench.health_problem()
        if problem:
            raise LabError(problem)
        if not report.ok:
            # A crashed backend makes the server restart all of them; wait before reading its counters.
            bench.cluster.wait_ready(timeout_s=60)
        after = probes.take_snapshot(bench.cluster, bench.budget, BENCH_DB)
        pooler_cpu = (
            round((bench.pooler.cpu_seconds() - pooler_before) / (after.monotonic_s - before.monotonic_s), 3)
            if bench.pooler and pooler_before is not None
            else None
        )
        percentiles = latency_percentiles_ms(sorted(log_dir.glob("tx*")))
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)
    return {
        "experiment": plan.experiment,
        "profile": plan.profile_name,
        "spec_hash": plan.spec_hash,
        "window_no": window_no,
        "pass_no": window.pass_no,
        "pass_order": window.order,
        "workload": window.workload.id,
        "clients": window.clients,
        "jobs": min(options.jobs, window.clients),
        "duration_s": options.duration_s,
        "transport": bench.transport_of(window.workload),
        "started_at": started_at,
        "ok": report.ok,
        "exit_code": report.exit_code,
        "error": report.error,
        "tps": report.tps,
        "transactions": report.transactions,
        "failed_transactions": report.failed_transactions,
        "latency_avg_ms": report.latency_avg_ms,
        "latency_stddev_ms": report.latency_stddev_ms,
        **percentiles,
        "initial_connection_ms": report.initial_connection_ms,
        "avg_connection_ms": report.avg_connection_ms,
        "server_cpu_budget": window.budget,
        "client_cores": bench.client_cores,
        # Saturation is judged against what pgbench was allowed: its cores, or its quota if smaller.
        **probes.window_metrics(before, after, client_cpu, client_quota or bench.client_cores),
        "client_cpu_budget": client_quota,
        "pool_size": window.workload.pool_size,
        **(pools.figures() if pools else {}),
        "pooler_cpu_cores": pooler_cpu,
        "clients_connected": clients_connected(report, window.clients),
        "server_backends_max": sampler.max_backends if sampler else None,
        "wait_samples": waits.polls if waits else None,
        "wait_events": waits.encoded() if waits else None,
        **(memory_probe.figures if memory_probe else {}),
        "cpu_budget_method": bench.budget.method,
        "postgres_version": bench.cluster.version,
        # A script's path is the window's temporary folder: recorded relative, as <workload>.sql.
        "pgbench_flags": " ".join(options.flags()).replace(f"{log_dir}/", ""),
    }


@contextlib.contextmanager
def open_bench(plan: Plan, name: str, bindir: Path | None = None):  # type: ignore[no-untyped-def]
    """A started, initialised cluster on the plan's CPU budget; stopped and removed on exit. bindir: a
    given PostgreSQL build instead of the machine's (a run over several versions)."""
    hba = [line for role in plan.spec.roles for line in role.hba_lines()]
    # Cluster() finds the binaries before any cgroup exists, so a missing binary leaks nothing.
    cluster = Cluster(name, dict(plan.spec.server.settings), hba_lines=hba, bindir=bindir or find_bindir())
    cluster.budget = create_budget(plan.server_cores, f"connlab-{name}")
    budget = cluster.budget
    with cluster:
        prepare_database(cluster, plan.scale, plan.spec.database.prewarm)
        passwords = {role.name: secrets.token_urlsafe(24) for role in plan.spec.roles if role.needs_password}
        verifiers = create_roles(cluster, plan.spec.roles, passwords)
        roles = {role.name: role for role in plan.spec.roles}
        pgbench = find_program("pgbench", cluster.bindir)
        if plan.spec.pooler is None:
            yield Bench(cluster, budget, pgbench, plan.spec.transport, roles, passwords=passwords)
            return
        with start_pooler(cluster, plan, verifiers) as pooler:
            yield Bench(cluster, budget, pgbench, plan.spec.transport, roles, pooler, passwords)


def start_pooler(cluster: Cluster, plan: Plan, verifiers: dict[str, str]) -> PgBouncer:
    """PgBouncer with one pg_hba-style line per role (trust or SCRAM, as on the server). Its auth_file
    holds the server's SCRAM verifiers, never a password: PgBouncer checks the client's proof with them
    and logs in to the server with the keys that proof gave it."""
    spec = plan.spec.pooler
    assert spec is not None
    roles = [Role(name=SERVER_USER, auth="trust"), *plan.spec.roles]
    hba = [line for role in roles for line in role.hba_lines()]
    users = {role.name: verifiers.get(role.name, "") for role in roles}
    pool_sizes = sorted({w.pool_size for w in plan.spec.workloads if w.pool_size is not None})
    return PgBouncer(
        cluster, pool_size=spec.pool_size, pool_mode=spec.pool_mode, auth_type="hba", users=users,
        hba_lines=hba, budget=cluster.budget, pool_sizes=pool_sizes,
    )  # fmt: skip


def create_roles(cluster: Cluster, roles: list[Role], passwords: dict[str, str]) -> dict[str, str]:
    """Login roles that may run pgbench on the benchmark tables; SCRAM secrets per password_encryption.
    Returns each password role's stored SCRAM verifier (what a pooler's auth_file may hold)."""
    for role in roles:
        cluster.execute(
            psycopg.sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
                psycopg.sql.Identifier(role.name), psycopg.sql.Literal(passwords.get(role.name))
            )
        )
        cluster.execute(
            psycopg.sql.SQL("GRANT ALL ON ALL TABLES IN SCHEMA public TO {}").format(
                psycopg.sql.Identifier(role.name)
            ),
            dbname=BENCH_DB,
        )
    rows = cluster.execute(
        "SELECT rolname, rolpassword FROM pg_authid WHERE rolname = ANY(%s)", (list(passwords),)
    )
    return {name: verifier for name, verifier in rows}


def calibrate(bench: Bench, plan: Plan) -> float | None:
    """Select-only, one client, a fixed window: a single figure to place machines against each other."""
    settle(bench.cluster, plan.spec.database.prewarm)
    options = PgbenchOptions(
        ("select-only",), clients=1, jobs=1, duration_s=plan.profile.calibration_s, transaction_log=False
    )
    report, _ = bench.run_pgbench(options, None)
    return round(report.tps, 1) if report.ok and report.tps else None


def wait_for_no_backends(cluster: Cluster, timeout_s: float = 15) -> None:
    """Until no client backend is left on the benchmark database from the previous window."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cluster.execute(probes.BackendSampler.SQL, (BENCH_DB,))[0][0] == 0:
            return
        time.sleep(0.1)


def wait_for_ephemeral_ports(limit: int = TIME_WAIT_LIMIT, timeout_s: float = 90) -> None:
    """A connection per transaction over TCP leaves a socket in TIME_WAIT for each one; enough of them
    exhaust the client's ephemeral ports ("Cannot assign requested address"). Wait for the previous
    window's sockets to drain before the next one starts."""
    deadline = time.monotonic() + timeout_s
    while probes.time_wait_sockets() > limit and time.monotonic() < deadline:
        time.sleep(1)


def _measure_or_stop(
    bench: Bench, plan: Plan, window: Window, number: int, written: int
) -> dict[str, object]:
    """measure_window, with any way the server or pooler failed turned into one line that says which
    window, why, and that what was written is kept."""
    try:
        return measure_window(bench, plan, window, number)
    except (LabError, psycopg.Error) as error:
        problem = bench.health_problem() or _first_line(error)
        raise LabError(
            f"window {number} ({window.workload.id}, {window.clients} clients, pass {window.pass_no}): "
            f"{problem}; the {written} window(s) already written are kept; rerun the same command to resume"
        ) from error


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
    )


def run_sweep(plan: Plan, machine_id: str, console: Console | None = None) -> Path:
    """Run (or resume) the plan; return the CSV path."""
    console = console or Console(stderr=True)
    if not re.fullmatch(SAFE_ID_PATTERN, machine_id):
        raise LabError(
            f"machine id {machine_id!r} is not a safe folder name: use lower-case letters, digits, "
            f"'.', '_' or '-' (set MACHINE or --machine)"
        )
    folder = experiment_results_dir(machine_id, plan.experiment)
    windows = plan.windows()
    results = find_resumable(folder, plan.profile_name, plan.spec_hash, len(windows))
    if results is None:
        results = ResultsFile(new_run_path(folder, plan.profile_name))
    else:
        console.print(f"resuming {results.path} ({len(results.rows)} of {len(windows)} windows done)")
    done = results.done_keys()
    todo = [(number, window) for number, window in enumerate(windows, 1) if window.key not in done]
    LAB_DIR.mkdir(parents=True, exist_ok=True)
    with open_benches(plan, f"{plan.experiment}-{results.run_id}", open_bench) as benches:
        bench = benches.activate(plan.spec.workloads[0].postgres)
        facts = machine.collect(
            bench.cluster.version, bench.budget.method, plan.profile_name, bench.cluster.bindir
        )
        facts["calibration_tps"] = calibrate(bench, plan)
        machine.write_machine_file(machine_id, facts, keep_postgres=bool(plan.spec.server.versions))
        with _progress(console) as progress:
            task = progress.add_task(f"{plan.experiment} ({plan.profile_name})", total=len(todo))
            for number, window in todo:
                progress.update(
                    task,
                    description=f"{plan.experiment} pass {window.pass_no} "
                    f"{window.workload.id} c={window.clients}",
                )
                bench = benches.activate(window.workload.postgres)
                row = _measure_or_stop(bench, plan, window, number, len(results.rows))
                results.append({"run_id": results.run_id, "machine": machine_id, **row})
                if not row["ok"]:
                    progress.console.print(
                        f"  window {number}: {row['workload']} c={row['clients']} failed: {row['error']}"
                    )
                progress.advance(task)
                if not console.is_terminal:
                    # A log file gets no live bar; one line per window keeps the ETA visible there.
                    remaining = progress.tasks[0].time_remaining
                    eta = f"{remaining / 60:.0f} min" if remaining is not None else "unknown"
                    console.print(
                        f"[{number}/{len(windows)}] {window.workload.id} c={window.clients} "
                        f"pass {window.pass_no}: {row['tps'] or 'failed'} tps; ETA {eta}",
                        highlight=False,
                    )
    return results.path
