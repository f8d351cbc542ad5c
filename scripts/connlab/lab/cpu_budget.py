"""CPU budgets: which cores (and what share of them) the server may use, the client's cores, the pooler's.

The server and pgbench must never share a CPU budget, or a saturated client would pose as a saturated
server. Three methods, tried in order: cgroup v1 (cpuset + cpu quota + cpuacct), cgroup v2 (cpuset.cpus +
cpu.max), taskset-style affinity. Only the cgroup methods can express a fractional budget such as half a
core (what `docker --cpus=0.5` does), and only they give the server's CPU time exactly.

A pooler runs in a cgroup of its own (PoolerBudget), so the server's CPU time never includes the pooler's
and the pooler's is counted whole (its exited children too). It runs on the server's cores: pgbench's are
the client's alone, and a machine with no core to spare has none for it; each window's row says so.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from connlab.contract.client_cores import cores_left
from connlab.contract.names import CFS_PERIOD_US
from connlab.errors import LabError

CGROUP_ROOT = Path("/sys/fs/cgroup")
# A run's cgroups are named <prefix>-<cluster>-<PID of the run> (budget_name), its client's and its
# poolers' the same plus "-client" and "-pooler". CONNLAB_CGROUP_PREFIX is for the test suite: each test
# gives its runs a prefix of its own, so that its cgroup checks look only at its own runs' folders, never
# at those of a measurement or of another test running beside it (tests/conftest.py, cgroup_guard).
CGROUP_PREFIX = os.environ.get("CONNLAB_CGROUP_PREFIX", "connlab")
CGROUP_NAME = re.compile(r"[A-Za-z0-9_.-]+")
# The PID that ends a run's cgroup name (before "-client" or "-pooler"): whose the folder is, for the
# leftover clean-up.
CGROUP_OWNER = re.compile(r"-(\d+)(?:-client|-pooler)?$")
CLIENT_SUFFIX, POOLER_SUFFIX = "-client", "-pooler"
# The server and pgbench get 8x the default CPU weight, so whatever else runs on the machine yields to
# the measurement instead of sharing its cores evenly with it.
MEASURED_SHARES = 8192
METHODS = ("cgroup-v1", "cgroup-v2", "taskset")


@dataclass(frozen=True)
class CpuPlan:
    """Which cores the server and the client get for a server budget of `budget` cores."""

    budget: float
    server_cores: tuple[int, ...]
    client_cores: tuple[int, ...]

    @property
    def cpuset(self) -> str:
        return ",".join(str(core) for core in self.server_cores)


def plan_cores(budget: float, online: int | None = None) -> CpuPlan:
    """Give the server the first ceil(budget) cores and the client all the others; each window's pgbench
    takes as many of them as its point needs (connlab.contract.client_cores).

    A fractional budget still needs whole cores for its cpuset; the quota then trims it.
    """
    # Cores this process may use (taskset or a container may allow fewer than the machine has).
    cores = tuple(sorted(os.sched_getaffinity(0)))
    online = min(online or len(cores), len(cores))
    if budget <= 0:
        raise LabError(f"server CPU budget must be positive, got {budget}")
    server_count = math.ceil(budget)
    if cores_left(online, budget) < 1:
        raise LabError(
            f"server CPU budget {budget} leaves no core for pgbench on this {online}-core machine; "
            f"lower server.cpu_budget in the experiment file"
        )
    cores = cores[:online]
    return CpuPlan(budget, cores[:server_count], cores[server_count:])


def cpuset_list(cores: tuple[int, ...], separator: str = ",") -> str:
    """Cores as a cpuset list, runs of consecutive cores as ranges: (0, 1, 2, 5) -> "0-2,5"."""
    runs: list[list[int]] = []
    for core in sorted(cores):
        if runs and core == runs[-1][-1] + 1:
            runs[-1].append(core)
        else:
            runs.append([core])
    return separator.join(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


@dataclass
class PoolerBudget:
    """The poolers' own cgroup (none with taskset): their cores, and their CPU time apart from the server's.
    PoolerSetup.budget: enter() moves a pooler's process in before it execs, and all it forks stays in."""

    cores: tuple[int, ...]
    server_cores: tuple[int, ...]
    method: str
    cgroup_dirs: list[Path] = field(default_factory=list)

    @property
    def cpus(self) -> str:
        """Its cores as a row's pooler_cpus gives them: a cpuset list with spaces for commas."""
        return cpuset_list(self.cores, " ")

    @property
    def cpu_budget(self) -> float:
        """The cores the poolers may use: their cpuset's, with no quota of their own."""
        return float(len(self.cores))

    @property
    def shares_server_cores(self) -> bool:
        return bool(set(self.cores) & set(self.server_cores))

    def enter(self) -> None:
        pid = str(os.getpid())
        for folder in self.cgroup_dirs:
            (folder / "cgroup.procs").write_text(pid)
        os.sched_setaffinity(0, self.cores)

    def cpu_seconds(self) -> float | None:
        """CPU time of everything the poolers ran in their cgroup; None without one (taskset)."""
        if self.method == "cgroup-v1":
            folder = next(folder for folder in self.cgroup_dirs if (folder / "cpuacct.usage").exists())
            return int((folder / "cpuacct.usage").read_text()) / 1e9
        if self.method == "cgroup-v2":
            return parse_keyed_counters((self.cgroup_dirs[0] / "cpu.stat").read_text())["usage_usec"] / 1e6
        return None


