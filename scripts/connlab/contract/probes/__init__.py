"""What every stage knows of the in-window probes: what a probe declares (`declaration`) and the registry
of the probe folders (`registry`: connlab/probes/<name>/, each with its declaration, its sampler and its
check-it-yourself snippet)."""

from __future__ import annotations

from connlab.contract.probes.declaration import BACKENDS_SQL, CLIENT_BACKENDS, Probe


def __getattr__(name: str) -> object:
    # PROBES is the registry's, read on first use rather than imported here: a probe's probe.py imports
    # this package (for `declaration`), and a scan started by that import would meet it half-imported.
    if name == "PROBES":
        from connlab.contract.probes.registry import PROBES

        return PROBES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["BACKENDS_SQL", "CLIENT_BACKENDS", "PROBES", "Probe"]
