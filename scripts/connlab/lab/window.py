"""One measurement window: pgbench at one client count with the experiment's probes around it, and the
CSV row it makes."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

import psutil

from connlab.contract.client_cores import point_client_cores
from connlab.contract.columns import NOT_RUN_ERROR
from connlab.contract.experiment import Plan, Window, window_options
from connlab.contract.names import BENCH_DB
from connlab.contract.probes.declaration import BACKENDS_SQL, CLIENT_BACKENDS
from connlab.contract.probes.registry import PROBES
from connlab.errors import LabError
from connlab.lab import counters
from connlab.lab.bench import Bench, database_of, settle
from connlab.lab.cluster import Cluster
from connlab.lab.pgbench import latency_percentiles_ms
from connlab.lab.poolers.base import PoolerProcess
from connlab.lab.samplers.base import ThreadedProbe, WindowContext
from connlab.lab.samplers.registry import SAMPLERS

# Well under the default ephemeral port range (32768-60999) that TIME_WAIT sockets draw on.
TIME_WAIT_LIMIT = 5000
BACKEND_PORTS_SQL = f"SELECT pid, client_port FROM pg_stat_activity WHERE {CLIENT_BACKENDS}"


def client_cores_of(bench: Bench, window: Window) -> int:
    """pgbench's cores at this window's point (connlab.contract.client_cores): one per client, up to every
    core the server leaves it; it runs one thread per core unless the workload names its threads."""
    return point_client_cores(window.clients, bench.client_cores)


def client_cpu_budget(window: Window, cores: int) -> float | None:
    """pgbench's CPU quota in cores for this workload, or None for its whole pinned cores."""
    if window.workload.client_cpu_share is None:
        return None
    return round(window.workload.client_cpu_share * cores, 3)


def server_client_ports(processes: Iterable[psutil.Process], server_port: int) -> frozenset[int]:
    """The local ports of these processes' TCP connections to `server_port`: the client_port the server
    shows for each of their backends."""
    ports: set[int] = set()
    for process in processes:
        with contextlib.suppress(psutil.Error):
            for connection in process.net_connections(kind="inet"):
                if connection.raddr and connection.raddr.port == server_port:
                    ports.add(connection.laddr.port)
    return frozenset(ports)


def foreign_pids(rows: Iterable[tuple[int, int | None]], own_ports: frozenset[int]) -> frozenset[int]:
    """The backends (pid, client_port) that are not the window's pooler's: over TCP from a port not its own,
    or over the unix socket where the pooler speaks TCP (it holds TCP connections to the server)."""
    speaks_tcp = bool(own_ports)
    return frozenset(
        pid for pid, port in rows if (speaks_tcp if port is None or port < 0 else port not in own_ports)
    )


def foreign_backends(bench: Bench, pooler: PoolerProcess | None) -> frozenset[int]:
    """The backends present now that belong to a pooler other than the window's and stay open: PgPool-II
    keeps its cached backends and Odyssey its pool, which no reset closes. Every other pooler's were closed
    by its reset, and the window's own target counts what it already holds (the backends probe leaves the
    rest out, WindowContext.foreign_backends).

    Which pooler a backend belongs to is told by its client port: a pooler's server connections over TCP
    come from its own processes to the server's port, and pg_stat_activity shows each backend's client_port.
    A connection over the unix socket has no port (client_port -1, or NULL): those are the window's pooler's
    where it reaches the server that way, which is where it holds no TCP connection to it (PgPool-II on the
    server's socket; Odyssey and pgcat always speak TCP, and Odyssey keeps the login the start check made).
    """
    if all(other is pooler or other.closes_server_connections() for other in bench.poolers.values()):
        return frozenset()
    rows = bench.cluster.execute(BACKEND_PORTS_SQL)
    if pooler is None or pooler.closes_server_connections():
        return frozenset(pid for pid, _ in rows)  # its own were closed by its reset: the rest are another's
    return foreign_pids(rows, server_client_ports(pooler.processes(), bench.cluster.port))


