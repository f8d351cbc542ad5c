"""The harness's pooler registry: experiment.yaml's `poolers: [{kind: <name>}]` and a workload's
`target: <name>` name an adapter here, `ADAPTER` in connlab/poolers/<kind>/adapter.py, one for each folder
the declarations' registry (connlab.contract.poolers.registry) finds.

What reads it: the harness's check of a plan and its poolers' start (connlab.lab.bench), the version
collection (connlab.lab.machine) and a named server's poolers (connlab.lab.remote.bench).
"""

from __future__ import annotations

import connlab.poolers
from connlab.contract.plugin_folders import parts
from connlab.contract.poolers.registry import CONFIGS
from connlab.lab.poolers.base import PoolerProcess


def discover() -> dict[str, type[PoolerProcess]]:
    """Each kind's adapter class; a folder whose adapter.py lacks ADAPTER, or whose ADAPTER is not a
    PoolerProcess named for the folder's kind, is refused in one line."""
    return parts(connlab.poolers, CONFIGS, "adapter", "ADAPTER", PoolerProcess)


POOLERS: dict[str, type[PoolerProcess]] = discover()