@dataclass
class CpuBudget:
    """A live budget: cgroup folders (or an affinity mask) the server's processes are placed into."""

    plan: CpuPlan
    method: str
    name: str
    cgroup_dirs: list[Path] = field(default_factory=list)
    client_cgroup_dirs: list[Path] = field(default_factory=list)
    pooler: PoolerBudget | None = None

    def __post_init__(self) -> None:
        self.current = self.plan.budget  # the cores the quota allows right now
        self.client_quota: float | None = None  # pgbench's CPU quota in cores; None: no quota

    def enter_client(self) -> None:
        """Called in pgbench's child process before exec: the client's cores and weight."""
        pid = str(os.getpid())
        for folder in self.client_cgroup_dirs:
            (folder / "cgroup.procs").write_text(pid)
        os.sched_setaffinity(0, self.plan.client_cores)

    def enter(self) -> None:
        """Called in the child process before exec: every process it forks inherits the budget."""
        pid = str(os.getpid())
        for folder in self.cgroup_dirs:
            (folder / "cgroup.procs").write_text(pid)
        os.sched_setaffinity(0, self.plan.server_cores)

    def set_cores(self, cores: float) -> None:
        """Change the server's CPU quota between windows (up to the cores of its cpuset); the running
        server keeps its processes, only the time they may use changes."""
        if cores == self.current:
            return
        if cores > len(self.plan.server_cores):
            raise LabError(
                f"a budget of {cores} cores exceeds the server's {len(self.plan.server_cores)} cores"
            )
        whole = cores == len(self.plan.server_cores)
        if self.method == "cgroup-v1":
            quota = -1 if whole else round(cores * CFS_PERIOD_US)
            _write(CGROUP_ROOT / "cpu" / self.name / "cpu.cfs_quota_us", str(quota))
        elif self.method == "cgroup-v2":
            quota = "max" if whole else str(round(cores * CFS_PERIOD_US))
            _write(self.cgroup_dirs[0] / "cpu.max", f"{quota} {CFS_PERIOD_US}")
        elif not whole:
            raise LabError(
                f"a budget of {cores} cores needs a cgroup CPU quota; taskset gives whole cores only"
            )
        self.current = cores

    def set_client_cores(self, cores: float | None) -> None:
        """A CPU quota for pgbench (None: its pinned cores, no quota), to test whether the client limits
        a point. Only cgroup v1 gives the client a cgroup of its own."""
        if cores == self.client_quota:
            return
        if not self.client_cgroup_dirs:
            raise LabError(
                f"a CPU quota for pgbench needs cgroups (this run uses {self.method}); run as root on a "
                f"machine with writable cgroups"
            )
        folder = self.client_cgroup_dirs[0]
        if self.method == "cgroup-v2":
            quota = "max" if cores is None else str(round(cores * CFS_PERIOD_US))
            _write(folder / "cpu.max", f"{quota} {CFS_PERIOD_US}")
        else:
            _write(folder / "cpu.cfs_quota_us", str(-1 if cores is None else round(cores * CFS_PERIOD_US)))
        self.client_quota = cores

    def server_cpu_seconds(self) -> float | None:
        """CPU time used by everything in the server's cgroup; None where only affinity is set."""
        if self.method == "cgroup-v1":
            usage = CGROUP_ROOT / "cpuacct" / self.name / "cpuacct.usage"
            return int(usage.read_text()) / 1e9
        if self.method == "cgroup-v2":
            return parse_keyed_counters((self.cgroup_dirs[0] / "cpu.stat").read_text())["usage_usec"] / 1e6
        return None

    def memory_stat(self) -> dict[str, int]:
        """The server cgroup's memory counters (v1 memory.stat plus usage_in_bytes); empty where the
        server has no memory cgroup (cgroup v2 without the controller, taskset)."""
        folder = CGROUP_ROOT / "memory" / self.name
        if self.method != "cgroup-v1" or not folder.exists():
            return {}
        counters = parse_keyed_counters((folder / "memory.stat").read_text())
        counters["usage_in_bytes"] = int((folder / "memory.usage_in_bytes").read_text())
        return counters

    def release(self) -> None:
        """Remove the cgroup folders; call after the server has stopped. Whatever is still inside is
        this run's own (an initdb cut short, a backend orphaned by a killed postmaster): it is killed
        first, since a cgroup with tasks in it cannot be removed and they must not outlive the run."""
        pooler_dirs = self.pooler.cgroup_dirs if self.pooler else []
        for folder in [*reversed(self.cgroup_dirs), *self.client_cgroup_dirs, *pooler_dirs]:
            remove_cgroup(folder)


