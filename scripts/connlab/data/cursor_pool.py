"""DuckDB statements on several threads at once, each thread on a cursor of its own."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

import duckdb

T = TypeVar("T")


class CursorPool:
    """Threads that each run their tasks on a DuckDB cursor of their own (a statement runs inside DuckDB
    without Python's lock, so tasks that are mostly small statements run side by side). Leaving the block
    early (an error, Ctrl-C) cancels the tasks not started and interrupts the running statements."""

    def __init__(self, con: duckdb.DuckDBPyConnection, workers: int) -> None:
        self._con = con
        self._local = threading.local()
        self._cursors: list[duckdb.DuckDBPyConnection] = []
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="connlab-aggregate")

    def submit(self, task: Callable[..., T], *args: object) -> Future[T]:
        """task(cursor, *args) on a worker."""
        return self._pool.submit(self._run, task, *args)

    def _run(self, task: Callable[..., T], *args: object) -> T:
        if not hasattr(self._local, "cursor"):
            self._local.cursor = self._con.cursor()
            self._cursors.append(self._local.cursor)
        return task(self._local.cursor, *args)

    def __enter__(self) -> CursorPool:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            for cursor in list(self._cursors):
                cursor.interrupt()
        self._pool.shutdown(wait=True)
        for cursor in self._cursors:
            cursor.close()
