"""Reading a pooler's admin console (PgBouncer-style `SHOW POOLS`), shared by Odyssey and pgcat.

Both answer `SHOW POOLS` with one row per (database, user) pool and PgBouncer's column names (cl_active,
cl_waiting, sv_active, sv_idle, ...). The consoles speak the simple query protocol only: a ClientCursor,
never a server-side prepare. A console that does not answer within `ADMIN_TIMEOUT_S` gives no counters
(an empty dict), never an error: the counters are extra figures, not the measurement.
"""

from __future__ import annotations

import contextlib

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