def parse_keyed_counters(text: str) -> dict[str, int]:
    """A cgroup's flat keyed file (cpu.stat, memory.stat, v1 and v2 alike): one `name value` a line."""
    return {key: int(value) for key, value in (line.split() for line in text.splitlines() if line.strip())}


def _cgroup_pids(folder: Path) -> list[int]:
    try:
        return [int(pid) for pid in (folder / "cgroup.procs").read_text().split()]
    except OSError:
        return []


def remove_cgroup(folder: Path, timeout_s: float = 10) -> None:
    """Kill the tasks left in a cgroup folder, then remove it (retrying while they exit)."""
    deadline = time.monotonic() + timeout_s
    while True:
        for pid in _cgroup_pids(folder):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as error:
            # EBUSY while killed tasks are still exiting; past the deadline, say so rather than hide it.
            if time.monotonic() > deadline:
                raise LabError(f"could not remove cgroup {folder}: {error.strerror}") from error
            time.sleep(0.05)


def _write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError as error:
        raise LabError(
            f"cannot write {path}: {error.strerror}; run as root, or set CPU_METHOD=taskset "
            f"(whole cores only)"
        ) from error


def _v1_available() -> bool:
    return all((CGROUP_ROOT / ctrl / "cgroup.procs").exists() for ctrl in ("cpuset", "cpu", "cpuacct"))


def _v2_available() -> bool:
    controllers = CGROUP_ROOT / "cgroup.controllers"
    if not controllers.exists():
        return False
    enabled = (CGROUP_ROOT / "cgroup.subtree_control").read_text().split()
    return {"cpu", "cpuset"} <= set(enabled)


def _make_v1_cgroups(controllers: tuple[str, ...], leaf: str) -> list[Path]:
    """The leaf's folder in each of these v1 controllers that this machine mounts."""
    folders = []
    for controller in controllers:
        if not (CGROUP_ROOT / controller).exists():
            continue
        folder = CGROUP_ROOT / controller / leaf
        try:
            folder.mkdir(exist_ok=True)
        except OSError as error:
            raise LabError(
                f"cannot create cgroup {folder}: {error.strerror}; run as root, or set CPU_METHOD=taskset"
            ) from error
        folders.append(folder)
    return folders


def _set_v1_cpuset(leaf: str, cpus: str) -> None:
    cpuset = CGROUP_ROOT / "cpuset" / leaf
    # cpuset.mems must be set before any task may join, or the join fails with ENOSPC.
    mems = (CGROUP_ROOT / "cpuset" / "cpuset.mems").read_text().strip() or "0"
    _write(cpuset / "cpuset.cpus", cpus)
    _write(cpuset / "cpuset.mems", mems)


def _create_v1(plan: CpuPlan, name: str) -> list[Path]:
    folders = _make_v1_cgroups(("cpuset", "cpu", "cpuacct", "memory"), name)
    _set_v1_cpuset(name, plan.cpuset)
    cpu = CGROUP_ROOT / "cpu" / name
    _write(cpu / "cpu.cfs_period_us", str(CFS_PERIOD_US))
    quota = -1 if plan.budget == int(plan.budget) else round(plan.budget * CFS_PERIOD_US)
    _write(cpu / "cpu.cfs_quota_us", str(quota))
    _write(cpu / "cpu.shares", str(MEASURED_SHARES))
    return folders


def _create_v1_pooler(plan: CpuPlan, name: str) -> list[Path]:
    """The poolers' cgroups: the server's cpuset, the server's weight (the two compete for those cores as
    equals, not as a measurement against a bystander), no quota, a CPU counter of their own."""
    leaf = f"{name}{POOLER_SUFFIX}"
    folders = _make_v1_cgroups(("cpuset", "cpu", "cpuacct"), leaf)
    _set_v1_cpuset(leaf, plan.cpuset)
    _write(CGROUP_ROOT / "cpu" / leaf / "cpu.shares", str(MEASURED_SHARES))
    return folders


