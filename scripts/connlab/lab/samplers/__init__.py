"""The samplers of the in-window probes, by the names experiment.yaml lists (connlab.contract.probes).
Adding a probe: its sampler module beside this one (a ThreadedProbe) and one line below."""

from __future__ import annotations

from connlab.lab.samplers.backends import BackendSampler
from connlab.lab.samplers.base import ThreadedProbe, WindowContext
from connlab.lab.samplers.memory import IdleMemoryProbe, LoadedMemoryProbe
from connlab.lab.samplers.pooler_memory import PoolerMemoryProbe
from connlab.lab.samplers.pools import PoolSampler
from connlab.lab.samplers.wait_events import WaitEventSampler

SAMPLERS: dict[str, type[ThreadedProbe]] = {
    sampler.name: sampler
    for sampler in (
        BackendSampler,
        WaitEventSampler,
        IdleMemoryProbe,
        LoadedMemoryProbe,
        PoolSampler,
        PoolerMemoryProbe,
    )
}

__all__ = ["SAMPLERS", "ThreadedProbe", "WindowContext"]
