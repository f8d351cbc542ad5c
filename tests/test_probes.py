"""The wait-event cell's encoding (connlab/probes/wait_events/probe.py), read back; the checkpoint
counters' view."""

from __future__ import annotations

import pytest

from connlab.lab.counters import activity_sql
from connlab.probes.wait_events.probe import decode_wait_events, encode_wait_events


def test_states_are_written_most_frequent_first_and_read_back() -> None:
    counts = {"running": 3, "LWLock:WALWrite": 12, "Lock:transactionid": 3}
    cell = encode_wait_events(counts)
    assert cell == "LWLock:WALWrite=12;Lock:transactionid=3;running=3"
    assert decode_wait_events(cell) == counts


@pytest.mark.parametrize("cell", ["", None])
def test_an_empty_cell_is_no_samples(cell: str | None) -> None:
    """Polls ran and none found an active backend (short transactions fall between polls)."""
    assert decode_wait_events(cell) == {}
    assert encode_wait_events({}) is None


@pytest.mark.parametrize(
    ("server_version", "view"),
    [
        ("15.18 (Debian 15.18-0+deb12u1)", "pg_stat_bgwriter"),
        ("16.15", "pg_stat_bgwriter"),
        ("17.11", "pg_stat_checkpointer"),
        ("18.6", "pg_stat_checkpointer"),
    ],
)
def test_checkpoints_are_read_where_the_version_keeps_them(server_version: str, view: str) -> None:
    """PostgreSQL 17 moved the checkpoint counters out of pg_stat_bgwriter."""
    assert f"FROM {view}" in activity_sql(server_version)
