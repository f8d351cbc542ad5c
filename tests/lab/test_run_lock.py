"""One measurement at a time per machine (connlab.lab.run_lock): a second run is refused at once with one
line naming the first; the lock dies with its holder; the leftover clean-up touches only dead runs.

The fast tests hold the lock from this process through the module, as another run would, and start no
PostgreSQL. Each test uses a lock file of its own (connlab_env's CONNLAB_LOCK_FILE), never the machine's:
a measurement running on this machine meanwhile neither refuses these tests nor is refused by them.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import psutil
import pytest

from connlab import paths
from connlab.contract.experiment import make_plan
from connlab.errors import LabError
from connlab.lab import cpu_budget, leftovers, run_lock
from connlab.lab.run_lock import MeasurementLock, hold_measurement_lock
from support.helpers import connlab
from support.paths import REPO_ROOT

if TYPE_CHECKING:
    from support.host import CgroupGuard

MACHINE = "lock-box"
FIRST_COMMAND = "connlab run clients-sweep --profile quick"
REFUSAL = (
    r"another measurement is running on this machine: PID {pid} \({command}\), started \d\d:\d\d:\d\d; "
    r"wait for it or stop it"
)
# A PID no process can have: the kernel hands out PIDs below pid_max.
DEAD_PID = int(Path("/proc/sys/kernel/pid_max").read_text())


def refusal_pattern(pid: int, command: str) -> str:
    return REFUSAL.format(pid=pid, command=re.escape(command))


@pytest.fixture
def lock_file(tmp_path: Path) -> Path:
    return tmp_path / "measure.lock"


# -- the lock, in this process --------------------------------------------------------------------------
def test_a_second_holder_is_refused_with_one_line_naming_the_first(lock_file: Path) -> None:
    with MeasurementLock(lock_file, FIRST_COMMAND):
        started = time.monotonic()
        with pytest.raises(LabError) as refused, hold_measurement_lock(path=lock_file):
            pytest.fail("a second holder got the lock")
        assert time.monotonic() - started < 0.5, "refused at once, not after a wait"
    message = str(refused.value)
    assert "\n" not in message
    assert re.fullmatch(refusal_pattern(os.getpid(), FIRST_COMMAND), message), message


def test_the_holder_records_itself_and_empties_the_file_when_done(lock_file: Path) -> None:
    with MeasurementLock(lock_file, FIRST_COMMAND):
        record = json.loads(lock_file.read_text())
        assert record["pid"] == os.getpid() and record["command"] == FIRST_COMMAND
        assert abs(record["started"] - time.time()) < 60
    assert lock_file.read_text() == ""
    # Mode 0666 whatever the umask: a run of another user after root's records itself too.
    assert lock_file.stat().st_mode & 0o777 == 0o666


def test_the_lock_is_reentrant_within_a_run_and_free_after_it(lock_file: Path) -> None:
    """run-all holds it across experiments, and each experiment's open_bench takes it again inside."""
    with hold_measurement_lock("connlab run-all", path=lock_file):
        with hold_measurement_lock(path=lock_file):
            pass
        with pytest.raises(LabError, match=r"PID \d+ \(connlab run-all\)"):
            MeasurementLock(lock_file).acquire()  # still held after the inner holder left
    with MeasurementLock(lock_file):
        pass