def poolers_cpu_seconds(bench: Bench) -> float:
    """The poolers' CPU time: their own cgroup's counter (connlab.lab.cpu_budget.PoolerBudget), which holds
    every process they ran, exited children included; their process trees' where there is no cgroup."""
    budget = bench.budget.pooler
    from_cgroup = budget.cpu_seconds() if budget is not None and bench.poolers else None
    if from_cgroup is not None:
        return from_cgroup
    return sum(pooler.cpu_seconds() for pooler in bench.poolers.values())


def pooler_budget_columns(bench: Bench) -> dict[str, object]:
    """The poolers' CPU budget as a window's row states it: their cores, how many, and whether the server
    ran on them too; empty without a pooler."""
    budget = bench.budget.pooler
    if not bench.poolers or budget is None:
        return {"pooler_cpus": None, "pooler_cpu_budget": None, "pooler_shares_server_cores": None}
    return {
        "pooler_cpus": budget.cpus,
        "pooler_cpu_budget": budget.cpu_budget,
        "pooler_shares_server_cores": budget.shares_server_cores,
    }


def start_samplers(bench: Bench, plan: Plan, window: Window) -> list[ThreadedProbe]:
    """The experiment's probes for this window; a pooler's probe only where the clients go through one."""
    pooler = bench.pooler_of(window.workload)
    context = WindowContext(
        bench.cluster.conninfo(), window.clients, plan.profile.duration_s, bench.budget, pooler,
        database_of(window.workload), foreign_backends(bench, pooler),
    )  # fmt: skip
    return [
        SAMPLERS[name](context)
        for name in plan.spec.probes
        if pooler is not None or not PROBES[name].needs_pooler
    ]


def measure_window(bench: Bench, plan: Plan, window: Window, window_no: int) -> dict[str, object]:
    """One window with its probes; returns the CSV row. Raises LabError when the server or a pooler
    died or froze during the window: that window is not recorded and a rerun measures it again."""
    # After a crashed backend the server restarts and refuses connections for a moment.
    bench.cluster.wait_ready(timeout_s=60)
    log_dir = Path(tempfile.mkdtemp(prefix="txlog-", dir=bench.cluster.root))
    workload = window.workload
    cores = client_cores_of(bench, window)
    options = window_options(plan, workload, window.clients, jobs=cores, script_dir=str(log_dir))
    if workload.script:
        (log_dir / f"{workload.id}.sql").write_text(workload.script)
    bench.budget.set_cores(window.budget)
    client_quota = client_cpu_budget(window, cores)
    bench.budget.set_client_cores(client_quota)
    if bench.poolers:
        for pooler in bench.poolers.values():
            pooler.reset_server_connections()
        # A pooler that cannot close its server connections (PgPool-II's cached backends) would hold the
        # count above zero for the whole wait: each window would lose its bound for nothing.
        if all(pooler.closes_server_connections() for pooler in bench.poolers.values()):
            wait_for_no_backends(bench.cluster)
    settle(bench.cluster, plan.spec.database.prewarm)
    if options.connect_per_transaction and bench.transport_of(workload) == "tcp":
        wait_for_ephemeral_ports()
    round_trip_ms = bench.round_trip_ms()  # before the window's load, not during it
    started_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    samplers = start_samplers(bench, plan, window)
    try:
        poolers_before = poolers_cpu_seconds(bench)
        before = counters.take_snapshot(bench.cluster, bench.budget, BENCH_DB)
        with contextlib.ExitStack() as running:
            for sampler in samplers:
                running.enter_context(sampler)
            report, client_cpu = bench.run_pgbench(options, log_dir, workload, client_cores=cores)
        problem = bench.health_problem()
        if problem:
            raise LabError(problem)
        if not report.ok:
            # A crashed backend makes the server restart all of them; wait before reading its counters.
            bench.cluster.wait_ready(timeout_s=60)
        after = counters.take_snapshot(bench.cluster, bench.budget, BENCH_DB)
        wall_s = after.monotonic_s - before.monotonic_s
        poolers_cpu = poolers_cpu_seconds(bench) - poolers_before
        percentiles = latency_percentiles_ms(sorted(log_dir.glob("tx*")))
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)
    probe_columns = (name for probe in PROBES.values() for name in probe.column_names)
    probe_figures: dict[str, object] = dict.fromkeys(probe_columns)
    for sampler in samplers:
        probe_figures.update(sampler.figures())
    return {
        "experiment": plan.experiment,
        "profile": plan.profile_name,
        "spec_hash": plan.spec_hash,
        "window_no": window_no,
        "pass_no": window.pass_no,
        "pass_order": window.order,
        "workload": workload.id,
        "clients": window.clients,
        "jobs": min(options.jobs, window.clients),
        "duration_s": options.duration_s,
        "transport": bench.transport_of(workload),
        "target": workload.target,
        "pooler_version": bench.pooler_versions.get(workload.target),
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
        "client_cores": cores,
        # Saturation is judged against what pgbench was allowed: its cores, or its quota if smaller.
        **counters.window_metrics(before, after, client_cpu, client_quota or cores),
        "client_cpu_budget": client_quota,
        "pool_size": workload.pool_size,
        "pooler_cpu_cores": round(poolers_cpu / wall_s, 3) if bench.poolers else None,
        **pooler_budget_columns(bench),
        "clients_connected": report.clients_connected(window.clients),
        **probe_figures,
        "server_rtt_ms": round_trip_ms,
        "cpu_budget_method": bench.budget.method,
        "postgres_version": bench.cluster.version,
        # A script's path is the window's temporary folder: recorded relative, as <workload>.sql.
        "pgbench_flags": " ".join(options.flags()).replace(f"{log_dir}/", ""),
    }


