"""What every stage knows of the poolers: the setup a pooler is given, and each pooler's configuration as
text, pure (no process, no database driver).

The harness's adapter (connlab/lab/poolers/<name>.py) writes exactly `config_files(setup)` before it
starts the pooler; the site's check-it-yourself block prints the same files with shell variables for the
paths and ports. So the site learns a pooler's configuration without importing the harness, and the two
cannot drift apart.

Adding a pooler: its config module here (config_files, snippet_start, ADMIN_DATABASE if it has one) with a
line in CONFIGS, and its adapter in connlab/lab/poolers/<name>.py with a line in POOLERS there. A pooler
with no config module here still runs in the harness; its check-it-yourself block says it has none.
"""

from __future__ import annotations

from connlab.contract.poolers import odyssey, pgbouncer, pgbouncer_pair, pgcat, pgpool
from connlab.contract.poolers.setup import PoolerConfig, PoolerSetup, PoolerUser

CONFIGS: dict[str, PoolerConfig] = {
    "pgbouncer": pgbouncer.CONFIG,
    pgbouncer_pair.KIND: pgbouncer_pair.CONFIG,
    "pgpool": pgpool.CONFIG,
    "odyssey": odyssey.CONFIG,
    "pgcat": pgcat.CONFIG,
}

__all__ = ["CONFIGS", "PoolerConfig", "PoolerSetup", "PoolerUser"]
