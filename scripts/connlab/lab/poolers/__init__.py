"""What the harness's pooler adapters share: the contract (`base`) and the admin-console reader (`admin`);
the feature answers are the contract's (connlab.contract.poolers.features). The adapters themselves are
connlab/poolers/<kind>/adapter.py, found by the registry (`registry`: POOLERS).

This package imports nothing: an adapter imports `base` from here, and a scan started by that import would
meet the adapter half-imported. Whoever runs a pooler imports connlab.lab.poolers.registry.
"""
