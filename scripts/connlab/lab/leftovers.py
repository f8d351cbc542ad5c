"""What a run leaves behind when it cannot clean up (SIGKILL, a crash): server processes working in a
cluster's folder, stopped or orphaned backends, cluster folders and cgroups of runs that are gone. The
next run, or a stopping one, removes them.

Only ever a dead run's: two runs can be alive at once (the test suite's, each in a build folder of its own,
beside each other and beside a measurement), and removing a live run's empty client cgroup between two of
its windows makes its next pgbench die in preexec_fn. So a cluster folder is a leftover only when the
process that made it (its owner file: PID and start time) is gone, and its cgroups are removed by the exact
name it recorded; a cgroup no folder points to (the run died before its folder existed, or its build folder
was deleted) is removed only when empty and when the PID that ends its name is gone
(cpu_budget.budget_name).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

import psutil

from connlab.errors import LabError
from connlab.lab.cpu_budget import CGROUP_PREFIX, CGROUP_ROOT, budget_folders, cgroup_owner, remove_cgroup
from connlab.paths import LAB_DIR


def _server_processes(data_dir: Path) -> list[psutil.Process]:
    """Every process working in this data directory: the postmaster and its children run there, and so
    do backends orphaned by a killed postmaster."""
    found = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if Path(process.cwd()) == data_dir:
                found.append(process)
    return found


def resume_stopped(data_dir: Path) -> None:
    for process in _server_processes(data_dir):
        with contextlib.suppress(psutil.Error):
            process.resume()


def kill_orphans(data_dir: Path) -> None:
    """Backends left by a postmaster that died: they would run on, holding memory and the data dir."""
    processes = _server_processes(data_dir)
    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(processes, timeout=10)


def kill_postmaster(data_dir: Path) -> None:
    """Last resort when pg_ctl cannot stop a server: SIGKILL the postmaster and its children."""
    try:
        pid = int((data_dir / "postmaster.pid").read_text().splitlines()[0])
        proc = psutil.Process(pid)
        for process in [*proc.children(recursive=True), proc]:
            with contextlib.suppress(psutil.Error):
                process.kill()
        psutil.wait_procs([proc], timeout=10)
    except (OSError, ValueError, IndexError, psutil.Error):
        pass


def stop_stale_clusters() -> None:
    """A run killed with SIGKILL cannot clean up after itself; the next run does it instead."""
    if LAB_DIR.exists():
        for pidfile in LAB_DIR.glob("*/data/postmaster.pid"):
            root = pidfile.parent.parent
            if _owner_alive(root):
                continue  # another harness process is using it right now (or this one)
            try:
                pid = int(pidfile.read_text().splitlines()[0])
                alive = psutil.pid_exists(pid) and "postgres" in psutil.Process(pid).name()
            except (OSError, ValueError, IndexError, psutil.Error):
                alive = False
            if alive:
                kill_postmaster(pidfile.parent)
            budget = _recorded_budget(root)
            shutil.rmtree(root, ignore_errors=True)
            remove_stale_cgroups(budget)
    remove_orphaned_cgroups()


OWNER_FILE = "owner.pid"
# The name of the cluster's CPU budget (its cgroups), written beside the owner file.
BUDGET_FILE = "budget.name"


def mark_owner(root: Path, budget: str | None) -> None:
    """Record in a new cluster folder which process made it (PID and start time: a PID alone may be reused
    by another process once this one is gone) and the name of its cgroups."""
    me = psutil.Process()
    (root / OWNER_FILE).write_text(f"{me.pid} {me.create_time()}")
    if budget is not None:
        (root / BUDGET_FILE).write_text(budget)


def remove_stale_cgroups(budget: str | None) -> None:
    """The CPU budget folders of a dead run, by their exact name: what is still inside is that run's own
    (a backend orphaned by its killed postmaster), so it is killed first, as the run itself would have."""
    if budget is None:
        return
    for folder in budget_folders(budget):
        with contextlib.suppress(LabError, OSError):
            remove_cgroup(folder)


def remove_orphaned_cgroups() -> None:
    """Empty cgroups of this prefix whose run is gone but that no cluster folder points to. Only rmdir:
    the kernel refuses to remove a cgroup with tasks in it, so nothing running is ever touched."""
    for folder in {*CGROUP_ROOT.glob(f"{CGROUP_PREFIX}-*"), *CGROUP_ROOT.glob(f"*/{CGROUP_PREFIX}-*")}:
        owner = cgroup_owner(folder.name)
        if owner is None or owner == os.getpid() or psutil.pid_exists(owner):
            continue
        with contextlib.suppress(OSError):
            folder.rmdir()


def _recorded_budget(root: Path) -> str | None:
    try:
        return (root / BUDGET_FILE).read_text().strip() or None
    except OSError:
        return None


def _owner_alive(root: Path) -> bool:
    """Whether the harness process that made this cluster folder still runs (this one included). The start
    time tells a live owner from a later process that got its PID (in a container, a rerun often does)."""
    try:
        pid, *started = (root / OWNER_FILE).read_text().split()
        process = psutil.Process(int(pid))
        return not started or abs(process.create_time() - float(started[0])) < 1
    except (OSError, ValueError, psutil.Error):
        return False
