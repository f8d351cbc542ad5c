"""Cross-field rules of a window's row: values that each parse, and together cannot have been measured.

The column checks (connlab.data.validate) hold each cell to its type and bounds; these hold a row to what the
harness and pgbench make of a window: a profile its experiment defines, a start that has happened, a tps that
is its transactions over the time pgbench ran, percentiles in order, a saturation flag that is what the CPU
figures say. Each rule was checked against the code that writes the columns (connlab.lab) and against every
committed row; a rule the harness could break in a real run is not here.

Every function takes a row as read from a CSV (column name -> text) whose cells have already passed their
column checks, so numbers parse; a column absent from an older file reads as empty. A problem is
"field: what is wrong", the field being the cell to look at first.
"""

from __future__ import annotations

import functools
import math
import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from connlab.contract.names import CLIENT_SATURATION_SHARE
from connlab.errors import LabError

# The only form the harness writes (connlab.lab.window: strftime("%Y-%m-%dT%H:%M:%SZ")): whole seconds, UTC,
# "Z". Anything else was not written by `connlab run`; one form also keeps the times comparable as text.
STARTED_AT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
STARTED_AT_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
# How far in the future a window's start may lie before it is refused. A clock ahead by minutes, or a local
# time written as UTC (UTC+14 at most), stays within a day; a start beyond that was never measured.
CLOCK_SKEW = timedelta(days=1)
RUN_ID_PROFILE = re.compile(r"(tiny|quick|full)-[0-9]{8}T[0-9]{6}Z")
KNOWN_EXPERIMENT = re.compile(r"[a-z0-9][a-z0-9-]*")

# pgbench's tps against its transactions: how far the time they imply may stray from the window's bounds.
# Those bounds are exact but for rounding (tps is written with 4 decimals, connection times with 3), and
# pgbench's own start-up before -T runs (threads started, with -C not reported); 5% of the window and a
# tenth of a second cover those many times over, and still refuse a tps off by a fifth.
TPS_SLACK_SHARE = 0.05
TPS_SLACK_S = 0.1
# client_cpu_cores is written rounded to 3 decimals; the flag was decided on the unrounded figure.
CPU_ROUNDING = 0.0005
# The most cores a process can be measured using, as a multiple of what it was given, plus a constant: a
# cgroup quota is enforced per 100 ms period and the CPU counters are read a moment apart from the window's
# clock, so a window reads a few percent over its budget (1.02 at most in the committed results); more is a
# figure that was not measured under that budget.
CPU_OVER_BUDGET = 1.2
CPU_OVER_BUDGET_CORES = 0.05
# Shares of time in percent (/proc/stat steal ticks of all ticks: exact; /proc/pressure/cpu "some" over the
# window's wall time: read a moment apart, so a little over 100 is still a measurement).
MAX_STEAL_PCT = 100.0
MAX_PRESSURE_PCT = 105.0
# Pairs (smaller, larger) that hold in every reading: PSS divides each resident page among its sharers, so it
# never exceeds RSS (the peaks are the largest of readings that each hold it); a mean of polls never exceeds
# their largest.
ORDERED_PAIRS = (
    ("mem_pss_sum_bytes", "mem_rss_sum_bytes"),
    ("pooler_pss_peak_bytes", "pooler_rss_peak_bytes"),
    ("pooler_start_pss_bytes", "pooler_start_rss_bytes"),
    ("pool_cl_waiting_avg", "pool_cl_waiting_max"),
)
PERCENTILES = ("latency_p50_ms", "latency_p95_ms", "latency_p99_ms")
# Every column window_problems reads: the row shapes capture these from each line
# (tests/data/test_window_rules.py fails when a rule reads one that is not listed).
COLUMNS_READ = frozenset({
    "run_id", "profile", "pass_no", "pass_order", "started_at", "clients", "jobs", "duration_s",
    "client_cores", "server_cpu_budget", "clients_connected", "ok", "exit_code", "error", "tps",
    "transactions", "failed_transactions", "latency_avg_ms", "latency_stddev_ms", "initial_connection_ms",
    "avg_connection_ms", "client_cpu_budget", "client_cpu_cores", "client_saturated", "server_cpu_cores",
    "steal_pct", "cpu_pressure_pct", *PERCENTILES, *(name for pair in ORDERED_PAIRS for name in pair),
})  # fmt: skip