def unsupported_row(
    bench: Bench, plan: Plan, window: Window, window_no: int, reason: str
) -> dict[str, object]:
    """The row of a window whose pooler is here but whose version lacks what the workload needs: no pgbench
    runs, and the reason ("not supported by this version (1.18.0); needs 1.21+") is its result."""
    workload = window.workload
    cores = client_cores_of(bench, window)
    options = window_options(plan, workload, window.clients, jobs=cores)
    if NOT_RUN_ERROR not in reason:  # e.g. a version that could not be read: still nothing ran
        reason = f"{NOT_RUN_ERROR}: {reason}"
    return {
        "experiment": plan.experiment, "profile": plan.profile_name, "spec_hash": plan.spec_hash,
        "window_no": window_no, "pass_no": window.pass_no, "pass_order": window.order,
        "workload": workload.id, "clients": window.clients, "jobs": min(options.jobs, window.clients),
        "duration_s": options.duration_s, "transport": bench.transport_of(workload),
        "target": workload.target, "pooler_version": bench.pooler_versions.get(workload.target),
        "started_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "ok": False, "error": reason,  # with NOT_RUN_ERROR in it, validation asks only NOT_RUN_COLUMNS
        "server_cpu_budget": window.budget, "client_cores": cores,
        "pool_size": workload.pool_size, "cpu_budget_method": bench.budget.method,
        "postgres_version": bench.cluster.version, "pgbench_flags": " ".join(options.flags()),
    }  # fmt: skip


def wait_for_no_backends(cluster: Cluster, timeout_s: float = 15) -> None:
    """Until no client backend is left on the benchmark database from the previous window."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cluster.execute(BACKENDS_SQL)[0][0] == 0:
            return
        time.sleep(0.1)


def wait_for_ephemeral_ports(limit: int = TIME_WAIT_LIMIT, timeout_s: float = 90) -> None:
    """A connection per transaction over TCP leaves a socket in TIME_WAIT for each one; enough of them
    exhaust the client's ephemeral ports ("Cannot assign requested address"). Wait for the previous
    window's sockets to drain before the next one starts."""
    deadline = time.monotonic() + timeout_s
    while counters.time_wait_sockets() > limit and time.monotonic() < deadline:
        time.sleep(1)
