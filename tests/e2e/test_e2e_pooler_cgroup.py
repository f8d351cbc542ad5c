"""End to end: the pooler runs in a cgroup of its own, so its CPU is its own and never the server's.

A tiny pgbouncer run on a throwaway cluster: while it measures, PgBouncer's processes sit in the run's
`-pooler` cgroup and the server's in the server's, the pooler's counter advances with pooled windows, and
each row states the pooler's cores; after the run, and after a Ctrl-C in a window, no cgroup is left.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from connlab.lab.cpu_budget import CGROUP_ROOT, POOLER_SUFFIX
from support.lab_watch import assert_complete, in_a_window, lab_processes, postmaster, start_run, wait_for

if TYPE_CHECKING:
    from support.host import CgroupGuard

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.usefixtures("require_root", "require_postgres", "require_cgroup_v1"),
]

EXPERIMENT = "pgbouncer"
STOP_BOUND_S = 30


def cpuacct_group(pid: int) -> str:
    """The cpuacct cgroup of a process, from /proc/<pid>/cgroup (v1: `id:controllers:path`)."""
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "cpuacct" in controllers.split(","):
            return path
    raise AssertionError(f"process {pid} is in no cpuacct cgroup")


def pooler_usage_ns(group: str) -> int | None:
    """The pooler cgroup's CPU counter; None once the folder is gone."""
    try:
        return int((CGROUP_ROOT / "cpuacct" / group.lstrip("/") / "cpuacct.usage").read_text())
    except OSError:
        return None


def pooler_and_server_groups(env: dict[str, str]) -> tuple[str, set[str]]:
    """PgBouncer's cpuacct cgroup (the same for all its processes) and the server's processes' ones."""
    poolers = lab_processes(env, "pgbouncer")
    assert poolers, "no PgBouncer of this run is running"
    [pooler_group] = {cpuacct_group(process.pid) for process in poolers}
    server = postmaster(env)
    server_groups = {cpuacct_group(process.pid) for process in [server, *server.children()]}
    return pooler_group, server_groups


def test_the_pooler_is_counted_in_a_cgroup_of_its_own(
    connlab_env: dict[str, str], shared_tmp: Path, cgroup_guard: CgroupGuard
) -> None:
    log = shared_tmp / "run.log"
    process = start_run(connlab_env, EXPERIMENT, log)
    usages: list[int] = []
    try:
        wait_for(process, in_a_window(process), "a window", log)
        pooler_group, server_groups = pooler_and_server_groups(connlab_env)
        assert pooler_group.endswith(POOLER_SUFFIX), pooler_group
        # The server's CPU counter holds no process of the pooler's: the pooler is not counted as the server.
        assert pooler_group not in server_groups, (pooler_group, server_groups)
        assert all(not group.endswith(POOLER_SUFFIX) for group in server_groups), server_groups
        while process.poll() is None:
            usage = pooler_usage_ns(pooler_group)
            if usage is not None:
                usages.append(usage)
            time.sleep(0.2)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert process.returncode == 0, log.read_text()[-2000:]
    # Pooled windows cost the pooler CPU, and its own cgroup counted it.
    assert usages and usages[-1] > usages[0], usages[:3] + usages[-3:]
    rows = assert_complete(connlab_env, EXPERIMENT)
    pooled = [row for row in rows if row["target"] == "pgbouncer"]
    assert pooled and all(float(row["pooler_cpu_cores"]) > 0 for row in pooled)
    # Its budget stated per window: the server's cores, shared with it (a 2-core machine has no third).
    assert {(row["pooler_cpus"], row["pooler_shares_server_cores"]) for row in pooled} == {
        (str(min(os.sched_getaffinity(0))), "true")
    }
    assert all(float(row["pooler_cpu_budget"]) == 1.0 for row in pooled)
    assert pooler_usage_ns(pooler_group) is None, "the pooler's cgroup outlived the run"
    assert cgroup_guard.added() == set()


def test_ctrl_c_in_a_pooled_run_removes_the_poolers_cgroup(
    connlab_env: dict[str, str], shared_tmp: Path, cgroup_guard: CgroupGuard
) -> None:
    log = shared_tmp / "run.log"
    process = start_run(connlab_env, EXPERIMENT, log)
    try:
        wait_for(process, in_a_window(process), "a window", log)
        pooler_group, _ = pooler_and_server_groups(connlab_env)
        assert pooler_usage_ns(pooler_group) is not None
        os.killpg(process.pid, signal.SIGINT)
        status = process.wait(timeout=STOP_BOUND_S)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert status == 130, log.read_text()[-2000:]
    assert pooler_usage_ns(pooler_group) is None, "the pooler's cgroup outlived the Ctrl-C"
    assert cgroup_guard.added() == set()
    assert lab_processes(connlab_env, "pgbouncer") == []
