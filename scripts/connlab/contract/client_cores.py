"""pgbench's cores and threads at each point of a plan: the rule the methodology page states.

The server's budget comes first: whole cores for its cpuset (a fractional budget is a quota inside them).
The poolers run on the server's cores (connlab.lab.cpu_budget.PoolerBudget), so they take none of their own
today; a pooler given cores of its own would take them next. pgbench may use every core left, and at each
point it takes one core per client, up to all of them, with one thread (-j) per core:

- a point with many clients, or a connection per transaction (-C, each client's thread doing a whole
  handshake per transaction), gets every core left: on a bigger machine that is more client CPU, and a
  point the client bound on two cores may be cured there;
- a point with fewer clients than cores left gets one core per client: pgbench never runs more threads
  than clients, and a thread uses one core at most, so the window's client-bound check
  (connlab.lab.counters.window_metrics) compares pgbench's CPU with the cores it could use, not with cores
  it had no thread for;
- a workload that names its threads (`jobs:`, the client-bound experiment's "two threads per core", one
  thread to hold every client of a refusal) keeps them, on the cores of its point.

On a 2-core machine with the server on one core, one core is left: every point gets it, as before. Rows
record what each point used (client_cores, jobs, client_cpu_budget).
"""

from __future__ import annotations

import math

from connlab.contract.spec_parts import ServerSpec

# The methodology page's examples: machines of these sizes with an experiment's default server budget
# ("half"), at these client counts.
EXAMPLE_MACHINE_CORES = (2, 16, 64)
EXAMPLE_CLIENT_COUNTS = (1, 10, 50, 400)


def cores_left(online: int, server_budget: float, pooler_cores: int = 0) -> int:
    """The cores a machine leaves pgbench: all it has, less the server's whole cores and the pooler's own."""
    return online - math.ceil(server_budget) - pooler_cores


def point_client_cores(clients: int, left: int) -> int:
    """pgbench's cores at a point: one per client, up to every core left (at least one)."""
    return max(1, min(clients, left))


def point_jobs(clients: int, cores: int, workload_jobs: int | None = None) -> int:
    """pgbench -j at a point: one thread per core (or the workload's own count), never more than clients."""
    return max(1, min(workload_jobs or cores, clients))


def examples(
    machines: tuple[int, ...] = EXAMPLE_MACHINE_CORES, clients: tuple[int, ...] = EXAMPLE_CLIENT_COUNTS
) -> list[dict[str, object]]:
    """Per machine size: the server's cores under the default budget, the cores left, and pgbench's cores
    (= its threads) at each example client count."""
    rows = []
    for online in machines:
        server = ServerSpec().cores(online)
        left = cores_left(online, server)
        rows.append(
            {
                "machine_cores": online,
                "server_cores": server,
                "cores_left": left,
                "client_cores": {count: point_client_cores(count, left) for count in clients},
            }
        )
    return rows
