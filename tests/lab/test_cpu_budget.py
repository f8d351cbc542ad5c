"""CPU budgets: the split of cores between the server and pgbench, and live cgroup v1 budgets."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from connlab.errors import LabError
from connlab.lab.cpu_budget import (
    CFS_PERIOD_US,
    MEASURED_SHARES,
    cgroup_owner,
    cpuset_list,
    create_budget,
    detect_method,
    plan_cores,
)

if TYPE_CHECKING:
    from support.host import CgroupGuard

CGROUP_ROOT = Path("/sys/fs/cgroup")


def cgroups_of(output: str) -> dict[str, str]:
    """controller -> cgroup path, from the /proc/self/cgroup lines in a child's output."""
    groups: dict[str, str] = {}
    for line in output.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3 and parts[0].isdigit():
            for controller in parts[1].split(","):
                groups[controller] = parts[2]
    return groups


def affinity() -> list[int]:
    return sorted(os.sched_getaffinity(0))


@pytest.fixture
def two_cores() -> list[int]:
    cores = affinity()
    if len(cores) < 2:
        pytest.skip("needs at least two usable cores")
    return cores


def test_one_core_budget_on_two_cores(two_cores: list[int]) -> None:
    plan = plan_cores(1, online=2)
    assert plan.server_cores == (two_cores[0],)
    assert plan.client_cores == (two_cores[1],)
    assert plan.cpuset == str(two_cores[0])
    if two_cores[:2] == [0, 1]:
        assert (plan.server_cores, plan.client_cores) == ((0,), (1,))


def test_fractional_budget_takes_a_whole_core_for_its_cpuset(two_cores: list[int]) -> None:
    plan = plan_cores(0.5, online=2)
    assert plan.budget == 0.5
    assert plan.server_cores == (two_cores[0],)
    assert plan.client_cores == (two_cores[1],)


def test_server_and_client_never_share_a_core(two_cores: list[int]) -> None:
    online = len(two_cores)
    budgets = [b for b in [0.25, 0.5, 1, 1.5, *range(2, online)] if math.ceil(b) < online]
    assert budgets
    for budget in budgets:
        plan = plan_cores(budget, online=online)
        assert plan.client_cores, budget
        assert not set(plan.server_cores) & set(plan.client_cores)
        assert set(plan.server_cores) | set(plan.client_cores) <= set(two_cores)


@pytest.mark.parametrize("budget", [2, 2.0, 1.5, 3])
def test_budget_leaving_no_core_for_pgbench_is_refused(budget: float) -> None:
    with pytest.raises(LabError, match="leaves no core for pgbench"):
        plan_cores(budget, online=2)


@pytest.mark.parametrize("budget", [0, -1])
def test_budget_must_be_positive(budget: float) -> None:
    with pytest.raises(LabError, match="positive"):
        plan_cores(budget, online=2)