def _make_v2_cgroup(leaf: str, cpus: str) -> Path:
    folder = CGROUP_ROOT / leaf
    folder.mkdir(exist_ok=True)
    _write(folder / "cpuset.cpus", cpus)
    return folder


def _create_v2_pooler(plan: CpuPlan, name: str) -> list[Path]:
    return [_make_v2_cgroup(f"{name}{POOLER_SUFFIX}", plan.cpuset)]


def _create_v1_client(name: str) -> list[Path]:
    folder = CGROUP_ROOT / "cpu" / f"{name}-client"
    folder.mkdir(exist_ok=True)
    _write(folder / "cpu.shares", str(MEASURED_SHARES))
    _write(folder / "cpu.cfs_period_us", str(CFS_PERIOD_US))
    return [folder]


def _create_v2(plan: CpuPlan, name: str) -> list[Path]:
    folder = _make_v2_cgroup(name, plan.cpuset)
    quota = "max" if plan.budget == int(plan.budget) else str(round(plan.budget * CFS_PERIOD_US))
    _write(folder / "cpu.max", f"{quota} {CFS_PERIOD_US}")
    return [folder]


def _create_v2_client(name: str) -> list[Path]:
    """pgbench's own cgroup, so an experiment can give it a CPU quota; its cores come from affinity."""
    folder = CGROUP_ROOT / f"{name}-client"
    folder.mkdir(exist_ok=True)
    return [folder]


def budget_name(cluster: str, pid: int | None = None) -> str:
    """The cgroup name of a run's cluster. The run's PID makes it the run's alone: a resumed run reuses its
    cluster's name, and two test folders can hold clusters of the same name, yet neither may ever share a
    cgroup with another run, nor have the other's clean-up remove it. It also says, for the leftover
    clean-up, whether the run that made the folder is still alive."""
    name = f"{CGROUP_PREFIX}-{cluster}-{os.getpid() if pid is None else pid}"
    if not CGROUP_NAME.fullmatch(name):
        raise LabError(
            f"cgroup name {name!r} (CONNLAB_CGROUP_PREFIX and the cluster's name) may hold only letters, "
            f"digits, '.', '_' and '-'"
        )
    return name


def budget_folders(name: str) -> list[Path]:
    """Every cgroup folder of the budget with this exact name: the server's and the client's, in each v1
    controller and at the v2 root. Exact names only: a pattern could take another run's folders."""
    parents = [CGROUP_ROOT, *(path for path in CGROUP_ROOT.glob("*") if path.is_dir())]
    leaves = (name, f"{name}{CLIENT_SUFFIX}", f"{name}{POOLER_SUFFIX}")
    candidates = [parent / leaf for parent in parents for leaf in leaves]
    return [folder for folder in candidates if folder.is_dir()]


def cgroup_owner(name: str) -> int | None:
    """The PID of the run that made a cgroup of budget_name's form; None for any other name."""
    match = CGROUP_OWNER.search(name)
    return int(match[1]) if match else None


def detect_method(requested: str | None = None) -> str:
    """The method to use: the requested one (CPU_METHOD) or the first that works here."""
    requested = requested or os.environ.get("CPU_METHOD") or None
    if requested:
        if requested not in METHODS:
            raise LabError(f"CPU_METHOD={requested} is unknown; use one of {', '.join(METHODS)}")
        return requested
    if os.geteuid() == 0 and _v1_available():
        return "cgroup-v1"
    if os.geteuid() == 0 and _v2_available():
        return "cgroup-v2"
    return "taskset"


def create_budget(budget: float, name: str, method: str | None = None) -> CpuBudget:
    plan = plan_cores(budget)
    method = detect_method(method)
    if method == "taskset" and budget != int(budget):
        raise LabError(
            f"a fractional server budget ({budget} cores) needs a cgroup CPU quota, and only taskset "
            f"is usable here; run as root on a machine with writable cgroups, or use whole cores"
        )
    folders: list[Path] = []
    client_folders: list[Path] = []
    pooler_folders: list[Path] = []
    try:
        if method == "cgroup-v1":
            folders = _create_v1(plan, name)
            client_folders = _create_v1_client(name)
            pooler_folders = _create_v1_pooler(plan, name)
        elif method == "cgroup-v2":
            folders = _create_v2(plan, name)
            client_folders = _create_v2_client(name)
            pooler_folders = _create_v2_pooler(plan, name)
    except LabError:
        # Half-made folders of a failed set-up must not outlive it.
        for folder in budget_folders(name):
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    pooler = PoolerBudget(plan.server_cores, plan.server_cores, method, pooler_folders)
    return CpuBudget(
        plan=plan, method=method, name=name, cgroup_dirs=folders, client_cgroup_dirs=client_folders,
        pooler=pooler,
    )  # fmt: skip