# Published figures: a metric named with a unit's suffix is printed in that unit.
UNIT_OF_SUFFIX = {"ms": "ms", "s": "s", "kb": "kB", "mb": "MB", "gb": "GB", "mib": "MiB", "gib": "GiB"}


@dataclass(frozen=True)
class RowContext:
    """What the rules of one run file's rows compare against."""

    experiment: str
    profiles: tuple[str, ...]  # the experiment's profiles
    latest_start: str  # a started_at after this (in STARTED_AT's form) has not happened yet
    pass_order: Callable[[int], str]  # "asc" or "desc" for a pass number, as the sweep orders passes


def row_context(experiment: str, now: datetime | None = None) -> RowContext:
    """The context of a run file in results/<machine>/<experiment>/."""
    # Imported here: the spec's pydantic models cost a build whose validation is all cached (no run file
    # read) a tenth of its time.
    from connlab.contract.experiment import pass_order

    latest = (now or datetime.now(UTC)) + CLOCK_SKEW
    profiles = experiment_profiles(experiment)
    return RowContext(experiment, profiles, latest.strftime(STARTED_AT_FORMAT), pass_order)


def contract_profiles() -> tuple[str, ...]:
    """Every profile an experiment may define."""
    from connlab.contract.experiment import ProfileName

    return typing.get_args(ProfileName)


@functools.lru_cache(maxsize=64)
def _spec_profiles(experiment: str) -> tuple[str, ...] | None:
    from connlab.contract.experiment import load_experiment

    try:
        return tuple(load_experiment(experiment).profiles)
    except (LabError, OSError):
        return None


def experiment_profiles(experiment: str) -> tuple[str, ...]:
    """The profiles experiments/<experiment>/experiment.yaml defines; for a folder that names no experiment
    (the aggregation ignores it), every profile the contract knows."""
    if not KNOWN_EXPERIMENT.fullmatch(experiment):
        return contract_profiles()
    return _spec_profiles(experiment) or contract_profiles()


def _number(values: Mapping[str, str], name: str) -> float | None:
    text = values.get(name, "")
    return float(text) if text else None


def _figure(value: float) -> str:
    return f"{value:.6g}"


def window_problems(values: Mapping[str, str], context: RowContext) -> list[str]:
    """Every cross-field problem of one window's row, as "field: what is wrong"."""
    problems = _run_problems(values, context)
    problems += _size_problems(values)
    problems += _outcome_problems(values)
    problems += _cpu_problems(values)
    problems += _order_problems(values)
    if values.get("ok") == "true":
        problems += _throughput_problems(values)
    return problems


def _run_problems(values: Mapping[str, str], context: RowContext) -> list[str]:
    """The run's profile, the window's place in it and its start."""
    problems = []
    profile = values.get("profile", "")
    if profile not in context.profiles:
        known = ", ".join(context.profiles)
        problems.append(f"profile: {profile!r} is not a profile of {context.experiment} ({known})")
    elif (run := RUN_ID_PROFILE.fullmatch(values.get("run_id", ""))) and profile != run[1]:
        problems.append(f"profile: {profile!r}, but the run id says {run[1]!r}")
    pass_no, order = _number(values, "pass_no"), values.get("pass_order", "")
    if pass_no is not None:
        expected = context.pass_order(int(pass_no))
        if order != expected:
            problems.append(f"pass_order: {order!r}, but pass {pass_no:g} runs {expected} (passes alternate)")
    started = values.get("started_at", "")
    if not _is_utc_time(started):
        problems.append(f"started_at: expected a UTC time as YYYY-MM-DDTHH:MM:SSZ (got {started!r})")
    elif started > context.latest_start:
        problems.append(f"started_at: {started} is in the future; was the clock right?")
    return problems


def _is_utc_time(text: str) -> bool:
    if not STARTED_AT.fullmatch(text):
        return False
    try:
        datetime.fromisoformat(text)  # a real date: no month 13, no 30 February (and quicker than strptime)
    except ValueError:
        return False
    return True


