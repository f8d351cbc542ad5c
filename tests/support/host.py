"""What this machine lets a test do (root, a writable cgroup v1 hierarchy), and the cgroups a test's runs
leave behind: the require_* and cgroup_guard fixtures (conftest) are made of these."""

from __future__ import annotations

import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")


def is_root() -> bool:
    return os.geteuid() == 0


def cgroup_v1_writable() -> bool:
    return is_root() and all(
        (CGROUP_ROOT / name / "cgroup.procs").exists() for name in ("cpuset", "cpu", "cpuacct")
    )


def connlab_cgroups(prefix: str = "connlab") -> set[Path]:
    """Every cgroup folder named <prefix>-* (v1 controllers and the v2 root); every connlab-* by default."""
    found = set(CGROUP_ROOT.glob(f"*/{prefix}-*")) | set(CGROUP_ROOT.glob(f"{prefix}-*"))
    return {path for path in found if path.is_dir()}


class CgroupGuard:
    """The cgroups of this test's prefix that existed when it started, to tell which ones it added. Only its
    own prefix: a measurement or another test running beside it adds cgroups of its own meanwhile, and the
    clean-up below must never remove those (an empty client cgroup between two windows is still in use)."""

    def __init__(self, prefix: str = "connlab") -> None:
        self.prefix = prefix
        self.before = connlab_cgroups(prefix)

    def added(self) -> set[Path]:
        return connlab_cgroups(self.prefix) - self.before
