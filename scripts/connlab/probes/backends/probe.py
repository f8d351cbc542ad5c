"""backends: the number of client backends the server saw in the window (admission control through a
pooler), counted once a second."""

from __future__ import annotations

from connlab.contract.column import Column
from connlab.contract.probes.declaration import CLIENT_BACKENDS, Probe

PROBE = Probe(
    "backends",
    1.0,
    (
        Column(
            "server_backends_max",
            "INTEGER",
            "most client backends seen on the server during the window",
            required=False,
            added_later=True,
        ),
    ),
    "the number of client backends on the server (admission control through a pooler)",
    after="clients_connected",
    query=f"SELECT pid FROM pg_stat_activity WHERE {CLIENT_BACKENDS}",
)
