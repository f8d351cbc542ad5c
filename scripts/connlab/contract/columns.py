"""The columns of a raw results CSV: one row per measurement window.

One list serves the sweep (which writes rows), validation (which checks them) and aggregation (which
reads them with these types), so the three cannot drift apart. The window's own columns are declared here;
each probe declares the columns it fills in its folder (connlab/probes/<name>/probe.py), and they are placed
among these by the column they follow, so that a row keeps its order as probes are added. A column carries
its own constraints (`minimum`), so a new column is checked as soon as it is declared.
"""

from __future__ import annotations

from connlab.contract.column import Column
from connlab.contract.probes.declaration import Probe
from connlab.contract.probes.registry import PROBES
from connlab.contract.provenance import DIGEST_PATTERN
from connlab.errors import LabError

# Bounds that validation holds a column to besides its type and minimum. A latency above ten minutes is not a
# latency in milliseconds (most likely seconds or microseconds); a run has at most so many passes and windows.
MAX_PLAUSIBLE_MS = 600_000
MAX_WINDOWS = 100_000
MAX_PASSES = 100
UPPER_BOUNDS = {"pass_no": MAX_PASSES, "window_no": MAX_WINDOWS}
# Why a window beyond the grid was measured (column added_for, connlab.lab.refine).
ADDED_FOR_PEAK = "peak"
ADDED_FOR_SPREAD = "spread"


def any_text_is_valid(column: Column) -> bool:
    """Whether every non-empty text is a valid value of this column: a text column without a pattern, bounds
    or a unit to check (a run's id, its start time, a workload's name...)."""
    return (
        column.type == "VARCHAR"
        and column.pattern is None
        and column.minimum is None
        and column.name not in UPPER_BOUNDS
        and not column.name.endswith("_ms")
    )


