"""wait_events: pg_stat_activity polled from a connection of its own while the window runs; per poll, each
state an active client backend was in (running, or Type:Event) and how many were in it."""

from __future__ import annotations

from connlab.contract.column import Column
from connlab.contract.probes.declaration import CLIENT_BACKENDS, Probe, every_ms

INTERVAL_S = 0.1

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


PROBE = Probe(
    "wait_events",
    INTERVAL_S,
    (
        Column(
            "wait_samples",
            "INTEGER",
            f"polls of pg_stat_activity, one every {every_ms(INTERVAL_S)} ms",
            required=False,
            added_later=True,
            minimum=0,
        ),
        Column(
            "wait_events",
            "VARCHAR",
            "active client backends seen over those polls, per state: running=N;Type:Event=N;... "
            "(empty when polls ran and none saw an active backend: zero samples, not a missing figure)",
            pattern=WAIT_EVENTS_PATTERN,
            pattern_hint="state=count pairs separated by ';', e.g. running=12;LWLock:WALWrite=3",
            required=False,
            added_later=True,
        ),
    ),
    "what active client backends wait on, from pg_stat_activity",
    after="server_backends_max",
    query=(
        "SELECT coalesce(wait_event_type || ':' || wait_event, 'running'), count(*) FROM pg_stat_activity "
        f"WHERE state = 'active' AND {CLIENT_BACKENDS} GROUP BY 1"
    ),
)
