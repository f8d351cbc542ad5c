"""The in-window probes an experiment may list (`probes:` in experiment.yaml): what each records, how often.

A probe runs beside pgbench during a window and fills columns of the window's row. This is what every
stage knows of it: the harness starts its sampler (connlab.lab.samplers, registered under the same
name), the data stage reads its columns, and the site states its interval on the methodology page and
runs its snippet body (site_src/partials/snippets/probe_<name>.sh.j2) in the check-it-yourself blocks.

Adding a probe: a `Probe` here, its sampler in connlab/lab/samplers/<name>.py with a registry line, its
columns in connlab/contract/columns.py, and its snippet partial.
"""

from __future__ import annotations

from dataclasses import dataclass

from connlab.contract.names import BENCH_DB


@dataclass(frozen=True)
class Probe:
    name: str
    # Seconds between polls while the window runs; the snippet's psql \watch uses the same.
    interval_s: float
    columns: tuple[str, ...]
    what: str  # one line for the methodology page
    # Runs only on windows whose clients go through a pooler (it asks the pooler).
    needs_pooler: bool = False
    # Its snippet reads the pooler's admin console (SHOW POOLS): only where the block knows one.
    needs_admin_console: bool = False

    @property
    def interval_ms(self) -> int:
        return round(1000 * self.interval_s)


MEMORY_COLUMNS = (
    "mem_backends", "mem_cgroup_usage_bytes", "mem_cgroup_rss_bytes", "mem_cgroup_cache_bytes",
    "mem_rss_sum_bytes", "mem_pss_sum_bytes", "mem_anon_rss_sum_bytes",
)  # fmt: skip

# The pooler's tree: peaks over the window, and one reading after its start, before any window ran (PgPool-II
# forks all its children then: the seed's gigabyte before the first query).
POOLER_MEMORY_COLUMNS = (
    "pooler_rss_peak_bytes", "pooler_pss_peak_bytes", "pooler_processes_peak", "pooler_memory_samples",
    "pooler_start_rss_bytes", "pooler_start_pss_bytes", "pooler_start_processes", "pooler_rss_series_kib",
)  # fmt: skip
# pooler_rss_series_kib: the tree's RSS in KiB every POOLER_SERIES_STEP_S from the window's start, ';'-joined
# (the sustained-load experiment: warm-up, plateau, drift).
POOLER_SERIES_STEP_S = 10
POOLER_SERIES_PATTERN = r"^[0-9]{1,15}(;[0-9]{1,15})*$"


def encode_series(values: list[int]) -> str | None:
    return ";".join(str(value) for value in values) if values else None


def decode_series(cell: str | None) -> list[int]:
    return [int(value) for value in cell.split(";")] if cell else []


PROBES: dict[str, Probe] = {
    probe.name: probe
    for probe in (
        Probe(
            "backends",
            1.0,
            ("server_backends_max",),
            "the number of client backends on the server (admission control through a pooler)",
        ),
        Probe(
            "wait_events",
            0.1,
            ("wait_samples", "wait_events"),
            "what active client backends wait on, from pg_stat_activity",
        ),
        Probe(
            "memory",
            0.1,
            MEMORY_COLUMNS,
            "the server cgroup's memory counters and each backend's smaps_rollup, once all of the window's "
            "connections are connected and idle (polled until they are)",
        ),
        Probe(
            "memory_loaded",
            0.1,
            MEMORY_COLUMNS,
            "the same memory figures, read once halfway through the window while every one of its "
            "connections is connected and running queries (backends under load, not idle ones)",
        ),
        Probe(
            "pooler_memory",
            0.5,
            POOLER_MEMORY_COLUMNS,
            "RSS and PSS summed over the pooler's whole process tree (smaps_rollup) and its process count, "
            "peaks over the window; and the same once after the pooler started, before its first window",
            needs_pooler=True,
        ),
        Probe(
            "pools",
            0.25,
            ("pool_samples", "pool_cl_waiting_avg", "pool_cl_waiting_max", "pool_maxwait_ms_max"),
            "clients waiting for a server connection in the window's pool (PgBouncer's SHOW POOLS)",
            needs_pooler=True,
            needs_admin_console=True,
        ),
    )
}

ProbeName = str  # one of PROBES' keys; experiment.yaml is checked against them


# running=12;LWLock:WALWrite=3: a state (or wait event type:name) and how many times it was seen.
_STATE_COUNT = r"[A-Za-z][A-Za-z0-9_]*(:[A-Za-z0-9_]+)?=[0-9]{1,12}"
WAIT_EVENTS_PATTERN = rf"^{_STATE_COUNT}(;{_STATE_COUNT})*$"


# The wait-event cell: running=N;Type:Event=N;..., most frequent first. The harness writes it, validation
# checks it, the aggregation splits it: one encoding, here.
def encode_wait_events(counts: dict[str, int]) -> str | None:
    if not counts:
        return None
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ";".join(f"{state}={count}" for state, count in ordered)


def decode_wait_events(cell: str | None) -> dict[str, int]:
    """The inverse of encode_wait_events; an empty cell is no samples."""
    if not cell:
        return {}
    return {state: int(count) for state, count in (pair.rsplit("=", 1) for pair in cell.split(";"))}


# The probes' queries, shared by the harness's samplers and the check-it-yourself blocks (psql's \watch).
# Each runs from a connection of its own and leaves that connection out.
CLIENT_BACKENDS = f"backend_type = 'client backend' AND datname = '{BENCH_DB}' AND pid <> pg_backend_pid()"
BACKENDS_SQL = f"SELECT count(*) FROM pg_stat_activity WHERE {CLIENT_BACKENDS}"
BACKEND_PIDS_SQL = f"SELECT pid FROM pg_stat_activity WHERE {CLIENT_BACKENDS}"
# Per poll, each state an active client backend was in (running, or Type:Event) and how many were in it.
WAIT_EVENTS_SQL = (
    "SELECT coalesce(wait_event_type || ':' || wait_event, 'running'), count(*) FROM pg_stat_activity "
    f"WHERE state = 'active' AND {CLIENT_BACKENDS} GROUP BY 1"
)
IDLE_BACKENDS_SQL = f"SELECT pid, state FROM pg_stat_activity WHERE {CLIENT_BACKENDS}"
