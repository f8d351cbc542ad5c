"""The server's counters read around each window (connlab.lab.counters): the checkpoint counters' view."""

from __future__ import annotations

import pytest

from connlab.lab.counters import activity_sql


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
