"""pooler_memory: the pooler's whole process tree (connlab.lab.pooler_memory): peaks over the window, and
one reading after its start, before any window ran (PgPool-II forks all its children then: the seed's
gigabyte before the first query)."""

from __future__ import annotations

from connlab.contract.column import Column
from connlab.contract.probes.declaration import Probe

# pooler_rss_series_kib: the tree's RSS in KiB every POOLER_SERIES_STEP_S from the window's start, ';'-joined
# (the sustained-load experiment: warm-up, plateau, drift).
POOLER_SERIES_STEP_S = 10
POOLER_SERIES_PATTERN = r"^[0-9]{1,15}(;[0-9]{1,15})*$"


def encode_series(values: list[int]) -> str | None:
    return ";".join(str(value) for value in values) if values else None


def decode_series(cell: str | None) -> list[int]:
    return [int(value) for value in cell.split(";")] if cell else []


PROBE = Probe(
    "pooler_memory",
    0.5,
    (
        Column(
            "pooler_rss_peak_bytes",
            "BIGINT",
            "peak RSS summed over the pooler's process tree during the window",
            required=False,
            added_later=True,
            minimum=0,
        ),
        Column(
            "pooler_pss_peak_bytes",
            "BIGINT",
            "peak PSS summed over the pooler's process tree during the window",
            required=False,
            added_later=True,
            minimum=0,
        ),
        Column(
            "pooler_processes_peak",
            "INTEGER",
            "most processes in the pooler's tree during the window",
            required=False,
            added_later=True,
            minimum=0,
        ),
        Column(
            "pooler_memory_samples",
            "INTEGER",
            "readings of the pooler's tree in the window (every 500 ms, and at its start and end)",
            required=False,
            added_later=True,
            minimum=0,
        ),
        Column(
            "pooler_start_rss_bytes",
            "BIGINT",
            "RSS of the pooler's tree once after its start, before any window (idle, no query yet)",
            required=False,
            added_later=True,
            minimum=0,
        ),
        Column(
            "pooler_start_pss_bytes",
            "BIGINT",
            "PSS of the pooler's tree once after its start, before any window",
            required=False,
            added_later=True,
            minimum=0,
        ),
        Column(
            "pooler_start_processes",
            "INTEGER",
            "processes in the pooler's tree once after its start, before any window",
            required=False,
            added_later=True,
            minimum=0,
        ),
        Column(
            "pooler_rss_series_kib",
            "VARCHAR",
            f"RSS of the pooler's tree in KiB every {POOLER_SERIES_STEP_S} s from the window's start, "
            "';'-joined",
            pattern=POOLER_SERIES_PATTERN,
            pattern_hint="whole KiB separated by ';', e.g. 6800;13400;13420",
            required=False,
            added_later=True,
        ),
    ),
    "RSS and PSS summed over the pooler's whole process tree (smaps_rollup) and its process count, "
    "peaks over the window; and the same once after the pooler started, before its first window",
    after="pool_maxwait_ms_max",
    needs_pooler=True,
)
