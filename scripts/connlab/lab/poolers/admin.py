"""Reading a pooler's admin console (PgBouncer-style `SHOW POOLS`), shared by PgBouncer, Odyssey and pgcat.

All three answer `SHOW POOLS` with one row per (database, user) pool and PgBouncer's column names
(cl_active, cl_waiting, sv_active, sv_idle, ..., maxwait and maxwait_us; pgcat 1.2.0's, read from the
running binary: database, user, pool_mode, cl_idle, cl_active, cl_waiting, cl_cancel_req, sv_active,
sv_idle, sv_used, sv_tested, sv_login, maxwait, maxwait_us). The consoles speak the simple query protocol
only: a ClientCursor, never a server-side prepare. A console that does not answer within `ADMIN_TIMEOUT_S`
gives no counters (an empty dict), never an error: the counters are extra figures, not the measurement.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence

import psycopg

ADMIN_TIMEOUT_S = 2
POOL_COLUMNS = ("cl_active", "cl_waiting", "sv_active", "sv_idle", "sv_used", "sv_login")


def sum_pools(names: list[str], rows: list[tuple]) -> dict[str, float]:
    """Each known column summed over all pools; columns a pooler lacks are left out."""
    totals: dict[str, float] = {}
    for row in rows:
        pool = dict(zip(names, row, strict=True))
        for column in POOL_COLUMNS:
            if column in pool and pool[column] is not None:
                totals[column] = totals.get(column, 0) + float(pool[column])
    return totals


def query_pools(conninfo: str) -> dict[str, float] | None:
    """SHOW POOLS summed; None when the console did not answer."""
    with (
        contextlib.suppress(psycopg.Error),
        psycopg.connect(
            conninfo, autocommit=True, connect_timeout=ADMIN_TIMEOUT_S, cursor_factory=psycopg.ClientCursor
        ) as conn,
    ):
        cursor = conn.execute("SHOW POOLS")
        return sum_pools([column.name for column in cursor.description or []], cursor.fetchall())
    return None


def show_pools(conninfo: str) -> dict[str, float]:
    return query_pools(conninfo) or {}


def pool_waits(names: Sequence[str], rows: Iterable[Sequence[object]], database: str) -> tuple[int, float]:
    """SHOW POOLS, read: clients waiting in the pools of `database` (every user's), and the longest wait
    of the oldest waiting client in ms. maxwait is whole seconds; maxwait_us (PgBouncer 1.8 and later,
    Odyssey, pgcat) adds the microseconds."""
    waiting, longest_ms = 0, 0.0
    for row in rows:
        pool = dict(zip(names, row, strict=True))
        if pool["database"] != database:
            continue
        waiting += int(pool["cl_waiting"])  # type: ignore[call-overload]
        wait_ms = int(pool["maxwait"]) * 1000 + int(pool.get("maxwait_us") or 0) / 1000  # type: ignore[call-overload]
        longest_ms = max(longest_ms, wait_ms)
    return waiting, longest_ms


@contextlib.contextmanager
def watch_pools(conninfo: str, database: str) -> Iterator[Callable[[], tuple[int, float]]]:
    """A reader of `pool_waits` for `database`, on one console connection for the whole block (a window)."""
    with psycopg.connect(
        conninfo, autocommit=True, connect_timeout=ADMIN_TIMEOUT_S, cursor_factory=psycopg.ClientCursor
    ) as conn:

        def read() -> tuple[int, float]:
            cursor = conn.execute("SHOW POOLS")
            names = [column.name for column in cursor.description or []]
            return pool_waits(names, cursor.fetchall(), database)

        yield read
