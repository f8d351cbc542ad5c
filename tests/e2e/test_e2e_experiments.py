"""End to end: the connect-cost, pgbouncer, too-many-clients, pgbouncer-processes, tls-trade, core-budget,
wait-events and idle-memory experiments on a real throwaway cluster (tiny profile).

Roles with their own pg_hba lines (trust and SCRAM), pgbench -C, PgBouncer started as the postgres user on
the server's budget, backends counted during windows, and nothing left running afterwards.
"""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from connlab.contract.experiment import make_plan
from connlab.probes.wait_events.probe import decode_wait_events
from support.paths import REPO_ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("require_root", "require_postgres")]

MACHINE = "e2e-conn"


def run(experiment: str, env: dict[str, str]) -> list[dict[str, str]]:
    """A tiny run in which every window succeeded; its rows."""
    rows = run_rows(experiment, env)
    assert len(rows) == len(make_plan(experiment, "tiny").windows())
    assert all(row["ok"] == "true" for row in rows), [row["error"] for row in rows]
    return rows


def no_pooler_left(env: dict[str, str]) -> list[str]:
    """PgBouncer processes of this test's runs still alive: those whose config lies in its build folder.
    Only its own: another test's run (pytest-xdist) or a measurement may run a PgBouncer meanwhile."""
    build = env["CONNLAB_BUILD_DIR"]
    return [" ".join(p.info["cmdline"] or []) for p in psutil.process_iter(["cmdline"])
            if p.info["cmdline"] and p.info["cmdline"][0].endswith("pgbouncer")
            and any(arg.startswith(build) for arg in p.info["cmdline"])]  # fmt: skip


