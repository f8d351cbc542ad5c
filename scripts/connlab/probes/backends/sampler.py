"""backends: the most client backends the server had on the benchmark database during the window, counted
once a second: how many connections the server really saw (admission control through a pooler). Backends
that another pooler kept from earlier windows (WindowContext.foreign_backends) are not counted.

Which pooler a backend belongs to is told by its client port: a pooler's server connections over TCP come
from its own processes to the server's port, and pg_stat_activity shows each backend's client_port. A
connection over the unix socket has no port (client_port -1, or NULL): those are the window's pooler's
where it reaches the server that way, which is where it holds no TCP connection to it (PgPool-II on the
server's socket; Odyssey and pgcat always speak TCP, and Odyssey keeps the login the start check made). A
pooler that keeps its pool open between windows (Odyssey, PgPool-II) then still counts its own backends,
and only another pooler's are left out.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any

import psutil

from connlab.contract.probes.declaration import CLIENT_BACKENDS
from connlab.lab.samplers.base import ThreadedProbe

BACKEND_PORTS_SQL = f"SELECT pid, client_port FROM pg_stat_activity WHERE {CLIENT_BACKENDS}"


def server_client_ports(processes: Iterable[psutil.Process], server_port: int) -> frozenset[int]:
    """The local ports of these processes' TCP connections to `server_port`: the client_port the server
    shows for each of their backends."""
    ports: set[int] = set()
    for process in processes:
        with contextlib.suppress(psutil.Error):
            for connection in process.net_connections(kind="inet"):
                if connection.raddr and connection.raddr.port == server_port:
                    ports.add(connection.laddr.port)
    return frozenset(ports)


def foreign_pids(rows: Iterable[tuple[int, int | None]], own_ports: frozenset[int]) -> frozenset[int]:
    """The backends (pid, client_port) that are not the window's pooler's: over TCP from a port not its own,
    or over the unix socket where the pooler speaks TCP (it holds TCP connections to the server)."""
    speaks_tcp = bool(own_ports)
    return frozenset(
        pid for pid, port in rows if (speaks_tcp if port is None or port < 0 else port not in own_ports)
    )


class BackendSampler(ThreadedProbe):
    name = "backends"
    max_backends = 0

    def poll(self, session: Any) -> bool:
        pids = {row[0] for row in session.execute(self.probe.query).fetchall()}
        self.max_backends = max(self.max_backends, len(pids - self.context.foreign_backends))
        return True

    def figures(self) -> dict[str, object]:
        return {"server_backends_max": self.max_backends}


SAMPLER = BackendSampler
