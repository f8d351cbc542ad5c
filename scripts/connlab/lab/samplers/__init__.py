"""The harness's probe registry: experiment.yaml's `probes: [<name>]` name a sampler here, `SAMPLER` in
connlab/probes/<name>/sampler.py, one for each folder the declarations' registry
(connlab.contract.probes.registry) finds. This package holds what the samplers share: the contract and the
window's context (`base`)."""

from __future__ import annotations

import importlib

from connlab.lab.samplers.base import ThreadedProbe, WindowContext


def samplers() -> dict[str, type[ThreadedProbe]]:
    """Each probe's sampler class; a folder whose sampler.py lacks SAMPLER, or whose SAMPLER's name is not
    the folder's probe, is refused in one line."""
    from connlab.contract.probes.registry import PROBES, package_of
    from connlab.errors import LabError

    found: dict[str, type[ThreadedProbe]] = {}
    for name in PROBES:
        module = importlib.import_module(f"{package_of(name)}.sampler")
        sampler = getattr(module, "SAMPLER", None)
        if not (isinstance(sampler, type) and issubclass(sampler, ThreadedProbe)) or sampler.name != name:
            raise LabError(f"{module.__file__}: SAMPLER: missing, or not a ThreadedProbe named {name!r}")
        found[name] = sampler
    return found


def __getattr__(name: str) -> object:
    # SAMPLERS is built on first use: a sampler imports this package (for `base`), and a scan started by
    # that import would meet the sampler half-imported.
    if name == "SAMPLERS":
        globals()["SAMPLERS"] = found = samplers()
        return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["SAMPLERS", "ThreadedProbe", "WindowContext"]