# The window's own columns; the probes' are placed among them below (window_columns).
OWN_COLUMNS: tuple[Column, ...] = (
    Column("run_id", "VARCHAR", "one sweep run; a resumed run keeps its id"),
    Column("machine", "VARCHAR", "results/<machine>/ folder name"),
    Column("experiment", "VARCHAR", "experiment name"),
    Column("profile", "VARCHAR", "quick, full or tiny"),
    Column("spec_hash", "VARCHAR", "hash of the experiment spec and profile measured"),
    Column("window_no", "INTEGER", "position of the window in the run's plan, from 1"),
    Column("pass_no", "INTEGER", "pass number, from 1"),
    Column("pass_order", "VARCHAR", "asc or desc"),
    # Points measured after the grid where the answer is (connlab.lab.refine): each says why it was added.
    Column(
        "added_for",
        "VARCHAR",
        "empty for a grid point; peak: a client count added between a curve's peak and its neighbours; "
        "spread: a pass added where the point's passes disagreed",
        pattern=rf"^(?:{ADDED_FOR_PEAK}|{ADDED_FOR_SPREAD})$",
        pattern_hint=f"{ADDED_FOR_PEAK} or {ADDED_FOR_SPREAD}",
        required=False,
        added_later=True,
    ),
    Column("workload", "VARCHAR", "workload id from the experiment"),
    Column("clients", "INTEGER", "pgbench -c", minimum=0),
    Column("jobs", "INTEGER", "pgbench -j", minimum=0),
    Column("duration_s", "INTEGER", "pgbench -T", minimum=0),
    Column("transport", "VARCHAR", "unix or tcp"),
    Column(
        "target",
        "VARCHAR",
        "direct, or the name of the pooler the window's clients went through",
        added_later=True,
    ),
    # Several builds of one pooler may be measured in one run (a spec's `build:`): each row says which.
    Column(
        "pooler_version",
        "VARCHAR",
        "the version the window's pooler printed of itself (e.g. 1.25.2); empty for a direct window",
        pattern=r"^[0-9]+(?:\.[0-9]+)+$",
        pattern_hint="a dotted version, e.g. 1.25.2",
        required=False,
        added_later=True,
    ),
    Column("started_at", "VARCHAR", "UTC time the window started, ISO 8601"),
    Column("ok", "BOOLEAN", "pgbench exited 0, finished, and no transaction failed"),
    Column("exit_code", "INTEGER", "pgbench's exit status"),
    Column("error", "VARCHAR", "first distinct error pgbench printed", required=False),
    Column("tps", "DOUBLE", "transactions per second", required=False, required_when_ok=True, minimum=0),
    Column(
        "transactions", "BIGINT", "transactions processed", required=False, required_when_ok=True, minimum=0
    ),
    Column(
        "failed_transactions",
        "BIGINT",
        "failed transactions",
        required=False,
        required_when_ok=True,
        minimum=0,
    ),
    Column("latency_avg_ms", "DOUBLE", "mean latency, ms", required=False, required_when_ok=True, minimum=0),
    Column("latency_stddev_ms", "DOUBLE", "latency standard deviation, ms", required=False, minimum=0),
    Column(
        "latency_p50_ms", "DOUBLE", "median latency from the transaction log, ms", required=False, minimum=0
    ),
    Column("latency_p95_ms", "DOUBLE", "95th percentile latency, ms", required=False, minimum=0),
    Column("latency_p99_ms", "DOUBLE", "99th percentile latency, ms", required=False, minimum=0),
    Column(
        "initial_connection_ms", "DOUBLE", "pgbench's initial connection time, ms", required=False, minimum=0
    ),
    Column("avg_connection_ms", "DOUBLE", "average connection time with -C, ms", required=False, minimum=0),
    Column("server_cpu_budget", "DOUBLE", "cores the server was allowed", minimum=0),
    # Empty where the server's host cannot be read: a remote server (connlab.contract.remote).
    Column("server_cpu_cores", "DOUBLE", "cores the server used on average", required=False, minimum=0),
    Column("client_cores", "INTEGER", "cores pgbench was pinned to", minimum=0),
    Column("client_cpu_cores", "DOUBLE", "cores pgbench used on average", minimum=0),
    Column(
        "client_saturated", "BOOLEAN", "pgbench used at least 90% of its cores: the point is client-bound"
    ),
    Column("steal_pct", "DOUBLE", "CPU steal time, % of all CPU time in the window", minimum=0),
    Column(
        "cpu_pressure_pct",
        "DOUBLE",
        "share of the window some task waited for a CPU, %",
        required=False,
        minimum=0,
    ),
    Column("checkpoints", "INTEGER", "checkpoints that fell inside the window", minimum=0),
    Column("autovacuums", "INTEGER", "autovacuum/autoanalyze runs inside the window", minimum=0),
    Column(
        "pooler_cpu_cores", "DOUBLE", "cores the pooler used on average", required=False, added_later=True
    ),
    Column(
        "clients_connected",
        "INTEGER",
        "clients connected when the window started: all of them, or as many as the server had accepted "
        "when it refused one (pgbench -j 1 connects them in order); empty when pgbench failed otherwise",
        required=False,
        added_later=True,
        minimum=0,
    ),
    # client-bound: a CPU quota for pgbench smaller than its cores.
    Column(
        "client_cpu_budget",
        "DOUBLE",
        "pgbench's CPU quota in cores, if it had one",
        required=False,
        added_later=True,
        minimum=0,
    ),
    # The pools probe: the pooler's queue polled during the window.
    Column(
        "pool_size",
        "INTEGER",
        "the pooler's pool size for the window's database",
        required=False,
        added_later=True,
        minimum=0,
    ),
    # The pooler's own CPU budget (connlab.lab.cpu_budget.PoolerBudget): its cgroup, apart from the server's.
    Column(
        "pooler_cpus",
        "VARCHAR",
        "the cores the pooler ran on, a cpuset list with spaces for commas (e.g. 0, or 0-1 4); empty "
        "without a pooler",
        # No comma: a row's cells are told apart by their commas (connlab.data.row_shapes).
        pattern=r"^[0-9]+(?:-[0-9]+)?(?: [0-9]+(?:-[0-9]+)?)*$",
        pattern_hint="cores and ranges separated by spaces, e.g. 0 or 0 2-3",
        required=False,
        added_later=True,
    ),
    Column(
        "pooler_cpu_budget",
        "DOUBLE",
        "cores the pooler was allowed: its quota, else its cores",
        required=False,
        added_later=True,
        minimum=0,
    ),
    Column(
        "pooler_shares_server_cores",
        "BOOLEAN",
        "the pooler ran on some of the server's cores: the two took CPU from each other",
        required=False,
        added_later=True,
    ),
    # A remote server (connlab run --server): the round trip to it, measured before the window.
    Column(
        "server_rtt_ms",
        "DOUBLE",
        "median round trip of SELECT 1 to a remote server over a fresh connection, ms, before the window",
        required=False,
        added_later=True,
        minimum=0,
    ),
    Column("cpu_budget_method", "VARCHAR", "cgroup-v1, cgroup-v2, taskset, or remote (connlab run --server)"),
    Column("postgres_version", "VARCHAR", "server_version"),
    Column("pgbench_flags", "VARCHAR", "the pgbench flags of the window"),
    # The run's provenance (connlab.contract.provenance), the same on every row a run session wrote.
    Column(
        "kernel", "VARCHAR", "the kernel release the run ran on (uname -r)", required=False, added_later=True
    ),
    Column(
        "machine_fingerprint",
        "VARCHAR",
        "digest of the machine's fingerprint at the run's start (cpu model and flags, threads, memory, "
        "kernel, hypervisor), as machine.yaml records them",
        pattern=DIGEST_PATTERN,
        pattern_hint="12 lower-case hexadecimal digits",
        required=False,
        added_later=True,
    ),
    Column(
        "run_calibration_tps",
        "DOUBLE",
        "the calibration at the run's start: median tps of its passes (select-only, one client)",
        required=False,
        added_later=True,
        minimum=0,
    ),
    Column(
        "run_calibration_spread_tps",
        "DOUBLE",
        "slowest to fastest of those passes, tps",
        required=False,
        added_later=True,
        minimum=0,
    ),
)


