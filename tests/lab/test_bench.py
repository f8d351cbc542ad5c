"""The bench opener's choices that need no server: each window's sslmode, and the TLS it can configure."""

from __future__ import annotations

from pathlib import Path

import pytest

from connlab.contract.experiment import Workload, make_plan
from connlab.errors import LabError
from connlab.lab import bench
from connlab.lab.cpu_budget import CpuPlan


def workload(**fields: object) -> Workload:
    return Workload.model_validate({"id": "w", "label": "w", "builtins": ["select-only"], **fields})


def test_tls_workloads_require_tls_and_the_others_refuse_it() -> None:
    """Said either way: libpq's default would take TLS wherever the server offers it."""
    assert bench.sslmode_of(workload(tls=True, transport="tcp")) == "require"
    assert bench.sslmode_of(workload()) == "disable"
    assert bench.sslmode_of(None) == "disable"


def test_tls_through_a_pooler_whose_tls_the_harness_cannot_set_is_refused() -> None:
    plan = make_plan("tls-trade", "tiny", server_cores=1)
    bench.check_poolers(plan)  # PgBouncer's client_tls is configured: accepted
    odd = plan.spec.model_copy(
        update={
            "poolers": [p.model_copy(update={"kind": "pgpool"}) for p in plan.spec.poolers],
            "workloads": [w.model_copy(update={"target": "pgpool"}) for w in plan.spec.workloads],
        }
    )
    with pytest.raises(LabError, match="asks for TLS through pgpool"):
        bench.check_poolers(plan.__class__(**{**plan.__dict__, "spec": odd}))


def test_the_certificate_folder_exists_only_for_tls_plans(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    made: list[object] = []
    monkeypatch.setattr(bench, "LAB_DIR", tmp_path)
    monkeypatch.setattr(bench.tls, "make_certificate", lambda folder: made.append(folder) or folder.mkdir())
    with bench.certificate_for(make_plan("pgbouncer-trade", "tiny", server_cores=1), "plain") as files:
        assert files is None
    with bench.certificate_for(make_plan("tls-trade", "tiny", server_cores=1), "run") as files:
        assert made == [tmp_path / "run-tls"] and (tmp_path / "run-tls").is_dir()
    assert not (tmp_path / "run-tls").exists()


class FakeBudget:
    """What Bench asks of a budget before pgbench execs: its plan's client cores and its own entry."""

    def __init__(self, client_cores: tuple[int, ...]) -> None:
        self.plan = CpuPlan(1, (0,), client_cores)
        self.entered = 0

    def enter_client(self) -> None:
        self.entered += 1


def test_pgbench_is_narrowed_to_the_cores_its_point_takes(monkeypatch: pytest.MonkeyPatch) -> None:
    pinned: list[tuple[int, ...]] = []
    monkeypatch.setattr(bench.os, "sched_setaffinity", lambda pid, cores: pinned.append(tuple(cores)))
    budget = FakeBudget((1, 2, 3, 4, 5, 6, 7))
    prepared = bench.Bench(None, budget, "pgbench", "unix")  # type: ignore[arg-type]
    prepared.enter_client(3)  # a point with three clients on a machine that leaves seven cores
    prepared.enter_client(7)  # every core left: the budget's own pinning stands
    prepared.enter_client(None)  # the calibration: the budget's own pinning
    assert pinned == [(1, 2, 3)]
    assert budget.entered == 3


class FakePooler:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def stop(self) -> None:
        self.calls.append("stop")

    def __enter__(self) -> FakePooler:
        self.calls.append("start")
        return self


def test_restarting_the_poolers_stops_and_starts_each_one() -> None:
    poolers = {"pgbouncer": FakePooler(), "pgpool": FakePooler()}
    prepared = bench.Bench(None, FakeBudget((1,)), "pgbench", "unix", poolers=poolers)  # type: ignore[arg-type]
    prepared.restart_poolers()
    assert [pooler.calls for pooler in poolers.values()] == [["stop", "start"], ["stop", "start"]]
