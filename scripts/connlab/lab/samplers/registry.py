"""The harness's probe registry: experiment.yaml's `probes: [<name>]` name a sampler here, `SAMPLER` in
connlab/probes/<name>/sampler.py, one for each folder the declarations' registry
(connlab.contract.probes.registry) finds. What reads it: the window that starts them (connlab.lab.window).
"""

from __future__ import annotations

import importlib

from connlab.contract.probes.registry import PROBES, package_of
from connlab.errors import LabError
from connlab.lab.samplers.base import ThreadedProbe


def discover() -> dict[str, type[ThreadedProbe]]:
    """Each probe's sampler class; a folder whose sampler.py lacks SAMPLER, or whose SAMPLER's name is not
    the folder's probe, is refused in one line."""
    found: dict[str, type[ThreadedProbe]] = {}
    for name in PROBES:
        module = importlib.import_module(f"{package_of(name)}.sampler")
        sampler = getattr(module, "SAMPLER", None)
        if not (isinstance(sampler, type) and issubclass(sampler, ThreadedProbe)) or sampler.name != name:
            raise LabError(f"{module.__file__}: SAMPLER: missing, or not a ThreadedProbe named {name!r}")
        found[name] = sampler
    return found


SAMPLERS: dict[str, type[ThreadedProbe]] = discover()
