"""memory: the server cgroup's memory counters and each client backend's smaps_rollup, read once all of the
window's connections are connected and idle."""

from __future__ import annotations

from connlab.contract.column import Column
from connlab.contract.probes.declaration import CLIENT_BACKENDS, Probe

COLUMNS = (
    Column(
        "mem_backends",
        "INTEGER",
        "client backends whose memory was measured",
        required=False,
        added_later=True,
        minimum=0,
    ),
    Column(
        "mem_cgroup_usage_bytes",
        "BIGINT",
        "the server cgroup's memory.usage_in_bytes",
        required=False,
        added_later=True,
        minimum=0,
    ),
    Column(
        "mem_cgroup_rss_bytes",
        "BIGINT",
        "the server cgroup's anonymous memory (memory.stat total_rss)",
        required=False,
        added_later=True,
        minimum=0,
    ),
    Column(
        "mem_cgroup_cache_bytes",
        "BIGINT",
        "the server cgroup's page cache and shared memory (total_cache)",
        required=False,
        added_later=True,
        minimum=0,
    ),
    Column(
        "mem_rss_sum_bytes",
        "BIGINT",
        "sum of the client backends' Rss (smaps_rollup)",
        required=False,
        added_later=True,
        minimum=0,
    ),
    Column(
        "mem_pss_sum_bytes",
        "BIGINT",
        "sum of the client backends' Pss (smaps_rollup)",
        required=False,
        added_later=True,
        minimum=0,
    ),
    Column(
        "mem_anon_rss_sum_bytes",
        "BIGINT",
        "sum of the client backends' RssAnon (/proc/PID/status)",
        required=False,
        added_later=True,
        minimum=0,
    ),
)

# Each client backend and its state: the probe waits until all of the window's are there (and idle).
IDLE_BACKENDS_SQL = f"SELECT pid, state FROM pg_stat_activity WHERE {CLIENT_BACKENDS}"

PROBE = Probe(
    "memory",
    0.1,
    COLUMNS,
    "the server cgroup's memory counters and each backend's smaps_rollup, once all of the window's "
    "connections are connected and idle (polled until they are)",
    after="wait_events",
    query=IDLE_BACKENDS_SQL,
)
