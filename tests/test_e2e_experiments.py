"""End to end: the connect-cost, pgbouncer and core-budget experiments on a real throwaway cluster
(tiny profile).

Roles with their own pg_hba lines (trust and SCRAM), pgbench -C, PgBouncer started as the postgres user on
the server's budget, backends counted during windows, and nothing left running afterwards.
"""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from connlab.experiment import make_plan

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("require_root", "require_postgres")]

REPO_ROOT = Path(__file__).resolve().parents[1]
MACHINE = "e2e-conn"


def run(experiment: str, env: dict[str, str]) -> list[dict[str, str]]:
    result = subprocess.run(
        [sys.executable, "-m", "connlab.cli", "run", experiment, "--profile", "tiny", "--machine", MACHINE],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [path] = sorted((Path(env["CONNLAB_RESULTS_DIR"]) / MACHINE / experiment).glob("*.csv"))
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(make_plan(experiment, "tiny").windows())
    assert all(row["ok"] == "true" for row in rows), [row["error"] for row in rows]
    return rows


def no_pooler_left() -> list[str]:
    return [" ".join(p.info["cmdline"] or []) for p in psutil.process_iter(["cmdline"])
            if p.info["cmdline"] and p.info["cmdline"][0].endswith("pgbouncer")]  # fmt: skip


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

    # Orders of magnitude apart on any machine: a held connection against one opened per transaction,
    # and SCRAM's key derivation on top of a trust handshake.
    assert median_tps("held-unix") > 5 * median_tps("new-trust-unix")
    assert median_tps("new-trust-unix") > median_tps("new-scram-unix")


def test_pgbouncer_pools_and_is_stopped(connlab_env: dict[str, str]) -> None:
    rows = run("pgbouncer", connlab_env)
    pool_size = make_plan("pgbouncer", "tiny").spec.pooler.pool_size  # type: ignore[union-attr]
    for row in rows:
        pooled = "pgbouncer" in row["workload"]
        assert row["pooler_cpu_cores"] != ""
        # The pooler works only when traffic goes through it (idle, it wakes for timers alone).
        assert (float(row["pooler_cpu_cores"]) > 0.05) == pooled, row
        if pooled:
            # Admission control: never more server backends than the pool holds.
            assert int(row["server_backends_max"]) <= pool_size, row
    direct_50 = [
        int(r["server_backends_max"]) for r in rows if (r["workload"], r["clients"]) == ("direct", "50")
    ]
    assert max(direct_50) > pool_size  # direct clients each get a backend
    assert no_pooler_left() == []


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
