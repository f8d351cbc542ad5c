"""A pooler's setup from an experiment's plan: the same for the harness and the check-it-yourself block,
which differ only in where things are (a folder and ports, or shell variables) and in each role's secret."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from connlab.contract.experiment import Plan
from connlab.contract.names import BENCH_DB, SERVER_USER
from connlab.contract.poolers.setup import PoolerSetup, PoolerUser
from connlab.contract.spec_parts import Role


def plan_setup(
    plan: Plan,
    instance: str,
    *,
    root: Path,
    port: int | str,
    server_host: str,
    server_port: int | str,
    secret: Callable[[Role], str],
    password: Callable[[Role], str | None] = lambda role: None,
) -> PoolerSetup:
    """One pg_hba-style line per role (trust or SCRAM, as on the server) with the server's superuser first;
    `secret` gives what the auth file holds for a role (the server's SCRAM verifier in the harness, the
    run's password in the block); `password` the role's password for poolers that log in to the server with
    it (PgPool-II, Odyssey, pgcat): the run's, in memory only. Extra pools: one per pool size the workloads
    through it name."""
    spec = plan.spec.pooler(instance)
    assert spec is not None, instance
    roles = [Role(name=SERVER_USER, auth="trust"), *plan.spec.roles]
    return PoolerSetup(
        root=root, port=port, server_host=server_host, server_port=server_port,
        databases=[BENCH_DB, "postgres"], pool_size=spec.pool_size, pool_mode=spec.pool_mode,
        users=[PoolerUser(role.name, secret(role), password(role)) for role in roles],
        hba_lines=[line for role in roles for line in role.hba_lines()], settings=dict(spec.settings),
        pool_sizes=sorted({w.pool_size for w in plan.spec.workloads
                           if isinstance(w.pool_size, int) and w.target == instance}),
    )  # fmt: skip
