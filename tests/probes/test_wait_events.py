"""The wait-event cell's encoding (connlab/probes/wait_events/probe.py), read back."""

from __future__ import annotations

import pytest

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
