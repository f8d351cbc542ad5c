"""A cluster prepared for pgbench: initialised, its roles created, its poolers started, on its CPU budget.

Poolers. Every pooler the experiment lists is started once per run from the registry
(connlab.lab.poolers.registry.POOLERS), from the machine's own program or the staged build its entry names
(`build:`), and the version it runs is kept for its rows. One whose binary is missing on this machine does
not stop the run: it is
listed in `Bench.unavailable` with the reason, the sweep measures every other window and leaves that
pooler's windows out, and the run ends with an error naming the pooler, so that a rerun after installing
it measures only the windows still missing. A kind the registry does not know is refused before anything
starts.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import resource
import secrets
import shutil
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psycopg.sql

from connlab.contract.experiment import Plan, Role, Workload
from connlab.contract.names import BENCH_DB, SERVER_USER, pool_alias, session_options
from connlab.contract.pgbench_options import PgbenchOptions
from connlab.contract.poolers import PoolerSetup
from connlab.contract.poolers.from_plan import plan_setup
from connlab.contract.provenance import CALIBRATION_PASSES
from connlab.contract.tls import POOLER_CLIENT_TLS, SSLMODE_PLAIN, SSLMODE_TLS
from connlab.errors import LabError
from connlab.interrupts import run_in_group, started_in_group
from connlab.lab import counters, tls
from connlab.lab.calibration import Calibration
from connlab.lab.cluster import Cluster
from connlab.lab.cpu_budget import CpuBudget, budget_name, create_budget
from connlab.lab.host import find_bindir, find_program, free_port
from connlab.lab.pgbench import PgbenchReport, build_command, parse_report
from connlab.lab.poolers.base import FeatureUnsupported, PoolerProcess, PoolerUnavailable
from connlab.lab.poolers.registry import POOLERS
from connlab.lab.run_lock import hold_measurement_lock
from connlab.paths import LAB_DIR

# pgbench gets its window twice over plus this before it is killed: a window can never hang the sweep
# (a frozen server, a pooler that never answers), yet a slow start at hundreds of clients still fits.
PGBENCH_GRACE_S = 20
# Building the benchmark tables: minutes at the full profile's scale on a slow disk, never an hour.
PGBENCH_INIT_TIMEOUT_S = 1800


def pgbench_deadline_s(duration_s: int) -> int:
    """How long a window's pgbench may run before it is killed and the window recorded as failed."""
    return 2 * duration_s + PGBENCH_GRACE_S


