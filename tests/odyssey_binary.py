"""The Odyssey binary the tests run: the harness's own choice (ODYSSEY_BIN, PATH, build/odyssey from
`make odyssey`), else the shared tools folder beside the repository (../shared/tools/odyssey/bin/odyssey)
that a fresh clone's CI has. None where neither is here: the tests that need it then skip, saying so.

Odyssey runs as the postgres user: a binary under a folder that user cannot search is copied (mode 755)
into a folder it can.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from connlab.lab.poolers.base import PoolerUnavailable
from connlab.paths import REPO_ROOT
from connlab.poolers.odyssey.adapter import Odyssey

SHARED_BINARY = REPO_ROOT.parent / "shared" / "tools" / "odyssey" / "bin" / "odyssey"
SKIP_REASON = "no Odyssey here: set ODYSSEY_BIN, or run `make odyssey ODYSSEY_SRC=<tarball>`"


def runnable_by_anyone(path: Path) -> bool:
    """Whether every folder above `path` is searchable and the file executable by other users."""
    folders = [path.parent, *path.parent.parents]
    return bool(path.stat().st_mode & stat.S_IXOTH) and all(
        folder.stat().st_mode & stat.S_IXOTH for folder in folders
    )


def find_odyssey() -> Path | None:
    try:
        found = Path(Odyssey.binary())
    except PoolerUnavailable:
        found = SHARED_BINARY if SHARED_BINARY.is_file() and os.access(SHARED_BINARY, os.X_OK) else None
    if found is None or runnable_by_anyone(found):
        return found
    folder = Path(tempfile.mkdtemp(prefix="clt-odyssey-", dir="/tmp"))
    folder.chmod(0o755)
    copy = folder / "odyssey"
    shutil.copyfile(found, copy)
    copy.chmod(0o755)
    return copy