def _size_problems(values: Mapping[str, str]) -> list[str]:
    """pgbench's -c, -j and -T, as the harness gives them: at least one client, one thread per client at
    most (it passes min(jobs, clients)), a window of at least a second; pgbench on a core of its own."""
    problems = []
    clients, jobs = _number(values, "clients"), _number(values, "jobs")
    if clients is not None and clients < 1:
        problems.append(f"clients: {clients:g}; pgbench runs at least one client")
    elif jobs is not None and clients is not None and not 1 <= jobs <= clients:
        problems.append(f"jobs: {jobs:g} threads for {clients:g} clients; pgbench runs 1 to one per client")
    duration = _number(values, "duration_s")
    if duration is not None and duration < 1:
        problems.append(f"duration_s: {duration:g}; pgbench's -T is at least 1 s")
    client_cores = _number(values, "client_cores")
    if client_cores is not None and client_cores < 1:
        problems.append(f"client_cores: {client_cores:g}; pgbench runs on at least one core of its own")
    budget = _number(values, "server_cpu_budget")
    if budget is not None and budget <= 0:
        problems.append(f"server_cpu_budget: {budget:g} cores; a server without CPU measured nothing")
    connected = _number(values, "clients_connected")
    if connected is not None and clients is not None:
        if connected > clients:
            problems.append(f"clients_connected: {connected:g} of {clients:g} clients")
        elif values.get("ok") == "true" and connected != clients:
            # A window counts only once pgbench ran, and it runs only with every client connected.
            problems.append(f"clients_connected: {connected:g} of {clients:g} in a window marked ok")
    return problems


def _outcome_problems(values: Mapping[str, str]) -> list[str]:
    """ok as connlab.lab.pgbench.PgbenchReport.ok decides it: pgbench exited 0, finished, printed tps,
    failed no transaction and logged no error. A window marked failed says why in one of those (a logged
    error is its error column)."""
    exit_code = _number(values, "exit_code")
    if values.get("ok") == "true":
        if exit_code:
            return [f"exit_code: {exit_code:g} in a window marked ok (ok means pgbench exited 0)"]
        return []
    explained = (
        values.get("error", "") != ""
        or bool(exit_code)
        or values.get("tps", "") == ""
        or bool(_number(values, "failed_transactions"))
    )
    if values.get("ok") == "false" and not explained:
        return ["error: empty in a window marked failed that exited 0, reported tps and failed nothing"]
    return []


def _cpu_problems(values: Mapping[str, str]) -> list[str]:
    """CPU figures against the budgets they were measured under (connlab.lab.counters.window_metrics)."""
    problems = []
    client_cores = _number(values, "client_cores")
    quota = _number(values, "client_cpu_budget")
    if quota is not None and client_cores is not None and quota > client_cores:
        problems.append(f"client_cpu_budget: {quota:g} cores is more than pgbench's {client_cores:g} cores")
    # Saturation is judged against pgbench's quota where it had one, else its cores (a quota of 0 is none).
    allowed = quota or client_cores
    used = _number(values, "client_cpu_cores")
    saturated = values.get("client_saturated", "")
    if used is not None and allowed and saturated in ("true", "false"):
        threshold = CLIENT_SATURATION_SHARE * allowed
        if saturated == "true" and used < threshold - CPU_ROUNDING:
            problems.append(
                f"client_saturated: true, but pgbench used {used:g} of its {allowed:g} cores "
                f"(saturated means at least {CLIENT_SATURATION_SHARE:.0%})"
            )
        elif saturated == "false" and used >= threshold + CPU_ROUNDING:
            problems.append(
                f"client_saturated: false, but pgbench used {used:g} of its {allowed:g} cores "
                f"(at least {CLIENT_SATURATION_SHARE:.0%} is saturated)"
            )
        if used > allowed * CPU_OVER_BUDGET + CPU_OVER_BUDGET_CORES:
            problems.append(f"client_cpu_cores: {used:g}, more than the {allowed:g} cores pgbench was given")
    server_used, server_budget = _number(values, "server_cpu_cores"), _number(values, "server_cpu_budget")
    if (
        server_used is not None
        and server_budget  # a budget of 0 is refused as such
        and server_used > server_budget * CPU_OVER_BUDGET + CPU_OVER_BUDGET_CORES
    ):
        problems.append(
            f"server_cpu_cores: {server_used:g}, more than the server's budget of {server_budget:g} cores"
        )
    steal = _number(values, "steal_pct")
    if steal is not None and steal > MAX_STEAL_PCT:
        problems.append(f"steal_pct: {steal:g}% of the CPU time; a share is at most 100%")
    pressure = _number(values, "cpu_pressure_pct")
    if pressure is not None and pressure > MAX_PRESSURE_PCT:
        problems.append(f"cpu_pressure_pct: {pressure:g}% of the window; a share is at most 100%")
    return problems


