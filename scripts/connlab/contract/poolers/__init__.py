"""What every stage knows of the poolers: the setup a pooler is given (`setup`), and the registry of the
pooler folders (`registry`: connlab/poolers/<kind>/, each with its pure configuration and declaration).

The harness's adapter (connlab/poolers/<kind>/adapter.py) writes exactly `config_files(setup)` before it
starts the pooler; the site's check-it-yourself block prints the same files with shell variables for the
paths and ports. So the site learns a pooler's configuration without importing the harness, and the two
cannot drift apart.

This package never imports its registry: a pooler's config.py imports `setup` from here, and a scan started
by that import would meet the config half-imported. Whoever reads the folders imports
connlab.contract.poolers.registry (CONFIGS, VERSIONED).
"""

from __future__ import annotations

from connlab.contract.poolers.setup import PoolerConfig, PoolerSetup, PoolerUser

__all__ = ["PoolerConfig", "PoolerSetup", "PoolerUser"]
