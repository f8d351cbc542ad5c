"""What every stage knows of the in-window probes: what a probe declares (`declaration`) and the registry
of the probe folders (`registry`: connlab/probes/<name>/, each with its declaration, its sampler and its
check-it-yourself snippet).

This package never imports its registry: a probe's probe.py imports `declaration` from here, and a scan
started by that import would meet it half-imported. Whoever reads the folders imports
connlab.contract.probes.registry (PROBES, SNIPPETS).
"""

from __future__ import annotations

from connlab.contract.probes.declaration import BACKENDS_SQL, CLIENT_BACKENDS, Probe

__all__ = ["BACKENDS_SQL", "CLIENT_BACKENDS", "Probe"]