def _order_problems(values: Mapping[str, str]) -> list[str]:
    """Figures that are ordered by what they are."""
    problems = []
    # Nearest-rank percentiles of one transaction log (connlab.lab.pgbench.percentile) rise with the rank.
    previous: tuple[str, float] | None = None
    for name in PERCENTILES:
        value = _number(values, name)
        if value is None:
            continue
        if previous is not None and value < previous[1]:
            problems.append(f"{name}: {value:g} ms is below {previous[0]} ({previous[1]:g} ms)")
        previous = (name, value)
    for smaller, larger in ORDERED_PAIRS:
        low, high = _number(values, smaller), _number(values, larger)
        if low is not None and high is not None and low > high:
            problems.append(f"{smaller}: {low:g} is more than {larger} ({high:g})")
    return problems


def _throughput_problems(values: Mapping[str, str]) -> list[str]:
    """A window marked ok: transactions, and the tps pgbench computes from them.

    pgbench (printResults, 14 and later) divides the transactions by the time from the moment its clients
    had all connected (with -C: its start) to the moment the last one finished. Each client stops at the
    first transaction boundary after -T seconds from pgbench's start, so that time is at least -T less the
    initial connection time, and at most -T plus the longest transaction (plus, with -C, the longest
    connection; the idle-memory script's \\sleep is part of its transaction's latency). The longest latency
    is bounded by what pgbench reports: mean + stddev * sqrt(n - 1) (Samuelson's inequality; pgbench's
    stddev is the population's) and the sum of all of them, mean * n; a connection by the sum of all.
    """
    transactions, tps = _number(values, "transactions"), _number(values, "tps")
    duration = _number(values, "duration_s")
    if transactions is None or tps is None or duration is None or duration < 1:
        return []  # a missing figure is reported by the column checks, a window under a second above
    if transactions < 1:
        return ["transactions: 0 in a window marked ok (pgbench prints no tps without a transaction)"]
    if tps <= 0:
        return [f"tps: {tps:g} with {transactions:g} transactions in a window marked ok"]
    latency = _number(values, "latency_avg_ms") or 0.0
    stddev = _number(values, "latency_stddev_ms")
    longest_ms = latency * transactions
    if stddev is not None:
        longest_ms = min(longest_ms, latency + stddev * math.sqrt(transactions - 1))
    connection = _number(values, "avg_connection_ms")
    if connection is not None:
        failed = _number(values, "failed_transactions") or 0.0
        longest_ms += connection * (transactions + failed)
    initial_s = (_number(values, "initial_connection_ms") or 0.0) / 1000
    slack = TPS_SLACK_SHARE * duration + TPS_SLACK_S
    shortest = duration - initial_s - slack
    longest = duration + longest_ms / 1000 + slack
    ran = transactions / tps
    if shortest <= ran <= longest:
        return []
    expected = (
        f"{_figure(transactions / longest)} to {_figure(transactions / shortest)}"
        if shortest > 0
        else f"at least {_figure(transactions / longest)}"
    )
    return [
        f"tps: {tps:g} is not {transactions:g} transactions over a {duration:g} s window "
        f"(pgbench's tps is transactions / time run: {expected} here)"
    ]


def published_problems(values: Mapping[str, str]) -> list[str]:
    """A published figure whose metric is named in a unit (latency_avg_ms, rss_mb) is printed in it."""
    metric, unit = values.get("metric", ""), values.get("unit", "")
    suffix = metric.rsplit("_", 1)[-1] if "_" in metric else ""
    expected = "tps" if metric == "tps" else UNIT_OF_SUFFIX.get(suffix)
    if expected is not None and unit != expected:
        return [f"unit: {unit!r}, but the metric {metric!r} is in {expected}"]
    return []