@dataclass
class Bench:
    """A cluster prepared for pgbench: initialised, with its budget, poolers and the client's pinning."""

    cluster: Cluster
    budget: CpuBudget
    pgbench: str
    transport: str
    roles: dict[str, Role] = field(default_factory=dict)
    poolers: dict[str, PoolerProcess] = field(default_factory=dict)
    # Poolers the experiment lists that cannot run here: name -> why (their windows are left out).
    unavailable: dict[str, str] = field(default_factory=dict)
    # Poolers here whose version lacks what the experiment asks of them: name -> why (a row per window).
    unsupported: dict[str, str] = field(default_factory=dict)
    # The version each pooler here runs (e.g. 1.25.2), started or unsupported: name -> what its rows record.
    pooler_versions: dict[str, str] = field(default_factory=dict)
    # This run's generated passwords of the SCRAM roles; they live in memory only.
    passwords: dict[str, str] = field(default_factory=dict)
    # Who pgbench logs in as where a workload names no role: a named server's user (connlab.lab.remote.bench).
    default_user: str = SERVER_USER

    def machine_facts(self) -> dict[str, object]:
        """What machine.yaml records beyond the host's facts: nothing for a server of this host."""
        return {}

    def round_trip_ms(self) -> float | None:
        """The round trip to the server before a window: measured for a remote server only."""
        return None

    def transport_of(self, workload: Workload) -> str:
        return workload.transport or self.transport

    @property
    def calibration_transport(self) -> str:
        """The calibration places the machine, not the experiment: always over the server's socket, so that
        experiments over TCP and over the socket calibrate alike and are held to one figure."""
        return "unix"

    @property
    def client_cores(self) -> int:
        """The cores the server leaves pgbench; a window takes as many of them as its point needs."""
        return len(self.budget.plan.client_cores)

    def enter_client(self, cores: int | None) -> None:
        """In pgbench's child before exec: the client's budget, narrowed to the first `cores` of its cores
        where the window's point needs fewer than all of them (connlab.contract.client_cores)."""
        self.budget.enter_client()
        if cores is not None and cores < self.client_cores:
            os.sched_setaffinity(0, self.budget.plan.client_cores[:cores])

    def restart_poolers(self) -> None:
        """Stop every pooler and start it again with the same configuration (a spec's `pooler_start:
        per-pass`): a new start reading, a cold pool. The run's exit stack still stops each one at the end."""
        for pooler in self.poolers.values():
            pooler.stop()
            pooler.__enter__()  # the adapter's start: config, process in its cgroup, wait, start reading

    def pooler_of(self, workload: Workload | None) -> PoolerProcess | None:
        return self.poolers.get(workload.target) if workload is not None else None

    def health_problem(self) -> str | None:
        """Why the next window cannot be measured (server or pooler gone or frozen), or None."""
        problem = self.cluster.health_problem()
        for pooler in self.poolers.values():
            if problem is None and not pooler.running():
                problem = f"{pooler.label} exited (its log: {pooler.log_tail()})"
        return problem

    def run_pgbench(
        self,
        options: PgbenchOptions,
        log_dir: Path | None,
        workload: Workload | None = None,
        transport: str | None = None,
        client_cores: int | None = None,
    ) -> tuple[PgbenchReport, float]:
        """Run one pgbench as the workload's role over its transport (or the one given), on `client_cores`
        of the client's cores (None: all of them); return its report and CPU time."""
        prefix = log_dir / "tx" if log_dir else None
        role = self.roles.get(workload.role) if workload and workload.role else None
        transport = transport or (self.transport_of(workload) if workload else self.transport)
        user = role.name if role else self.default_user
        pooler = self.pooler_of(workload)
        connection = (pooler or self.cluster).client_args(transport, user)
        command = build_command(self.pgbench, options, connection, database_of(workload), prefix)
        environment = dict(os.environ)
        if role and role.name in self.passwords:
            environment["PGPASSWORD"] = self.passwords[role.name]
        # Said either way: libpq's default (prefer) would take TLS wherever the server or pooler offers it.
        environment["PGSSLMODE"] = sslmode_of(workload)
        if workload is not None and workload.settings:
            environment["PGOPTIONS"] = session_options(workload.settings)
        if workload is not None and workload.connect_timeout_s:
            environment["PGCONNECT_TIMEOUT"] = str(workload.connect_timeout_s)
        usage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        deadline_s = pgbench_deadline_s(options.duration_s)
        with started_in_group(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            preexec_fn=functools.partial(self.enter_client, client_cores), env=environment,
        ) as process:  # fmt: skip
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
        cpu = counters.client_cpu_seconds(usage_after) - counters.client_cpu_seconds(usage_before)
        return parse_report(output, process.returncode), cpu


def sslmode_of(workload: Workload | None) -> str:
    """libpq's sslmode for a window's clients: require for a TLS workload, disable for every other."""
    return SSLMODE_TLS if workload is not None and workload.tls else SSLMODE_PLAIN


def database_of(workload: Workload | None) -> str:
    """The database pgbench connects to: the benchmark's, or its pooler alias with a pool size."""
    return pool_alias(workload.pool_size) if workload is not None and workload.pool_size else BENCH_DB


def check_poolers(plan: Plan) -> None:
    """Refuse, before anything starts, a pooler kind the registry does not know."""
    for spec in plan.spec.poolers:
        if spec.kind not in POOLERS:
            raise LabError(
                f"experiment {plan.experiment}: pooler kind {spec.kind!r} is not registered; "
                f"known: {', '.join(sorted(POOLERS))} (a folder each in connlab/poolers/)"
            )
    for workload in plan.spec.workloads:
        if workload.tls and workload.target not in ("direct", *POOLER_CLIENT_TLS):
            raise LabError(
                f"experiment {plan.experiment}: workload {workload.id} asks for TLS through "
                f"{workload.target}, whose client-side TLS the harness does not configure "
                f"(it does for: {', '.join(POOLER_CLIENT_TLS)})"
            )


