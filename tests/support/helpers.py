"""Helpers several test modules share (rows to write, tables to read back, a render of machine pages, the
connlab command run as a user runs it): kept here so that no test module imports another.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb

from connlab.contract.files import write_if_changed
from connlab.site.render.machine_pages import render_machine_pages, store_machine_pages
from connlab.site.render.renderer import PageRenderer
from support.paths import REPO_ROOT

# The connlab command as the console script runs it (connlab/__main__.py), with this interpreter.
CONNLAB_COMMAND = [sys.executable, "-m", "connlab"]
Rows = list[dict[str, Any]]
# The articles whose facts a machine page draws on.
SLUGS = ["pool-sizing", "too-many-connections"]


def passes(workload: str, clients: int, tps: list[float], **per_pass: dict[int, Any]) -> Rows:
    """Three passes of one point; per_pass={column: {pass_no: value}} overrides single windows."""
    rows = []
    for pass_no, value in enumerate(tps, start=1):
        row: dict[str, Any] = {
            "workload": workload,
            "clients": clients,
            "tps": value,
            "pass_no": pass_no,
            "pass_order": "desc" if pass_no == 2 else "asc",
            "latency_avg_ms": clients * 1000 / value,
        }
        for column, by_pass in per_pass.items():
            if pass_no in by_pass:
                row[column] = by_pass[pass_no]
        rows.append(row)
    return rows


def sweep(scale: float) -> list[dict[str, Any]]:
    return [
        {"workload": workload, "clients": clients, "tps": tps * scale, "pass_no": pass_no}
        for workload in ("mixed", "select-only", "tpcb-like")
        for clients, tps in ((1, 1000.0), (2, 1800.0), (4, 1700.0))
        for pass_no in (1, 2, 3)
    ]


def records(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, Any]]:
    cursor = con.execute(sql)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def db_records(database: Path, sql: str) -> list[dict[str, Any]]:
    with duckdb.connect(str(database), read_only=True) as connection:
        return records(connection, sql)


def render(data: Path, docs: Path, cache: Path) -> tuple[dict[Path, str], set[Path]]:
    """One render of the machine pages with their charts; returns the pages and those actually rendered."""
    renderer = PageRenderer(data, docs)
    machine_pages = render_machine_pages(renderer, SLUGS, cache)
    pages = renderer.chart_book.resolve(machine_pages.pages)
    for path, text in pages.items():  # as render_site writes them, before they are kept
        write_if_changed(path, text)
    store_machine_pages(pages, machine_pages.rendered, cache)
    return pages, set(machine_pages.rendered)


def connlab(*args: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`connlab ARGS` in the repository with this environment, its output captured and no terminal to
    answer a question on; a hang fails the test after `timeout` seconds."""
    return subprocess.run(
        [*CONNLAB_COMMAND, *args], cwd=REPO_ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=timeout, check=False,
    )  # fmt: skip


# The columns connlab.data.views' windows table reads besides a test's own, for a hand-made raw_windows: one
# good 15-s window per row of one point, connected at once, with a figure in each steady-state column.
STEADY_STATE_DEFAULTS = (
    "ok BOOLEAN DEFAULT true, duration_s INTEGER DEFAULT 15, initial_connection_ms DOUBLE DEFAULT 0, "
    "workload VARCHAR DEFAULT 'w', target VARCHAR DEFAULT 'direct', transport VARCHAR DEFAULT 'unix', "
    "clients INTEGER DEFAULT 1, pooler_version VARCHAR, postgres_version VARCHAR, tps DOUBLE DEFAULT 100, "
    "latency_avg_ms DOUBLE DEFAULT 10, latency_stddev_ms DOUBLE, latency_p50_ms DOUBLE, "
    "latency_p95_ms DOUBLE, latency_p99_ms DOUBLE, run_id VARCHAR DEFAULT 'r', window_no INTEGER, "
    "pass_no INTEGER, started_at VARCHAR"
)
