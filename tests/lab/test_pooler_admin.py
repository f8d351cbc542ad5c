"""SHOW POOLS rows of a PgBouncer-style admin console summed into counters (Odyssey, pgcat)."""

from __future__ import annotations

from connlab.lab.poolers.admin import query_pools, show_pools, sum_pools

# Column names and one row per pool, as PgBouncer-style consoles print them.
NAMES = ["database", "user", "cl_active", "cl_waiting", "sv_active", "sv_idle", "sv_used", "maxwait"]
ROWS = [("bench", "bench", 8, 92, 8, 0, 0, 3), ("postgres", "postgres", 1, 0, 0, 1, 0, 0)]


def test_sum_pools_adds_each_known_column() -> None:
    assert sum_pools(NAMES, ROWS) == {
        "cl_active": 9.0, "cl_waiting": 92.0, "sv_active": 8.0, "sv_idle": 1.0, "sv_used": 0.0,
    }  # fmt: skip


def test_columns_a_pooler_lacks_are_left_out() -> None:
    assert sum_pools(["database", "cl_active"], [("bench", 3)]) == {"cl_active": 3.0}
    assert sum_pools(NAMES, []) == {}


def test_a_console_that_does_not_answer_gives_no_counters() -> None:
    closed = "host=127.0.0.1 port=1 user=nobody dbname=console connect_timeout=1"
    assert query_pools(closed) is None
    assert show_pools(closed) == {}
