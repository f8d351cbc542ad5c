"""The sweep: run an experiment's windows in pass order on a throwaway cluster, one CSV row per window.

A rerun of the same experiment and profile resumes an interrupted run: windows already in the CSV are
skipped. Ctrl-C or SIGTERM at any moment stops pgbench and the server, and writes no partial row.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

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
from connlab.experiment import Plan, Window, window_options
from connlab.lab import machine, probes
from connlab.lab.cluster import Cluster, find_program
from connlab.lab.cpu_budget import CpuBudget, create_budget
from connlab.lab.pgbench import (
    PgbenchOptions,
    PgbenchReport,
    build_command,
    latency_percentiles_ms,
    parse_report,
)
from connlab.lab.results_file import ResultsFile, find_resumable, new_run_path
from connlab.paths import LAB_DIR, experiment_results_dir

BENCH_DB = "bench"
# pgbench gets this long past -T before it is killed: a window can never hang the sweep.
PGBENCH_GRACE_S = 60


@dataclass
class Bench:
    """A cluster prepared for pgbench: initialised, with its budget and the client's pinning."""

    cluster: Cluster
    budget: CpuBudget
    pgbench: str
    transport: str

    @property
    def client_cores(self) -> int:
        return len(self.budget.plan.client_cores)

    def run_pgbench(self, options: PgbenchOptions, log_dir: Path | None) -> tuple[PgbenchReport, float]:
        """Run one pgbench; return its report and the CPU seconds it used."""
        prefix = log_dir / "tx" if log_dir else None
        command = build_command(
            self.pgbench, options, self.cluster.client_args(self.transport), BENCH_DB, prefix
        )
        usage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=self.budget.enter_client,
            start_new_session=True,
        )
        try:
            output, _ = process.communicate(timeout=options.duration_s + PGBENCH_GRACE_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            output += f"\npgbench: error: killed after {options.duration_s + PGBENCH_GRACE_S} s"
        finally:
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        usage_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = probes.client_cpu_seconds(usage_after) - probes.client_cpu_seconds(usage_before)
        return parse_report(output, process.returncode), cpu


def prepare_database(cluster: Cluster, scale: int, prewarm: list[str]) -> None:
    cluster.execute(f"CREATE DATABASE {BENCH_DB}")
    result = subprocess.run(
        [
            find_program("pgbench", cluster.bindir),
            *cluster.client_args(),
            "-i",
            "-s",
            str(scale),
            "-q",
            BENCH_DB,
        ],
        capture_output=True,
        text=True,
        check=False,
        start_new_session=True,
    )
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
    """One window with its probes; returns the CSV row."""
    options = window_options(plan, window.workload, window.clients, jobs=bench.client_cores)
    settle(bench.cluster, plan.spec.database.prewarm)
    started_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    log_dir = Path(tempfile.mkdtemp(prefix="txlog-", dir=bench.cluster.root))
    try:
        before = probes.take_snapshot(bench.cluster, bench.budget, BENCH_DB)
        report, client_cpu = bench.run_pgbench(options, log_dir)
        after = probes.take_snapshot(bench.cluster, bench.budget, BENCH_DB)
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
        "transport": bench.transport,
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
        "server_cpu_budget": plan.server_cores,
        "client_cores": bench.client_cores,
        **probes.window_metrics(before, after, client_cpu, bench.client_cores),
        "cpu_budget_method": bench.budget.method,
        "postgres_version": bench.cluster.version,
        "pgbench_flags": " ".join(options.flags()),
    }


@contextlib.contextmanager
def open_bench(plan: Plan, name: str):  # type: ignore[no-untyped-def]
    """A started, initialised cluster on the plan's CPU budget; stopped and removed on exit."""
    cluster = Cluster(name, dict(plan.spec.server.settings))  # finds the binaries before cgroups exist
    cluster.budget = create_budget(plan.server_cores, f"connlab-{name}")
    budget = cluster.budget
    with cluster:
        prepare_database(cluster, plan.scale, plan.spec.database.prewarm)
        yield Bench(cluster, budget, find_program("pgbench", cluster.bindir), plan.spec.transport)


def calibrate(bench: Bench, plan: Plan) -> float | None:
    """Select-only, one client, a fixed window: a single figure to place machines against each other."""
    settle(bench.cluster, plan.spec.database.prewarm)
    options = PgbenchOptions(
        ("select-only",), clients=1, jobs=1, duration_s=plan.profile.calibration_s, transaction_log=False
    )
    report, _ = bench.run_pgbench(options, None)
    return round(report.tps, 1) if report.ok and report.tps else None


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
    with open_bench(plan, f"{plan.experiment}-{results.run_id}") as bench:
        facts = machine.collect(bench.cluster.version, bench.budget.method, plan.profile_name)
        facts["calibration_tps"] = calibrate(bench, plan)
        machine.write_machine_file(machine_id, facts)
        with _progress(console) as progress:
            task = progress.add_task(f"{plan.experiment} ({plan.profile_name})", total=len(todo))
            for number, window in todo:
                progress.update(
                    task,
                    description=f"{plan.experiment} pass {window.pass_no} "
                    f"{window.workload.id} c={window.clients}",
                )
                row = measure_window(bench, plan, window, number)
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