@contextlib.contextmanager
def certificate_for(plan: Plan, name: str) -> Iterator[tls.TlsFiles | None]:
    """A throwaway certificate beside the run's cluster folder when a workload asks for TLS, removed after."""
    if not plan.spec.uses_tls:
        yield None
        return
    folder = LAB_DIR / f"{name}-tls"
    try:
        yield tls.make_certificate(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


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


@contextlib.contextmanager
def open_bench(plan: Plan, name: str, bindir: Path | None = None) -> Iterator[Bench]:
    """A started, initialised cluster on the plan's CPU budget, with its poolers; all stopped on exit.
    bindir: a given PostgreSQL build instead of the machine's (a run over several versions).

    Holds the machine-wide measurement lock while the bench is open (connlab.lab.run_lock): the command
    line takes it first for the whole run, and anything else that measures (scripts/bench) takes it here."""
    check_poolers(plan)
    hba = [line for role in plan.spec.roles for line in role.hba_lines()]
    with contextlib.ExitStack() as stack:
        stack.enter_context(hold_measurement_lock())
        certificate = stack.enter_context(certificate_for(plan, name))
        settings = dict(plan.spec.server.settings)
        if certificate is not None:
            settings.update(tls.server_settings(certificate))
        # The binaries are found before any cgroup exists, so a missing binary leaks nothing.
        cluster = Cluster(name, settings, hba_lines=hba, bindir=bindir or find_bindir())
        cluster.budget = create_budget(plan.server_cores, budget_name(name))
        yield from _started_bench(plan, cluster, certificate)


def _started_bench(plan: Plan, cluster: Cluster, certificate: tls.TlsFiles | None) -> Iterator[Bench]:
    with cluster, contextlib.ExitStack() as poolers:
        prepare_database(cluster, plan.scale, plan.spec.database.prewarm)
        passwords = {role.name: secrets.token_urlsafe(24) for role in plan.spec.roles if role.needs_password}
        verifiers = create_roles(cluster, plan.spec.roles, passwords)
        roles = {role.name: role for role in plan.spec.roles}
        pgbench = find_program("pgbench", cluster.bindir)
        bench = Bench(cluster, cluster.budget, pgbench, plan.spec.transport, roles, passwords=passwords)
        for spec in plan.spec.poolers:
            setup = pooler_setup(cluster, plan, spec.instance, verifiers, passwords)
            if certificate is not None and spec.kind in POOLER_CLIENT_TLS:
                setup.settings.update(POOLER_CLIENT_TLS[spec.kind](certificate.cert.parent))
            # A spec's `build:` runs that staged build of the kind's program instead of the machine's own.
            adapter_class = POOLERS[spec.kind].of_build(spec.build)
            version = adapter_class.measured_version()
            if version is not None:
                bench.pooler_versions[spec.instance] = version
            adapter = adapter_class(setup)
            try:
                bench.poolers[spec.instance] = poolers.enter_context(adapter)
            except FeatureUnsupported as error:
                bench.unsupported[spec.instance] = str(error)
            except PoolerUnavailable as error:
                bench.unavailable[spec.instance] = str(error)
        yield bench


def pooler_setup(
    cluster: Cluster,
    plan: Plan,
    instance: str,
    verifiers: dict[str, str],
    passwords: dict[str, str] | None = None,
) -> PoolerSetup:
    """PgBouncer's auth file holds the server's SCRAM verifiers, never a password: it checks the client's
    proof with them and logs in to the server with the keys that proof gave it. PgPool-II, Odyssey and pgcat
    log in to the server with the password itself: they get this run's (memory, and their mode-600 files in
    the cluster's folder, removed with it)."""
    passwords = passwords or {}
    setup = plan_setup(
        plan, instance, root=cluster.root / instance, port=free_port(), server_host=str(cluster.socket_dir),
        server_port=cluster.port, secret=lambda role: verifiers.get(role.name, ""),
        password=lambda role: passwords.get(role.name),
    )  # fmt: skip
    setup.budget = cluster.budget.pooler if cluster.budget else None  # the poolers' own cgroup
    return setup


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


def calibrate(bench: Bench, plan: Plan) -> Calibration | None:
    """Select-only, one client, CALIBRATION_PASSES short passes in the profile's calibration time: a figure
    to place machines against each other, and its range (connlab.lab.calibration). None where a pass
    failed."""
    settle(bench.cluster, plan.spec.database.prewarm)
    seconds = max(1, math.ceil(plan.profile.calibration_s / CALIBRATION_PASSES))
    options = PgbenchOptions(("select-only",), clients=1, jobs=1, duration_s=seconds, transaction_log=False)
    passes = []
    for _ in range(CALIBRATION_PASSES):
        report, _ = bench.run_pgbench(options, None, transport=bench.calibration_transport)
        if not (report.ok and report.tps):
            return None
        passes.append(report.tps)
    return Calibration(tuple(passes))