def test_without_a_record_the_pid_comes_from_the_kernel(
    lock_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A holder that could not write its record (a read-only file), or the record of a crashed run: the
    line still names the PID that holds the lock, from /proc/locks."""
    monkeypatch.setattr(run_lock, "RECORD_WAIT_S", 0.1)
    lock_file.write_text(json.dumps({"pid": DEAD_PID, "command": "connlab run gone", "started": 0}))
    with lock_file.open() as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)
        with pytest.raises(LabError) as refused:
            MeasurementLock(lock_file).acquire()
    assert f"PID {os.getpid()} (it holds {lock_file})" in str(refused.value)
    assert "gone" not in str(refused.value)


def test_a_link_in_place_of_the_lock_file_is_refused(tmp_path: Path, lock_file: Path) -> None:
    """The lock file lives in /tmp, which anyone may write: a link planted there must not make a run of
    root's truncate the file it points to."""
    target = tmp_path / "precious"
    target.write_text("keep me")
    lock_file.symlink_to(target)
    with pytest.raises(LabError, match="symbolic link"):
        MeasurementLock(lock_file).acquire()
    lock_file.unlink()
    os.link(target, lock_file)
    with pytest.raises(LabError, match="single link"):
        MeasurementLock(lock_file).acquire()
    assert target.read_text() == "keep me"


def test_the_lock_file_is_machine_wide() -> None:
    """Not under the results or build folder, which the tests (CONNLAB_*_DIR) and a second checkout move."""
    if "CONNLAB_LOCK_FILE" in os.environ:
        pytest.skip("CONNLAB_LOCK_FILE is set in this environment")
    lock = paths.MEASURE_LOCK_FILE
    assert lock.is_absolute()
    for folder in (paths.REPO_ROOT, paths.RESULTS_DIR, paths.BUILD_DIR, paths.DEFAULT_BUILD_DIR):
        assert not lock.is_relative_to(folder), folder


# -- cgroup names and the leftover clean-up ------------------------------------------------------------
def test_a_run_cgroup_name_carries_its_prefix_and_pid(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpu_budget, "CGROUP_PREFIX", "connlab-clt-abc")
    name = cpu_budget.budget_name("clients-sweep-tiny-20260101T000000Z")
    assert name == f"connlab-clt-abc-clients-sweep-tiny-20260101T000000Z-{os.getpid()}"
    assert cpu_budget.cgroup_owner(name) == os.getpid()
    assert cpu_budget.cgroup_owner(f"{name}-client") == os.getpid()
    assert cpu_budget.cgroup_owner(f"{name}-pooler") == os.getpid()
    # Names of runs from before the PID was part of them, and the snippets' cgroups, have no owner.
    assert cpu_budget.cgroup_owner("connlab-clients-sweep-tiny-20260101T000000Z") is None
    assert cpu_budget.cgroup_owner("connlab-pg-versions-tiny-20260101T000000Z-pg16") is None
    assert cpu_budget.cgroup_owner("connlab-check-client") is None
    monkeypatch.setattr(cpu_budget, "CGROUP_PREFIX", "../escape")
    with pytest.raises(LabError, match="CONNLAB_CGROUP_PREFIX"):
        cpu_budget.budget_name("x")


def cluster_folder(lab: Path, name: str, owner: str, budget: str) -> Path:
    """A cluster folder as a run leaves it: owner file, budget name, and a postmaster.pid."""
    root = lab / name
    (root / "data").mkdir(parents=True)
    (root / leftovers.OWNER_FILE).write_text(owner)
    (root / leftovers.BUDGET_FILE).write_text(budget)
    (root / "data" / "postmaster.pid").write_text(f"{DEAD_PID}\n")
    return root


def test_stale_clean_up_removes_only_folders_of_dead_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cgroup_guard: CgroupGuard
) -> None:
    monkeypatch.setattr(leftovers, "LAB_DIR", tmp_path)
    monkeypatch.setattr(leftovers, "CGROUP_PREFIX", cgroup_guard.prefix)
    me = psutil.Process()
    live = cluster_folder(tmp_path, "live", f"{me.pid} {me.create_time()}", f"{cgroup_guard.prefix}-live")
    dead = cluster_folder(tmp_path, "dead", f"{DEAD_PID} 0", f"{cgroup_guard.prefix}-dead")
    # This PID, but another start time: a later process that got a dead run's PID (a container's rerun).
    reused = cluster_folder(tmp_path, "reused", f"{me.pid} 12345.0", f"{cgroup_guard.prefix}-reused")
    leftovers.stop_stale_clusters()
    assert live.exists()
    assert not dead.exists() and not reused.exists()


@pytest.mark.usefixtures("require_cgroup_v1")
def test_cgroup_clean_up_spares_live_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cgroup_guard: CgroupGuard
) -> None:
    """A dead run's cgroups go (by the name its folder recorded, or by the dead PID that ends the name);
    those of live runs stay, even empty ones: a run's client cgroup is empty between two windows."""
    prefix = cgroup_guard.prefix
    monkeypatch.setattr(leftovers, "LAB_DIR", tmp_path)
    monkeypatch.setattr(leftovers, "CGROUP_PREFIX", prefix)
    cpu = cpu_budget.CGROUP_ROOT / "cpu"
    recorded = f"{prefix}-dead-run-{DEAD_PID}"
    cluster_folder(tmp_path, "dead-run", f"{DEAD_PID} 0", recorded)
    dead = [
        cpu / recorded,
        cpu / f"{recorded}-client",
        cpu / f"{recorded}-pooler",
        cpu / f"{prefix}-no-folder-{DEAD_PID}-client",
        cpu / f"{prefix}-no-folder-{DEAD_PID}-pooler",
    ]
    live = [
        cpu / f"{prefix}-mine-{os.getpid()}-client",
        cpu / f"{prefix}-mine-{os.getpid()}-pooler",
        cpu / f"{prefix}-other-{os.getppid()}",
        cpu / f"{prefix}-check",  # no PID: not a run's, never touched
    ]
    for folder in [*dead, *live]:
        folder.mkdir()
    leftovers.stop_stale_clusters()
    assert [folder for folder in dead if folder.exists()] == []
    assert [folder for folder in live if not folder.exists()] == []
    for folder in live:
        folder.rmdir()
    assert cgroup_guard.added() == set()


