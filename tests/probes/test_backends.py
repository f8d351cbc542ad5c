"""The backends probe tells the window's pooler's server connections from another pooler's by client port
(or by the unix socket, for a pooler with no TCP connection to the server): a pooler that keeps its pool
between windows (Odyssey, PgPool-II) still counts its own backends."""

from __future__ import annotations

import socket

import psutil

from connlab.lab.window import foreign_pids, server_client_ports


def test_backends_on_the_poolers_ports_are_its_own_and_the_rest_foreign() -> None:
    rows = [(101, 40001), (102, 40002), (201, 50001), (301, -1), (302, None)]
    # A pooler over TCP (Odyssey): its ports are its own; another's port and the unix socket's are not.
    assert foreign_pids(rows, frozenset({40001, 40002})) == {201, 301, 302}
    # A pooler with no TCP connection to the server (PgPool-II on the socket): the socket's are its own.
    assert foreign_pids(rows, frozenset()) == {101, 102, 201}


def test_a_processs_connections_to_the_server_port_give_the_client_ports() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server, socket.create_server(("127.0.0.1", 0)) as unused:
        server_port, unused_port = server.getsockname()[1], unused.getsockname()[1]
        with socket.create_connection(("127.0.0.1", server_port)) as client:
            accepted, _ = server.accept()
            with accepted:  # the server's side of it: its local port is the server's, not a client port
                assert server_client_ports([psutil.Process()], server_port) == {client.getsockname()[1]}
                assert server_client_ports([psutil.Process()], unused_port) == set()
