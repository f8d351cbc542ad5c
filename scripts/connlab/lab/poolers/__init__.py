"""The harness's pooler registry: experiment.yaml's `poolers: [{kind: <name>}]` and a workload's
`target: <name>` name an adapter here, `ADAPTER` in connlab/poolers/<kind>/adapter.py, one for each folder
the declarations' registry (connlab.contract.poolers.registry) finds. This package holds what the adapters
share: the contract (`base`), the admin-console reader (`admin`) and the feature answers (`features`)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from connlab.lab.poolers.base import PoolerProcess


def adapters() -> dict[str, type[PoolerProcess]]:
    """Each kind's adapter class; a folder whose adapter.py lacks ADAPTER, or whose ADAPTER's name is not
    the folder's kind, is refused in one line."""
    from connlab.contract.poolers.registry import CONFIGS, package_of
    from connlab.errors import LabError

    found: dict[str, type[PoolerProcess]] = {}
    for kind in CONFIGS:
        module = importlib.import_module(f"{package_of(kind)}.adapter")
        adapter = getattr(module, "ADAPTER", None)
        if getattr(adapter, "name", None) != kind:
            raise LabError(f"{module.__file__}: ADAPTER: missing, or its name is not {kind!r}")
        found[kind] = adapter  # type: ignore[assignment]
    return found


def __getattr__(name: str) -> object:
    # POOLERS is built on first use: an adapter imports this package (for `base`), and a scan started by
    # that import would meet the adapter half-imported.
    if name == "POOLERS":
        globals()["POOLERS"] = pooler_classes = adapters()
        return pooler_classes
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
