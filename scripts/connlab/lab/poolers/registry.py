"""The harness's pooler registry: experiment.yaml's `poolers: [{kind: <name>}]` and a workload's
`target: <name>` name an adapter here, `ADAPTER` in connlab/poolers/<kind>/adapter.py, one for each folder
the declarations' registry (connlab.contract.poolers.registry) finds.

What reads it: the harness's check of a plan and its poolers' start (connlab.lab.bench), the version
collection (connlab.lab.machine) and a named server's poolers (connlab.lab.remote.bench).
"""

from __future__ import annotations

import importlib

from connlab.contract.poolers.registry import CONFIGS, package_of
from connlab.errors import LabError
from connlab.lab.poolers.base import PoolerProcess


def discover() -> dict[str, type[PoolerProcess]]:
    """Each kind's adapter class; a folder whose adapter.py lacks ADAPTER, or whose ADAPTER's name is not
    the folder's kind, is refused in one line."""
    found: dict[str, type[PoolerProcess]] = {}
    for kind in CONFIGS:
        module = importlib.import_module(f"{package_of(kind)}.adapter")
        adapter = getattr(module, "ADAPTER", None)
        if getattr(adapter, "name", None) != kind:
            raise LabError(f"{module.__file__}: ADAPTER: missing, or its name is not {kind!r}")
        found[kind] = adapter  # type: ignore[assignment]
    return found


POOLERS: dict[str, type[PoolerProcess]] = discover()