def test_affinity_smaller_than_the_core_count_still_leaves_pgbench_a_core(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under `taskset -c 0,1` (or a container cpuset) on a 4-core machine, os.cpu_count() says 4 but only
    two cores are usable: a 2-core server budget must be refused, not planned with no client core."""
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    try:
        plan = plan_cores(2)
    except LabError:
        return
    assert plan.client_cores, f"pgbench got no core: {plan}"
    assert not set(plan.server_cores) & set(plan.client_cores)


def test_fractional_budget_needs_a_cgroup(cgroup_guard: CgroupGuard) -> None:
    with pytest.raises(LabError, match="fractional server budget"):
        create_budget(0.5, f"{cgroup_guard.prefix}-taskset", method="taskset")
    assert cgroup_guard.added() == set()  # the guard sees only its own prefix's cgroups


def test_taskset_budget_with_whole_cores_creates_no_cgroup() -> None:
    budget = create_budget(1, f"connlab-test-taskset-{os.getpid()}", method="taskset")
    assert budget.method == "taskset"
    assert budget.cgroup_dirs == [] and budget.client_cgroup_dirs == []
    assert budget.server_cpu_seconds() is None
    budget.release()  # nothing to remove, must not fail


def test_unknown_method_is_refused() -> None:
    with pytest.raises(LabError, match="CPU_METHOD=fancy"):
        detect_method("fancy")


def test_method_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CPU_METHOD", "taskset")
    assert detect_method() == "taskset"


# -- live cgroup v1 budgets (root) ------------------------------------------------------------------------
@pytest.fixture
def budget_name(require_cgroup_v1: None, two_cores: list[int]) -> str:
    return f"connlab-test-xyz-{os.getpid()}"


def test_half_core_budget_writes_quota_and_cpuset(budget_name: str, two_cores: list[int]) -> None:
    budget = create_budget(0.5, budget_name)
    try:
        assert budget.method == "cgroup-v1"
        cpu = CGROUP_ROOT / "cpu" / budget_name
        cpuset = CGROUP_ROOT / "cpuset" / budget_name
        assert (cpu / "cpu.cfs_quota_us").read_text().strip() == "50000"
        assert (cpu / "cpu.cfs_period_us").read_text().strip() == str(CFS_PERIOD_US)
        assert (cpu / "cpu.shares").read_text().strip() == str(MEASURED_SHARES)
        assert (cpuset / "cpuset.cpus").read_text().strip() == str(two_cores[0])
        assert (cpuset / "cpuset.mems").read_text().strip() != ""
        client = CGROUP_ROOT / "cpu" / f"{budget_name}-client"
        assert budget.client_cgroup_dirs == [client]
        assert (client / "cpu.shares").read_text().strip() == str(MEASURED_SHARES)
        assert budget.server_cpu_seconds() == 0.0
    finally:
        budget.release()
    for folder in [*budget.cgroup_dirs, *budget.client_cgroup_dirs]:
        assert not folder.exists(), folder
    assert not list(CGROUP_ROOT.glob(f"*/{budget_name}*"))


def test_whole_core_budget_has_no_quota(budget_name: str) -> None:
    budget = create_budget(1, budget_name)
    try:
        assert (CGROUP_ROOT / "cpu" / budget_name / "cpu.cfs_quota_us").read_text().strip() == "-1"
    finally:
        budget.release()
    assert not list(CGROUP_ROOT.glob(f"*/{budget_name}*"))


def test_the_quota_changes_between_windows(budget_name: str) -> None:
    budget = create_budget(1, budget_name)
    quota = CGROUP_ROOT / "cpu" / budget_name / "cpu.cfs_quota_us"
    try:
        budget.set_cores(0.5)
        assert quota.read_text().strip() == "50000"
        budget.set_cores(1)
        assert quota.read_text().strip() == "-1"
        with pytest.raises(LabError, match="exceeds the server's 1 cores"):
            budget.set_cores(2)
    finally:
        budget.release()


def test_the_client_quota_is_set_and_lifted(budget_name: str) -> None:
    budget = create_budget(1, budget_name)
    quota = CGROUP_ROOT / "cpu" / f"{budget_name}-client" / "cpu.cfs_quota_us"
    try:
        assert quota.read_text().strip() == "-1"
        budget.set_client_cores(0.5)
        assert quota.read_text().strip() == "50000"
        budget.set_client_cores(None)
        assert quota.read_text().strip() == "-1"
    finally:
        budget.release()


def test_a_client_quota_without_cgroups_is_refused() -> None:
    budget = create_budget(1, f"connlab-test-taskset-{os.getpid()}", method="taskset")
    budget.set_client_cores(None)  # nothing asked, nothing to refuse
    with pytest.raises(LabError, match="a CPU quota for pgbench needs cgroups"):
        budget.set_client_cores(0.5)


@pytest.mark.process
def test_processes_enter_their_budget(budget_name: str, two_cores: list[int]) -> None:
    budget = create_budget(0.5, budget_name)
    script = "import os; print(sorted(os.sched_getaffinity(0))); print(open('/proc/self/cgroup').read())"
    try:
        server = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            preexec_fn=budget.enter,
            timeout=30,
        )
        client = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            preexec_fn=budget.enter_client,
            timeout=30,
        )
        assert server.stdout.splitlines()[0] == str([two_cores[0]])
        server_groups = cgroups_of(server.stdout)
        for controller in ("cpu", "cpuset", "cpuacct"):
            assert server_groups[controller] == f"/{budget_name}", controller
        assert client.stdout.splitlines()[0] == str(list(budget.plan.client_cores))
        assert cgroups_of(client.stdout)["cpu"] == f"/{budget_name}-client"
        assert (budget.server_cpu_seconds() or 0.0) > 0.0  # the server child's CPU time was counted
    finally:
        budget.release()
    assert not list(CGROUP_ROOT.glob(f"*/{budget_name}*"))


@pytest.mark.process
@pytest.mark.usefixtures("require_cgroup_v1")
def test_releasing_a_budget_kills_what_is_left_in_it(cgroup_guard: CgroupGuard) -> None:
    """An initdb cut short or a backend orphaned by a killed postmaster must not keep the cgroup (and
    itself) alive after the run: release kills it, then removes the folders."""
    budget = create_budget(1, "connlab-test-release")
    straggler = subprocess.Popen(["sleep", "60"], preexec_fn=budget.enter)
    try:
        budget.release()
        assert straggler.wait(timeout=10) == -9
    finally:
        if straggler.poll() is None:
            straggler.kill()
    assert cgroup_guard.added() == set()


# -- the poolers' own cgroup ------------------------------------------------------------------------------
def test_a_cpuset_list_writes_runs_of_cores_as_ranges() -> None:
    assert cpuset_list((0,)) == "0"
    assert cpuset_list((1, 0, 2, 5, 7, 6)) == "0-2,5-7"
    assert cpuset_list((0, 4, 5), " ") == "0 4-5"  # as a row's pooler_cpus: no comma in a CSV cell
    assert cgroup_owner("connlab-x-1234-pooler") == 1234


def test_the_pooler_budget_without_cgroups_is_the_servers_cores() -> None:
    budget = create_budget(1, f"connlab-test-taskset-{os.getpid()}", method="taskset")
    assert budget.pooler is not None
    assert budget.pooler.cgroup_dirs == [] and budget.pooler.cpu_seconds() is None
    assert budget.pooler.cores == budget.plan.server_cores and budget.pooler.shares_server_cores
    assert budget.pooler.cpu_budget == 1.0


@pytest.mark.process
def test_a_pooler_enters_a_cgroup_of_its_own_counted_apart_from_the_server(
    budget_name: str, two_cores: list[int]
) -> None:
    """The pooler's CPU time is its own cgroup's, never the server's: on the server's cores, with the
    server's weight, and removed with the budget."""
    budget = create_budget(1, budget_name)
    assert budget.pooler is not None
    script = "sum(range(3_000_000)); print(sorted(__import__('os').sched_getaffinity(0)));"
    script += "print(open('/proc/self/cgroup').read())"
    try:
        leaf = f"{budget_name}-pooler"
        assert (CGROUP_ROOT / "cpuset" / leaf / "cpuset.cpus").read_text().strip() == str(two_cores[0])
        assert (CGROUP_ROOT / "cpu" / leaf / "cpu.shares").read_text().strip() == str(MEASURED_SHARES)
        pooler = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True,
            preexec_fn=budget.pooler.enter, timeout=30,
        )  # fmt: skip
        assert pooler.stdout.splitlines()[0] == str([two_cores[0]])
        groups = cgroups_of(pooler.stdout)
        for controller in ("cpu", "cpuset", "cpuacct"):
            assert groups[controller] == f"/{leaf}", controller
        assert (budget.pooler.cpu_seconds() or 0.0) > 0.0
        assert budget.server_cpu_seconds() == 0.0  # nothing of the pooler's counted as the server's
        assert (budget.pooler.cpus, budget.pooler.shares_server_cores) == (str(two_cores[0]), True)
    finally:
        budget.release()
    assert not list(CGROUP_ROOT.glob(f"*/{budget_name}*"))
