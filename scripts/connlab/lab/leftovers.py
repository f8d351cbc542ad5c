"""What a run leaves behind when it cannot clean up (SIGKILL, a crash): server processes working in a
cluster's folder, stopped or orphaned backends, cluster folders and cgroups of runs that are gone. The
next run, or a stopping one, removes them."""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

import psutil

from connlab.lab.cpu_budget import CGROUP_ROOT
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
    if not LAB_DIR.exists():
        return
    for pidfile in LAB_DIR.glob("*/data/postmaster.pid"):
        data_dir = pidfile.parent
        if _owner_alive(data_dir.parent):
            continue  # another harness process is using it right now
        try:
            pid = int(pidfile.read_text().splitlines()[0])
            alive = psutil.pid_exists(pid) and "postgres" in psutil.Process(pid).name()
        except (OSError, ValueError, IndexError, psutil.Error):
            alive = False
        if alive:
            kill_postmaster(data_dir)
        shutil.rmtree(data_dir.parent, ignore_errors=True)
        remove_stale_cgroups(data_dir.parent.name)


OWNER_FILE = "owner.pid"


def remove_stale_cgroups(cluster_name: str) -> None:
    """The CPU budget folders of a killed run (named connlab-<cluster>), once their tasks are gone."""
    for folder in CGROUP_ROOT.glob(f"*/connlab-{cluster_name}*"):
        with contextlib.suppress(OSError):
            folder.rmdir()


def _owner_alive(root: Path) -> bool:
    """Whether the harness process that created this cluster folder still runs."""
    try:
        owner = int((root / OWNER_FILE).read_text())
    except (OSError, ValueError):
        return False
    return owner != os.getpid() and psutil.pid_exists(owner)
