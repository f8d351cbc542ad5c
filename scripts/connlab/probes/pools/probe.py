"""pools: the pooler's queue polled during the window (SHOW POOLS on its admin console): the clients waiting
for a server connection in the window's pool, and how long the oldest of them waited."""

from __future__ import annotations

from connlab.contract.column import Column
from connlab.contract.probes.declaration import Probe, every_ms

INTERVAL_S = 0.25

PROBE = Probe(
    "pools",
    INTERVAL_S,
    (
        Column(
            "pool_samples",
            "INTEGER",
            f"polls of the pooler's SHOW POOLS, one every {every_ms(INTERVAL_S)} ms",
            required=False,
            added_later=True,
            minimum=0,
        ),
        Column(
            "pool_cl_waiting_avg",
            "DOUBLE",
            "clients waiting for a server connection, mean over the polls",
            required=False,
            added_later=True,
            minimum=0,
        ),
        Column(
            "pool_cl_waiting_max",
            "INTEGER",
            "clients waiting for a server connection, most in one poll",
            required=False,
            added_later=True,
            minimum=0,
        ),
        Column(
            "pool_maxwait_ms_max",
            "DOUBLE",
            "longest wait of the oldest waiting client, ms",
            required=False,
            added_later=True,
            minimum=0,
        ),
    ),
    "clients waiting for a server connection in the window's pool (PgBouncer's SHOW POOLS)",
    after="pool_size",
    needs_pooler=True,
    needs_admin_console=True,
)
