"""connlab.data.cursor_pool: tasks on threads with a DuckDB cursor each; leaving early stops them."""

from __future__ import annotations

import threading
import time

import duckdb
import pytest

from connlab.data.cursor_pool import CursorPool


def test_each_thread_runs_its_tasks_on_a_cursor_of_its_own() -> None:
    con = duckdb.connect()
    seen: dict[int, set[int]] = {}

    def task(cursor: duckdb.DuckDBPyConnection, number: int) -> int:
        seen.setdefault(threading.get_ident(), set()).add(id(cursor))
        # A temporary table is the connection's own: another thread's would clash with this name.
        cursor.execute(f"CREATE OR REPLACE TEMP TABLE mine AS SELECT {number} AS n")
        time.sleep(0.01)
        row = cursor.execute("SELECT n FROM mine").fetchone()
        return row[0] if row else -1

    with CursorPool(con, 2) as pool:
        jobs = [pool.submit(task, number) for number in range(20)]
        assert [job.result() for job in jobs] == list(range(20))
    assert all(len(cursors) == 1 for cursors in seen.values())
    assert len({cursor for cursors in seen.values() for cursor in cursors}) == len(seen)


def test_leaving_early_interrupts_the_running_statements() -> None:
    con = duckdb.connect()
    started = threading.Event()

    def endless(cursor: duckdb.DuckDBPyConnection) -> None:
        started.set()
        cursor.execute("SELECT count(*) FROM range(1000000000000) a")

    begun = time.monotonic()
    with pytest.raises(KeyboardInterrupt), CursorPool(con, 2) as pool:
        job = pool.submit(endless)
        started.wait(10)
        time.sleep(0.2)
        raise KeyboardInterrupt
    assert time.monotonic() - begun < 10, "the statement ran on after the block was left"
    assert isinstance(job.exception(), duckdb.InterruptException)