def test_connect_cost_prices_a_new_connection(connlab_env: dict[str, str]) -> None:
    rows = run("connect-cost", connlab_env)
    by_workload: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        by_workload.setdefault(row["workload"], []).append(row)
    for workload, windows in by_workload.items():
        connecting = workload.startswith("new-")
        # pgbench prints an average connection time only with -C.
        assert all((row["avg_connection_ms"] != "") == connecting for row in windows), workload
        assert all(("-C" in row["pgbench_flags"].split()) == connecting for row in windows), workload
        assert {row["transport"] for row in windows} == {workload.rsplit("-", 1)[1]}

    def median_tps(workload: str) -> float:
        values = sorted(float(row["tps"]) for row in by_workload[workload])
        return values[len(values) // 2]

    # Orders of magnitude apart on any machine: a held connection against one opened per transaction.
    # SCRAM's key derivation against a trust handshake is not ordered here: a few milliseconds per
    # connection, which a tiny window on a busy machine does not resolve (the suite beside it measured
    # trust below SCRAM once); the site's quick and full runs measure it.
    assert median_tps("held-unix") > 5 * median_tps("new-trust-unix")
    assert median_tps("held-unix") > 5 * median_tps("new-scram-unix")


def test_pgbouncer_pools_and_is_stopped(connlab_env: dict[str, str]) -> None:
    rows = run("pgbouncer", connlab_env)
    pool_size = make_plan("pgbouncer", "tiny").spec.poolers[0].pool_size
    for row in rows:
        assert row["pooler_cpu_cores"] != ""
    # The pooler works only when traffic goes through it (idle, it wakes for timers alone): every pooled
    # window costs it more CPU than any direct one. No absolute figure: that depends on the machine.
    assert {r["workload"]: r["target"] for r in rows} == {
        w.id: w.target for w in make_plan("pgbouncer", "tiny").spec.workloads
    }
    pooled_cpu = [float(r["pooler_cpu_cores"]) for r in rows if r["target"] == "pgbouncer"]
    direct_cpu = [float(r["pooler_cpu_cores"]) for r in rows if r["target"] == "direct"]
    assert pooled_cpu and direct_cpu
    assert min(pooled_cpu) > max(direct_cpu), (pooled_cpu, direct_cpu)
    for row in rows:
        pooled = "pgbouncer" in row["workload"]
        if pooled:
            # Admission control: never more server backends than the pool holds.
            assert int(row["server_backends_max"]) <= pool_size, row
    direct_50 = [
        int(r["server_backends_max"]) for r in rows if (r["workload"], r["clients"]) == ("direct", "50")
    ]
    # Direct clients each get a backend. The sampler polls once a second, so in a 1 s window it sees
    # however many had connected at that moment: more than one somewhere, not necessarily all 50.
    assert max(direct_50) > 1, direct_50
    assert no_pooler_left(connlab_env) == []


def test_a_missing_pooler_leaves_its_windows_out_and_says_so(connlab_env: dict[str, str]) -> None:
    """The direct windows are measured and kept; the pooled ones are left for a rerun; exit status 2."""
    env = {**connlab_env, "CONNLAB_PGBOUNCER": "/nonexistent/pgbouncer"}
    result = subprocess.run(
        [sys.executable, "-m", "connlab.cli", "run", "pgbouncer", "--profile", "tiny", "--machine", MACHINE],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert (
        "their pooler cannot run here: pgbouncer: CONNLAB_PGBOUNCER=/nonexistent/pgbouncer" in result.stderr
    )
    [path] = sorted((Path(env["CONNLAB_RESULTS_DIR"]) / MACHINE / "pgbouncer").glob("*.csv"))
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    plan = make_plan("pgbouncer", "tiny")
    assert len(rows) == sum(window.workload.target == "direct" for window in plan.windows())
    assert {row["target"] for row in rows} == {"direct"}


def test_run_all_reports_a_missing_pooler_and_shows_one_eta_across_experiments(
    connlab_env: dict[str, str],
) -> None:
    """`make all` runs every experiment through run-all: a pooler the machine lacks is reported as not
    available, not a failure (exit 0), and every window's line carries the progress across experiments."""
    env = {**connlab_env, "CONNLAB_PGBOUNCER": "/nonexistent/pgbouncer"}
    result = subprocess.run(
        [sys.executable, "-m", "connlab.cli", "run-all", "connect-cost", "pgbouncer", "--profile", "tiny",
         "--machine", MACHINE],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "not measured here: pgbouncer: CONNLAB_PGBOUNCER=/nonexistent/pgbouncer" in result.stderr
    assert "== connect-cost (experiment 1 of 2, 0% of all, ETA unknown)" in result.stderr
    shares = [int(m) for m in re.findall(r"experiment [12] of 2, (\d+)% of all, ETA \d+ min", result.stderr)]
    assert shares and shares == sorted(shares) and shares[-1] == 100, result.stderr
    for experiment in ("connect-cost", "pgbouncer"):
        assert sorted((Path(env["CONNLAB_RESULTS_DIR"]) / MACHINE / experiment).glob("*.csv"))


def run_rows(experiment: str, env: dict[str, str]) -> list[dict[str, str]]:
    """A tiny run that must exit 0, whatever its windows' outcome; its rows."""
    return run_rows_and_log(experiment, env)[0]


def run_rows_and_log(
    experiment: str, env: dict[str, str], command: str = "run", workloads: tuple[str, ...] = ()
) -> tuple[list[dict[str, str]], str]:
    """A tiny run that must exit 0, whatever its windows' outcome; its rows and what it printed. With
    command "run-all", a pooler missing here (Odyssey, pgcat) is reported and is not a failure; with
    workloads, only those workloads' windows are measured (`connlab run --workload`)."""
    only = [arg for workload in workloads for arg in ("--workload", workload)]
    result = subprocess.run(
        [sys.executable, "-m", "connlab.cli", command, experiment, "--profile", "tiny", "--machine", MACHINE,
         *only],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [path] = sorted((Path(env["CONNLAB_RESULTS_DIR"]) / MACHINE / experiment).glob("*.csv"))
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle)), result.stderr


def test_too_many_clients_records_the_refusal_as_its_result(connlab_env: dict[str, str]) -> None:
    """Seed 004's reproduction: straight to a server allowing 100, the crowd of 150 is refused and the run
    goes on (a failed window is the measurement); through PgBouncer every client runs on a small pool."""
    rows, log = run_rows_and_log("too-many-clients", connlab_env)
    plan = make_plan("too-many-clients", "tiny")
    # Not at a terminal, one line per window: a refused window reads as failed, never as a throughput.
    direct_lines = [line for line in log.splitlines() if re.match(r"\[\d+/\d+\] direct ", line)]
    assert direct_lines and all(": failed; ETA" in line for line in direct_lines), log
    assert len(rows) == len(plan.windows())
    direct = [r for r in rows if r["target"] == "direct"]
    pooled = [r for r in rows if r["target"] == "pgbouncer"]
    for row in direct:
        assert row["ok"] == "false" and "sorry, too many clients already" in row["error"], row
        # The sampler's connection holds one of the hundred slots (it may not have connected yet).
        assert 98 <= int(row["clients_connected"]) <= 100, row
    for row in pooled:
        assert row["ok"] == "true" and int(row["clients_connected"]) == 150, row
        assert int(row["server_backends_max"]) <= int(row["pool_size"]), row
    assert no_pooler_left(connlab_env) == []


def test_two_pgbouncer_processes_share_the_port_and_both_are_stopped(connlab_env: dict[str, str]) -> None:
    rows = run("pgbouncer-processes", connlab_env)
    pair = [r for r in rows if r["target"] == "pgbouncer-pair"]
    assert pair and all(r["pooler_cpu_cores"] != "" for r in pair)
    # Each process keeps pools of its own: together they hold no more than twice the pair's pool size.
    assert all(int(r["server_backends_max"]) <= 2 * int(r["pool_size"]) for r in pair), pair
    assert no_pooler_left(connlab_env) == []


def test_tls_windows_encrypt_and_plain_ones_do_not(connlab_env: dict[str, str]) -> None:
    """A TLS window's clients connect with sslmode=require, which libpq refuses to complete unencrypted, and a
    plain one's with sslmode=disable, which never encrypts: so every window of both kinds finishing its
    transactions without an error is the proof, with no timing compared (a busy machine blurs those)."""
    rows = run("tls-trade", connlab_env)
    plan = make_plan("tls-trade", "tiny")
    assert {r["workload"] for r in rows} == {w.id for w in plan.spec.workloads}
    assert {r["workload"].rsplit("-", 1)[1] for r in rows} == {"plain", "tls"}
    for row in rows:
        assert row["error"] == "" and int(row["failed_transactions"] or 0) == 0, row
    # Each workload finished transactions in some window (one window of a busy machine may finish none).
    assert {r["workload"] for r in rows if int(r["transactions"]) > 0} == {r["workload"] for r in rows}
    assert no_pooler_left(connlab_env) == []


def test_core_budget_alternates_quotas(connlab_env: dict[str, str]) -> None:
    rows = run("core-budget", connlab_env)
    plan = make_plan("core-budget", "tiny")
    assert {float(row["server_cpu_budget"]) for row in rows} == set(plan.budgets)
    # Budgets alternate at every point: consecutive windows of one pass switch between them.
    first_pass = [float(row["server_cpu_budget"]) for row in rows if row["pass_no"] == "1"]
    assert len(set(first_pass[:4])) == 2
    # The quota holds: the server never used more than its budget (plus a little accounting slack).
    for row in rows:
        assert float(row["server_cpu_cores"]) <= float(row["server_cpu_budget"]) * 1.1 + 0.05, row


def test_wait_events_sample_active_backends(connlab_env: dict[str, str]) -> None:
    rows = run("wait-events", connlab_env)
    plan = make_plan("wait-events", "tiny")
    for row in rows:
        # A poll every 100 ms: at most ten a second (plus start-up slack); on a loaded machine fewer, but
        # never none. No lower rate is asserted: it depends on how fast this machine answers a poll.
        assert 1 <= int(row["wait_samples"]) <= 12 * plan.profile.duration_s, row
        states = decode_wait_events(row["wait_events"])
        # Never more active backends in one poll than clients, so never more samples than polls × clients.
        # A poll may find no active backend at all (short transactions fall between polls): an empty cell.
        assert 0 <= sum(states.values()) <= int(row["wait_samples"]) * int(row["clients"])
        assert all(state == "running" or ":" in state for state in states)
    # With many clients on one server core, some backend is active at almost every poll.
    crowded = max(int(row["clients"]) for row in rows)
    assert any(decode_wait_events(row["wait_events"]) for row in rows if int(row["clients"]) == crowded)
    # tpcb-like updates a handful of branch rows: with several clients, some wait on another's row lock.
    busy = [
        decode_wait_events(r["wait_events"])
        for r in rows
        if r["workload"] == "tpcb-like" and r["clients"] == "8"
    ]
    assert any(state.startswith("Lock:") for states in busy for state in states)


def test_idle_memory_measures_every_backend(connlab_env: dict[str, str]) -> None:
    rows = run("idle-memory", connlab_env)
    for row in rows:
        clients = int(row["clients"])
        assert int(row["mem_backends"]) == clients, row
        rss, pss, anon = (int(row[f"mem_{name}_sum_bytes"]) for name in ("rss", "pss", "anon_rss"))
        # Shared pages count once per process in RSS and are divided among the sharers in PSS.
        assert 0 < anon < rss and 0 < pss < rss, row
        if row["cpu_budget_method"] == "cgroup-v1":
            assert int(row["mem_cgroup_usage_bytes"]) > int(row["mem_cgroup_rss_bytes"]) > 0, row
    by_clients: dict[int, list[int]] = {}
    for row in rows:
        by_clients.setdefault(int(row["clients"]), []).append(int(row["mem_anon_rss_sum_bytes"]))
    few, many = min(by_clients), max(by_clients)
    # More idle connections, more private memory: the smallest of the many beats the largest of the few.
    assert min(by_clients[many]) > max(by_clients[few])


def test_sync_commit_sets_the_session(connlab_env: dict[str, str]) -> None:
    """Each workload's pgbench sessions run with its own synchronous_commit. The check is the setting as a
    session reads it, not throughput: whether off beats on depends on the disk's fsync and on the load
    beside the run (on a cheap fsync and a busy machine, the two medians cross)."""
    rows = run("sync-commit", connlab_env)
    plan = make_plan("sync-commit", "tiny")
    assert {(row["workload"], int(row["clients"])) for row in rows} == {
        (workload.id, clients) for workload in plan.spec.workloads for clients in plan.client_counts
    }
    # In a process of the test's own environment (its build folder, cgroups and lock): a transaction that
    # divides by zero unless the session's setting is the workload's, so one wrong session fails the window.
    check = subprocess.run(
        [sys.executable, "-c", SESSION_SETTING_CHECK, str(Path(connlab_env["CONNLAB_BUILD_DIR"]))],
        cwd=REPO_ROOT, env=connlab_env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert check.returncode == 0, check.stderr
    expected = sorted(f"{workload.id}:ok" for workload in plan.spec.workloads)
    assert sorted(check.stdout.splitlines()) == expected, check.stdout


SESSION_SETTING_CHECK = """
import sys
from pathlib import Path
from connlab.contract.experiment import make_plan
from connlab.contract.pgbench_options import PgbenchOptions
from connlab.lab.bench import open_bench

plan = make_plan("sync-commit", "tiny")
folder = Path(sys.argv[1])
folder.mkdir(parents=True, exist_ok=True)
with open_bench(plan, "e2e-sync-session") as bench:
    for workload in plan.spec.workloads:
        expected = str(workload.settings.get("synchronous_commit", "on"))
        script = folder / f"{workload.id}.sql"
        script.write_text(f"SELECT 1 / (current_setting('synchronous_commit') = '{expected}')::int;\\n")
        script.chmod(0o644)
        options = PgbenchOptions(builtins=(), clients=1, jobs=1, duration_s=1, script_path=str(script))
        report, _ = bench.run_pgbench(options, None, workload)
        print(f"{workload.id}:{'ok' if report.ok and report.transactions else report}")
"""


def test_client_bound_applies_quota_and_threads(connlab_env: dict[str, str]) -> None:
    rows = run("client-bound", connlab_env)
    for row in rows:
        if row["workload"].endswith("-half-client"):
            assert float(row["client_cpu_budget"]) == 0.5 * int(row["client_cores"]), row
            # The quota holds: pgbench never used more than it was allowed (plus accounting slack).
            assert float(row["client_cpu_cores"]) <= float(row["client_cpu_budget"]) * 1.1 + 0.05, row
        else:
            assert row["client_cpu_budget"] == "", row
        expected_jobs = 2 if row["workload"].endswith("-2-threads") else 1
        assert int(row["jobs"]) == min(expected_jobs, int(row["clients"])), row


def test_queue_depth_sees_clients_wait_for_a_small_pool(connlab_env: dict[str, str]) -> None:
    rows = run("queue-depth", connlab_env)
    plan = make_plan("queue-depth", "tiny")
    sizes = {w.id: w.pool_size for w in plan.spec.workloads}
    for row in rows:
        assert int(row["pool_size"]) == sizes[row["workload"]]
        assert int(row["pool_samples"]) > 0
        # Admission control per alias: never more server backends than that pool holds.
        assert int(row["server_backends_max"]) <= int(row["pool_size"]), row
    smallest = min(sizes.values())
    clients = int(rows[0]["clients"])
    for row in rows:
        waiting = float(row["pool_cl_waiting_avg"])
        if int(row["pool_size"]) == smallest and clients > smallest:
            assert waiting > 0, row  # more clients than server connections: some always wait
        if int(row["pool_size"]) >= clients:
            # A connection for every client: at most a client at a time waits, while PgBouncer logs a new
            # server connection in (which a busy machine stretches, so the sampler can catch it).
            assert waiting < 1, row
    assert no_pooler_left(connlab_env) == []


def test_each_pooler_counts_only_its_own_server_backends(connlab_env: dict[str, str]) -> None:
    """pooler-memory runs PgBouncer and PgPool-II on one server, and PgPool-II keeps the backends its
    children cached from its own windows. A PgBouncer window after one of PgPool-II's counts only the
    backends PgBouncer opened: never more than its pool or its clients. Only those two poolers' windows are
    measured: the others' add nothing to the question."""
    experiment = "pooler-memory"
    rows, _ = run_rows_and_log(experiment, connlab_env, workloads=("pgbouncer", "pgpool"))
    order = [row["target"] for row in rows]
    assert "pgpool" in order and order.index("pgpool") < len(order) - 1 - order[::-1].index("pgbouncer")
    pgbouncer = [row for row in rows if row["target"] == "pgbouncer"]
    plan = make_plan(experiment, "tiny")
    spec = plan.spec
    assert len(pgbouncer) == len(spec.clients) * plan.profile.passes
    # The poolers start afresh at each pass (pooler_start: per-pass): each pass has a start reading of its
    # own, which every window of that pass repeats. PgPool-II's hundred children never read alike twice.
    starts: dict[str, set[str]] = {}
    for row in rows:
        if row["target"] == "pgpool":
            starts.setdefault(row["pass_no"], set()).add(row["pooler_start_rss_bytes"])
    assert len(starts) == plan.profile.passes > 1 and all(len(one) == 1 for one in starts.values()), starts
    assert len(set().union(*starts.values())) == plan.profile.passes, starts
    pool_size = spec.pooler("pgbouncer").pool_size  # type: ignore[union-attr]
    # A one-second window may end before 500 SCRAM clients have connected (then it has no throughput), but
    # the backends it saw are counted all the same.
    assert any(row["ok"] == "true" for row in pgbouncer), [row["error"] for row in pgbouncer]
    for row in pgbouncer:
        most = min(int(row["clients"]), pool_size)
        assert int(row["server_backends_max"]) <= most, row
        assert row["ok"] == "false" or int(row["server_backends_max"]) > 0, row
    assert no_pooler_left(connlab_env) == []


def test_a_feature_the_pooler_version_lacks_is_a_row_that_says_so(connlab_env: dict[str, str]) -> None:
    """PgBouncer before 1.21 cannot track prepared statements in transaction mode: the instance asked for
    it runs no window, and each of its rows says "not supported by this version" with the version."""
    from connlab.contract.poolers.features import PREPARED_IN_TRANSACTION_MODE, SUPPORTED, pgbouncer_support
    from connlab.poolers.pgbouncer.adapter import PgBouncer

    version = PgBouncer.version()
    experiment = "prepared-statements"
    variant = ("pgbouncer-prepared-simple", "pgbouncer-prepared-extended", "pgbouncer-prepared-prepared")
    rows = run_rows_and_log(experiment, connlab_env, workloads=variant)[0]
    assert {row["target"] for row in rows} == {"pgbouncer-prepared"}, rows
    assert len(rows) == 3, rows  # -M simple, extended and prepared, one tiny pass
    if pgbouncer_support(PREPARED_IN_TRANSACTION_MODE, version) == SUPPORTED:
        assert all(row["ok"] == "true" for row in rows), rows
    else:
        for row in rows:
            assert row["ok"] == "false" and row["tps"] == "", row
            assert row["error"].startswith("pgbouncer: prepared statements in transaction mode: "
                                           "not supported by this version ("), row  # fmt: skip
    # Such rows are valid results: the checks contributors' files go through accept them.
    check = subprocess.run(
        [sys.executable, "-m", "connlab.cli", "validate"],
        cwd=REPO_ROOT, env=connlab_env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr
    assert no_pooler_left(connlab_env) == []
