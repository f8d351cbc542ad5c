"""Poolers and probes as plug-ins: what experiment.yaml may name, and what the harness refuses."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from connlab.contract.experiment import Experiment, load_experiment, make_plan
from connlab.contract.names import BENCH_DB
from connlab.contract.poolers import PoolerSetup, PoolerUser
from connlab.contract.poolers.registry import CONFIGS
from connlab.errors import LabError
from connlab.paths import EXPERIMENTS_DIR

BASE = yaml.safe_load((EXPERIMENTS_DIR / "queue-depth" / "experiment.yaml").read_text())


def spec(**changes: object) -> dict:
    return {**BASE, **changes}


def test_probes_must_be_declared() -> None:
    with pytest.raises(ValueError, match="probes: unknown nosuch"):
        Experiment.model_validate(spec(probes=["backends", "nosuch"]))


def test_a_target_must_be_one_of_the_poolers() -> None:
    workloads = [{**BASE["workloads"][0], "target": "odyssey"}]
    with pytest.raises(ValueError, match="targets odyssey, which is not one of the poolers"):
        Experiment.model_validate(spec(workloads=workloads))


def test_a_pooler_kind_appears_once() -> None:
    with pytest.raises(ValueError, match="each kind at most once"):
        Experiment.model_validate(spec(poolers=[{"kind": "pgbouncer"}, {"kind": "pgbouncer"}]))


def test_several_poolers_interleave_their_windows() -> None:
    """Two poolers, one workload each: at every client count both run, one after the other."""
    workloads = [
        {**BASE["workloads"][0], "id": "a", "target": "pgbouncer"},
        {**BASE["workloads"][0], "id": "b", "target": "other"},
    ]
    poolers = [{"kind": "pgbouncer"}, {"kind": "other", "settings": {"workers": 2}}]
    experiment = Experiment.model_validate(spec(poolers=poolers, workloads=workloads))
    assert experiment.pooler("other").settings == {"workers": 2}  # type: ignore[union-attr]
    plan = dataclasses.replace(make_plan("queue-depth", "tiny"), spec=experiment, client_counts=[2, 4])
    targets = [window.workload.target for window in plan.windows() if window.pass_no == 1]
    assert targets == ["pgbouncer", "other", "pgbouncer", "other"]


def test_the_harness_refuses_a_kind_it_has_no_adapter_for() -> None:
    from connlab.lab.bench import check_poolers

    plan = make_plan("queue-depth", "tiny")
    poolers = [pooler.model_copy(update={"kind": "nosuch"}) for pooler in plan.spec.poolers]
    plan = dataclasses.replace(plan, spec=plan.spec.model_copy(update={"poolers": poolers}))
    with pytest.raises(LabError, match=r"pooler kind 'nosuch' is not registered; known: [a-z, ]*pgbouncer"):
        check_poolers(plan)


def test_a_missing_pooler_binary_is_reported_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    from connlab.lab.poolers.base import PoolerUnavailable
    from connlab.poolers.pgbouncer.adapter import PgBouncer

    monkeypatch.setenv(PgBouncer.env_var, "/nonexistent/pgbouncer")
    with pytest.raises(PoolerUnavailable, match="pgbouncer: CONNLAB_PGBOUNCER=/nonexistent/pgbouncer"):
        PgBouncer.binary()


def test_the_harness_and_the_snippet_write_the_same_pgbouncer_files(tmp_path: Path) -> None:
    """The adapter's config_files() is the contract's, which the snippet prints."""
    from connlab.poolers.pgbouncer.adapter import PgBouncer

    setup = PoolerSetup(
        root=tmp_path, port=6432, server_host="/tmp/sock", server_port=5432, databases=[BENCH_DB, "postgres"],
        users=[PoolerUser("postgres"), PoolerUser("bench_scram", "SCRAM-SHA-256$4096:...")],
        hba_lines=["local all postgres trust"], pool_sizes=[4],
    )  # fmt: skip
    files = PgBouncer(setup).config_files()
    assert files == CONFIGS["pgbouncer"].config_files(setup)
    assert "bench_pool4 = host=/tmp/sock port=5432 dbname=bench pool_size=4" in files["pgbouncer.ini"]
    assert '"bench_scram" "SCRAM-SHA-256$4096:..."' in files["userlist.txt"]


def test_every_committed_experiment_loads() -> None:
    for path in sorted(EXPERIMENTS_DIR.glob("*/experiment.yaml")):
        load_experiment(path.parent.name)


def test_a_pooler_without_a_config_module_gets_a_block_that_says_so() -> None:
    """The harness may run a pooler whose files only its adapter knows; the block must not pretend."""
    from connlab.site.render.snippets import pgbench_block

    plan = make_plan("queue-depth", "tiny")
    poolers = [pooler.model_copy(update={"kind": "newpooler"}) for pooler in plan.spec.poolers]
    workloads = [workload.model_copy(update={"target": "newpooler"}) for workload in plan.spec.workloads]
    plan = dataclasses.replace(
        plan, spec=plan.spec.model_copy(update={"poolers": poolers, "workloads": workloads})
    )
    block = pgbench_block(plan)
    assert "newpooler: this block cannot start it (no folder connlab/poolers/newpooler/)" in block
    assert "exit 1" in block
