"""Complete results rows and machine.yaml facts, as a healthy run writes them: what the make_row and
write_run fixtures (conftest) build, and the types a test module names them by."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from connlab.contract.columns import COLUMN_NAMES

RowFactory = Callable[..., dict[str, Any]]
RunWriter = Callable[..., Path]


def base_row() -> dict[str, Any]:
    """One complete, valid window row (the values a healthy tiny run writes)."""
    return {
        "run_id": "full-20260101T000000Z",
        "machine": "alpha",
        "experiment": "clients-sweep",
        "profile": "full",
        "spec_hash": "0123456789ab",
        "window_no": 1,
        "pass_no": 1,
        "pass_order": "asc",
        "workload": "mixed",
        "clients": 1,
        "jobs": 1,
        "duration_s": 15,
        "transport": "unix",
        "target": "direct",
        "started_at": "2026-01-01T00:00:00Z",
        "ok": True,
        "exit_code": 0,
        "error": "",
        "tps": 1000.0,
        "transactions": 15000,
        "failed_transactions": 0,
        "latency_avg_ms": 1.0,
        "latency_stddev_ms": 0.5,
        "latency_p50_ms": 0.9,
        "latency_p95_ms": 2.0,
        "latency_p99_ms": 3.0,
        "initial_connection_ms": 5.0,
        "avg_connection_ms": None,
        "server_cpu_budget": 1.0,
        "server_cpu_cores": 0.95,
        "client_cores": 1,
        "client_cpu_cores": 0.4,
        "client_saturated": False,
        "steal_pct": 0.0,
        "cpu_pressure_pct": 10.0,
        "checkpoints": 0,
        "autovacuums": 0,
        "cpu_budget_method": "cgroup-v1",
        "postgres_version": "15.18",
        "pgbench_flags": "-n -b select-only -c 1 -j 1 -T 15 -P 1 -M simple -l",
    }


def complete_row(**overrides: Any) -> dict[str, Any]:
    """A complete row: complete_row(clients=4, tps=123.0) (the make_row fixture)."""
    unknown = set(overrides) - set(COLUMN_NAMES)
    assert not unknown, f"not a results column: {unknown}"
    return with_derived_figures({**base_row(), **overrides}, overrides)


def with_derived_figures(row: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """The figures validation holds to others (connlab.data.window_rules), following the overrides unless
    the test gives them too: the transactions of the tps over the window, the pass's order, the client CPU
    of a window marked client-bound, and a latency spread of the pass's own."""
    derived: dict[str, Any] = {}
    if "transactions" not in given and row["tps"]:
        derived["transactions"] = max(1, math.ceil(row["tps"] * row["duration_s"]))
    if "pass_order" not in given:
        derived["pass_order"] = "asc" if row["pass_no"] % 2 else "desc"
    if row["client_saturated"] and "client_cpu_cores" not in given:
        derived["client_cpu_cores"] = row.get("client_cpu_budget") or row["client_cores"]
    if "latency_stddev_ms" not in given and row["latency_stddev_ms"] is not None:
        # Two passes of a window never agree in every measured figure; rows that did would be a pasted pass,
        # which validation refuses (connlab.data.pasted_passes). No page shows this figure.
        derived["latency_stddev_ms"] = round(row["latency_stddev_ms"] + (row["pass_no"] - 1) / 100, 3)
    return {**row, **derived}


def machine_facts(machine_id: str, profile: str = "full", **overrides: Any) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "id": machine_id,
        "description": "",
        "cpu_model": "Test CPU 3000",
        "cores": 2,
        "threads": 2,
        "memory_gib": 8.0,
        "kernel": "6.1.0-test",
        "os": "Debian GNU/Linux 12 (bookworm)",
        "virtualised": "none",
        "postgres_version": "15.18",
        "pgbench_version": "15.18",
        "cpu_budget_method": "cgroup-v1",
        "profile": profile,
        "collected_at": "2026-01-01T00:00:00Z",
    }
    return {**facts, **overrides}