# -- real processes ------------------------------------------------------------------------------------
# `connlab run` counts as e2e for the markers; these start no PostgreSQL (refused before anything, and
# PG_BINDIR is broken on purpose so that a run the lock failed to stop ends at once instead of measuring).
@pytest.mark.e2e
@pytest.mark.parametrize(
    "command",
    [
        ["run", "clients-sweep", "--profile", "tiny"],
        ["run-all", "clients-sweep", "connect-cost", "--profile", "tiny"],
        ["contribute", "--profile", "quick"],
    ],
    ids=["run", "run-all", "contribute"],
)
def test_a_second_connlab_run_is_refused_and_writes_nothing(
    command: list[str], connlab_env: dict[str, str]
) -> None:
    env = {**connlab_env, "PG_BINDIR": "/nonexistent"}
    with MeasurementLock(Path(env["CONNLAB_LOCK_FILE"]), FIRST_COMMAND):
        result = connlab(*command, "--machine", MACHINE, env=env)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert re.fullmatch("error: " + refusal_pattern(os.getpid(), FIRST_COMMAND), lines[0]), lines[0]
    assert not Path(env["CONNLAB_RESULTS_DIR"]).exists()
    assert not (Path(env["CONNLAB_BUILD_DIR"]) / "lab").exists()


HOLDER = """
import subprocess, sys
from pathlib import Path
from connlab.lab.run_lock import hold_measurement_lock
with hold_measurement_lock("connlab run held-by-child", path=Path(sys.argv[1])):
    # A child that outlives its parent, as a server can outlive a killed run; close_fds=False, so that only
    # close-on-exec keeps the lock's descriptor out of it.
    child = subprocess.Popen(["sleep", "600"], close_fds=False, start_new_session=True)
    print(child.pid, flush=True)
    sys.stdin.read()
"""


@pytest.mark.process
def test_the_lock_is_released_when_its_holder_is_killed(lock_file: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock_file)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    child = int(holder.stdout.readline())
    try:
        with pytest.raises(LabError) as refused:
            MeasurementLock(lock_file).acquire()
        assert re.fullmatch(refusal_pattern(holder.pid, "connlab run held-by-child"), str(refused.value))
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
        assert psutil.pid_exists(child)  # the child lives on, and does not hold the lock
        with MeasurementLock(lock_file, "connlab run next"):
            assert json.loads(lock_file.read_text())["command"] == "connlab run next"
    finally:
        holder.kill()
        holder.wait()
        os.kill(child, signal.SIGKILL)


# -- end to end: two real runs at once -----------------------------------------------------------------
@pytest.mark.e2e
@pytest.mark.usefixtures("require_root", "require_postgres")
def test_two_runs_at_once_the_second_is_refused_and_the_first_completes(
    connlab_env: dict[str, str], cgroup_guard: CgroupGuard, tmp_path: Path
) -> None:
    first_experiment, second_experiment = "sync-commit", "clients-sweep"
    lock = Path(connlab_env["CONNLAB_LOCK_FILE"])
    log = tmp_path / "first.log"
    with log.open("w") as output:
        first = subprocess.Popen(
            [sys.executable, "-m", "connlab.cli", "run", first_experiment, "--profile", "tiny",
             "--machine", MACHINE],
            cwd=REPO_ROOT, env=connlab_env, stdout=output, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not (lock.exists() and f'"pid": {first.pid},' in lock.read_text()):
            assert first.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the first run never took the lock"
            time.sleep(0.05)
        started = time.monotonic()
        second = connlab("run", second_experiment, "--profile", "tiny", "--machine", MACHINE, env=connlab_env)
        refused_after_s = time.monotonic() - started
        assert first.wait(timeout=120) == 0, log.read_text()
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert second.returncode == 2, second.stderr
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1, second.stderr
    first_command = f"connlab run {first_experiment} --profile tiny --machine {MACHINE}"
    assert re.fullmatch("error: " + refusal_pattern(first.pid, first_command), lines[0]), lines[0]
    assert refused_after_s < 15, "the second run waited instead of being refused"
    results = Path(connlab_env["CONNLAB_RESULTS_DIR"]) / MACHINE
    assert not (results / second_experiment).exists()
    [csv_file] = (results / first_experiment).glob("*.csv")
    rows = csv_file.read_text().strip().splitlines()[1:]
    assert len(rows) == len(make_plan(first_experiment, "tiny").windows())
    assert lock.read_text() == ""
    assert cgroup_guard.added() == set()