def window_columns(own: tuple[Column, ...], probes: dict[str, Probe]) -> tuple[Column, ...]:
    """A row's columns: the window's own, each probe's placed after the column its declaration names
    (another probe's, if that one is placed), a probe naming none after all the rest. A column two probes
    fill is declared once. A probe whose column clashes with another's, or whose `after` is no column, is
    refused in one line."""
    columns = list(own)
    where: dict[str, str] = {column.name: "the window's own columns" for column in own}
    pending = sorted(probes.values(), key=lambda probe: probe.after is None)
    while pending:
        placeable = [p for p in pending if p.after is None or p.after in where]
        if not placeable:
            probe = pending[0]
            raise LabError(f"probe {probe.name}: after {probe.after!r}: no such column in a results row")
        for probe in placeable:
            names = [column.name for column in columns]
            at = len(columns) if probe.after is None else names.index(probe.after) + 1
            for column in probe.columns:
                if column.name not in where:
                    columns.insert(at, column)
                    where[column.name] = f"probe {probe.name}"
                    at += 1
                elif column not in columns:  # the same name, another declaration
                    raise LabError(
                        f"probe {probe.name}: column {column.name}: declared differently by "
                        f"{where[column.name]}"
                    )
            pending.remove(probe)
    return tuple(columns)


WINDOW_COLUMNS: tuple[Column, ...] = window_columns(OWN_COLUMNS, PROBES)
COLUMN_NAMES: tuple[str, ...] = tuple(column.name for column in WINDOW_COLUMNS)
COLUMN_TYPES: dict[str, str] = {column.name: column.type for column in WINDOW_COLUMNS}
# The numbers in a row that a window's plan sets or its run's provenance repeats, the same in every pass.
SETTING_NUMBERS = frozenset({
    "server_cpu_budget", "client_cpu_budget", "pooler_cpu_budget", "run_calibration_tps",
    "run_calibration_spread_tps",
})  # fmt: skip
# What a window measured, as fractions: tps, latencies, CPU, steal and pressure, the probes' averages. Two
# passes of one window never agree in all of them to the digits written; a pass copied from another does
# (connlab.data.pasted_passes).
MEASURED_COLUMNS: tuple[str, ...] = tuple(
    column.name for column in WINDOW_COLUMNS if column.type == "DOUBLE" and column.name not in SETTING_NUMBERS
)

# A window that ran nothing because its pooler's version lacks a feature the workload needs: its row has
# ok = false, an error that says so, and only the columns that place the window (no counters: no pgbench ran).
NOT_RUN_ERROR = "not supported by this version"
NOT_RUN_COLUMNS: frozenset[str] = frozenset({
    "run_id", "machine", "experiment", "profile", "spec_hash", "window_no", "pass_no", "pass_order",
    "workload", "clients", "jobs", "duration_s", "transport", "target", "pooler_version", "started_at",
    "ok", "error", "server_cpu_budget", "client_cores", "cpu_budget_method", "postgres_version",
    "pgbench_flags",
})  # fmt: skip


def is_not_run(values: dict[str, str]) -> bool:
    """Whether a row (as read from a CSV) is a window that ran nothing, as above."""
    return values.get("ok") == "false" and NOT_RUN_ERROR in values.get("error", "")


# Published reference data (results/published-<name>/published.csv): figures printed in an article, in
# long form, so any experiment's figures fit one file. Never mixed into a measured median.
PUBLISHED_COLUMNS: tuple[Column, ...] = (
    Column("experiment", "VARCHAR", "the experiment the figure corresponds to"),
    Column("workload", "VARCHAR", "workload id, or the pooler / variant the figure is about"),
    Column("clients", "INTEGER", "client count, where the figure has one", required=False, minimum=0),
    Column("metric", "VARCHAR", "what the value is, e.g. tps, latency_avg_ms"),
    Column("value", "DOUBLE", "the value as printed", minimum=0),
    Column("unit", "VARCHAR", "unit of the value; empty for a pure number", required=False),
    Column("note", "VARCHAR", "where in the article, and any condition", required=False),
)
PUBLISHED_TYPES: dict[str, str] = {column.name: column.type for column in PUBLISHED_COLUMNS}
PUBLISHED_FILE_NAME = "published.csv"
