"""The fixed pooler setup the config golden files are written from, and the comparison with them, shared by
tests/poolers/test_pooler_adapters.py and tests/poolers/test_odyssey_adapter.py (golden files under
tests/golden/poolers/).

Regenerate the golden files after a deliberate change with CONNLAB_UPDATE_GOLDEN=1, then read the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

from connlab.contract.poolers.setup import PoolerSetup, PoolerUser

VERIFIER = "SCRAM-SHA-256$4096:Z29sZGVuLXNhbHQ=$c3RvcmVkLWtleQ==:c2VydmVyLWtleQ=="
PASSWORD = "golden-password-not-a-secret"
BENCH = PoolerUser("bench", verifier=VERIFIER, password=PASSWORD)
TRUST = PoolerUser("postgres")


def golden_setup(name: str, users: list[PoolerUser], **settings: object) -> PoolerSetup:
    return PoolerSetup(
        root=Path(f"/tmp/connlab-golden/{name}"), port=6500, server_host="/tmp/connlab-golden/sock",
        server_port=5500, databases=["bench", "postgres"], pool_size=8, users=users, settings=dict(settings),
    )  # fmt: skip


def assert_matches_golden(files: dict[str, str], folder: Path) -> None:
    """The files a pooler writes are its golden folder's, no more and no fewer (rewritten first with
    CONNLAB_UPDATE_GOLDEN)."""
    if os.environ.get("CONNLAB_UPDATE_GOLDEN"):
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (folder / name).write_text(text)
    assert sorted(files) == sorted(path.name for path in folder.iterdir())  # no stale golden file
    for name, text in files.items():
        assert text == (folder / name).read_text(), f"{folder.name}/{name} differs from its golden file"
