"""A plan for a named server: whether the experiment can run against one at all, the windows its
max_connections leaves room for, and what the run will ask of it (said before it starts, for the user to
confirm)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

from connlab.contract.estimate import plan_estimate_s
from connlab.contract.experiment import Plan, Workload
from connlab.lab.remote.target import ServerUrl

# Experiments whose question is what a server does past max_connections: their windows run as planned, and
# the server's refusal (pgbench's FATAL, recorded in the row) is the result. Every other experiment asks how
# a server serves its clients, so a window the server would refuse is left out instead, and said so.
ASKS_ABOUT_REFUSAL = frozenset({"too-many-clients"})
# A confirmation names the experiments up to this many, and counts them past it.
MAX_NAMED = 4


def server_connections(plan: Plan, workload: Workload, clients: int) -> int:
    """Connections a window opens on the server: its clients, or through a pooler its pool."""
    if workload.target == "direct":
        return clients
    if isinstance(workload.pool_size, int):
        return workload.pool_size
    pooler = plan.spec.pooler(workload.target)
    return pooler.pool_size if pooler is not None else clients


def not_for_a_named_server(plan: Plan) -> str | None:
    """Why an experiment cannot run against a named server, or None."""
    if plan.spec.server.versions:
        return f"{plan.experiment} compares PostgreSQL builds the harness starts, not --server"
    if plan.spec.uses_tls:
        return f"{plan.experiment} measures TLS; TLS to a named server is not set up"
    return None


def fit_to_server(plan: Plan, room: int) -> tuple[Plan, list[str]]:
    """The plan without the windows that need more server connections than `room`, and one line per
    workload trimmed; the plan as it is for an experiment about refusal (ASKS_ABOUT_REFUSAL)."""
    if plan.experiment in ASKS_ABOUT_REFUSAL:
        return plan, []
    kept: list[Workload] = []
    notes: list[str] = []
    for workload in plan.spec.workloads:
        counts = [c for c in plan.client_counts if workload.runs_at(c)]
        fitting = [c for c in counts if server_connections(plan, workload, c) <= room]
        if fitting == counts:
            kept.append(workload)
            continue
        left_out = ", ".join(str(c) for c in counts if c not in fitting)
        notes.append(f"{workload.id} at {left_out} client(s)")
        if fitting:
            kept.append(workload.model_copy(update={"clients": fitting}))
    spec = plan.spec.model_copy(update={"workloads": kept})
    return dataclasses.replace(plan, spec=spec), notes


def trim_message(url: ServerUrl, max_connections: int, room: int, notes: list[str]) -> str:
    return (
        f"{url.address}: max_connections {max_connections} leaves room for {room} of this run's connections; "
        f"left out, needing more: {'; '.join(notes)}"
    )


def confirmation(plans: Sequence[Plan], url: ServerUrl, stated_cores: float) -> str:
    """What the runs will do to the server, for the user to confirm once for them all: duration (estimated
    as the progress line's ETA is), load and what each creates."""
    windows = [window for plan in plans for window in plan.windows()]
    seconds = sum(map(plan_estimate_s, plans))
    most = max((w.clients for w in windows), default=0)
    named = len(plans) <= MAX_NAMED
    names = ", ".join(plan.experiment for plan in plans) if named else f"{len(plans)} experiments"
    profiles = _span(plan.profile_name for plan in plans)
    durations = _span(plan.profile.duration_s for plan in plans)
    who = "it creates" if len(plans) == 1 else "each creates"
    return (
        f"{names} ({profiles}) will load {url.shown} (stated {stated_cores:g} cores) for about "
        f"{max(seconds / 60, 1):.0f} min: {len(windows)} windows of {durations} s, up to {most} clients at "
        f"once, read-write; {who} database bench (pgbench -i, scale {_span(plan.scale for plan in plans)}) "
        f"and drops it at the end"
    )


def _span(values: Iterable[Any]) -> str:
    """One value, or the smallest and largest: '2', '2-15'."""
    distinct = sorted(set(values))
    return str(distinct[0]) if len(distinct) == 1 else f"{distinct[0]}-{distinct[-1]}"
