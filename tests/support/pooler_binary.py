"""The binary of a pooler Debian packages none of (Odyssey, pgcat) that the tests run: the harness's own
choice (its variable, PATH, build/<pooler> from `make poolers`), else the shared tools folder beside the
repository (../shared/tools/<pooler>/bin/<binary>) that a fresh clone's CI has. None where neither is here:
the tests that need it then skip, saying so.

The poolers run as the postgres user: a binary under a folder that user cannot search is copied (mode 755)
into a folder it can.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from connlab.lab.poolers.base import PoolerProcess, PoolerUnavailable
from connlab.paths import REPO_ROOT

SHARED_TOOLS = REPO_ROOT.parent / "shared" / "tools"


def skip_reason(adapter: type[PoolerProcess]) -> str:
    return (
        f"no {adapter.label} here: set {adapter.env_var}, or run `make poolers POOLER_TOOLS=<tools folder>`"
    )


def runnable_by_anyone(path: Path) -> bool:
    """Whether every folder above `path` is searchable and the file executable by other users."""
    folders = [path.parent, *path.parent.parents]
    return bool(path.stat().st_mode & stat.S_IXOTH) and all(
        folder.stat().st_mode & stat.S_IXOTH for folder in folders
    )


def find_pooler(adapter: type[PoolerProcess]) -> Path | None:
    shared = SHARED_TOOLS / adapter.name / "bin" / adapter.binary_name
    try:
        found: Path | None = Path(adapter.binary())
    except PoolerUnavailable:
        found = shared if shared.is_file() and os.access(shared, os.X_OK) else None
    if found is None or runnable_by_anyone(found):
        return found
    folder = Path(tempfile.mkdtemp(prefix=f"clt-{adapter.name}-", dir="/tmp"))
    folder.chmod(0o755)
    copy = folder / adapter.binary_name
    shutil.copyfile(found, copy)
    copy.chmod(0o755)
    return copy
