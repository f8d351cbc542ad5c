"""The harness's probe registry: experiment.yaml's `probes: [<name>]` name a sampler here, `SAMPLER` in
connlab/probes/<name>/sampler.py, one for each folder the declarations' registry
(connlab.contract.probes.registry) finds. What reads it: the window that starts them (connlab.lab.window).
"""

from __future__ import annotations

import connlab.probes
from connlab.contract.plugin_folders import parts
from connlab.contract.probes.registry import PROBES
from connlab.lab.samplers.base import ThreadedProbe


def discover() -> dict[str, type[ThreadedProbe]]:
    """Each probe's sampler class; a folder whose sampler.py lacks SAMPLER, or whose SAMPLER is not a
    ThreadedProbe named for the folder's probe, is refused in one line."""
    return parts(connlab.probes, PROBES, "sampler", "SAMPLER", ThreadedProbe)


SAMPLERS: dict[str, type[ThreadedProbe]] = discover()
