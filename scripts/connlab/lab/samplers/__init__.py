"""What the harness's in-window samplers share: the contract and the window's context (`base`). The
samplers themselves are connlab/probes/<name>/sampler.py, found by the registry (`registry`: SAMPLERS).

This package imports nothing: a sampler imports `base` from here, and a scan started by that import would
meet the sampler half-imported. Whoever starts a window's probes imports connlab.lab.samplers.registry.
"""
