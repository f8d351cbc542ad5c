"""The pooler registry: experiment.yaml's `poolers: [{kind: <name>}]` and a workload's `target: <name>`
name an adapter here. Adding a pooler: its adapter module beside this one (see base.py for the contract)
and one line below; its pure config module in connlab/contract/poolers/ gives the site its snippet."""

from __future__ import annotations

from connlab.lab.poolers.base import PoolerProcess
from connlab.lab.poolers.odyssey import Odyssey
from connlab.lab.poolers.pgbouncer import PgBouncer
from connlab.lab.poolers.pgbouncer_pair import PgBouncerPair
from connlab.lab.poolers.pgcat import PgCat
from connlab.lab.poolers.pgpool import PgPool

POOLERS: dict[str, type[PoolerProcess]] = {
    PgBouncer.name: PgBouncer,
    PgBouncerPair.name: PgBouncerPair,
    PgPool.name: PgPool,
    Odyssey.name: Odyssey,
    PgCat.name: PgCat,
}
