"""results/<machine>/machine.yaml: a path-safe default id, and a file that keeps what it should."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from connlab import paths
from connlab.contract.machine_schema import MachineFile
from connlab.data.validate import SAFE_ID
from connlab.lab import machine
from connlab.lab import netem as machine_netem


@pytest.fixture
def results_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "results"
    monkeypatch.setattr(paths, "RESULTS_DIR", folder)
    return folder


def facts(profile: str) -> dict[str, object]:
    return {
        "cpu_model": "Test CPU",
        "cores": 2,
        "threads": 2,
        "memory_gib": 8.0,
        "kernel": "6.1",
        "os": "Debian",
        "virtualised": "none",
        "postgres_version": "15.18",
        "pgbench_version": "15.18",
        "cpu_budget_method": "cgroup-v1",
        "profile": profile,
        "collected_at": "2026-01-01T00:00:00Z",
    }


@pytest.mark.parametrize(
    "model",
    [
        "AMD EPYC 7B13 64-Core Processor",
        "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz",
        "Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz",
        "ARMv8 Processor rev 1 (v8l)",
        "Ärm Ünïcode Çpu",
        "",
        "???",
    ],
)
def test_default_machine_id_is_a_valid_folder_name(model: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MACHINE", raising=False)
    monkeypatch.setattr(machine, "cpu_model", lambda: model)
    machine_id = machine.default_machine_id()
    assert SAFE_ID.match(machine_id), machine_id
    assert machine_id.endswith("g")


def test_machine_variable_overrides_the_id(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MACHINE", "lab-box-2")
    assert machine.default_machine_id() == "lab-box-2"


def test_machine_file_keeps_the_description(results_dir: Path) -> None:
    path = machine.write_machine_file("box", facts("quick"))
    assert path == results_dir / "box" / "machine.yaml"
    data = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**data, "description": "the rack in the corner"}))
    machine.write_machine_file("box", {**facts("quick"), "kernel": "6.2"})
    data = yaml.safe_load(path.read_text())
    assert data["description"] == "the rack in the corner"
    assert data["kernel"] == "6.2"
    assert data["id"] == "box"
    assert list(path.parent.iterdir()) == [path]  # no temporary left behind


@pytest.mark.parametrize(
    ("first", "then", "kept"),
    [
        ("full", "quick", "full"),
        ("full", "tiny", "full"),
        ("quick", "tiny", "quick"),
        ("tiny", "quick", "quick"),
        ("quick", "full", "full"),
    ],
)
def test_profile_says_the_best_profile_measured(results_dir: Path, first: str, then: str, kept: str) -> None:
    """Aggregation uses a machine's best profile (full > quick > tiny); machine.yaml must name the same."""
    machine.write_machine_file("box", facts(first))
    path = machine.write_machine_file("box", facts(then))
    assert yaml.safe_load(path.read_text())["profile"] == kept


def test_a_run_over_several_versions_keeps_the_machines_postgres(results_dir: Path) -> None:
    """pg-versions runs servers from pinned builds; the machine's own PostgreSQL and calibration stay."""
    own = {"postgres_version": "15.18 (Debian)", "postgres_source": "debian", "calibration_tps": 12904.0}
    machine.write_machine_file("box", {**facts("full"), **own})
    comparison = {"postgres_version": "18.6", "postgres_source": "wheel", "calibration_tps": 9000.0}
    path = machine.write_machine_file("box", {**facts("full"), **comparison}, keep_postgres=True)
    data = yaml.safe_load(path.read_text())
    assert {key: data[key] for key in own} == own


def test_a_fact_an_older_machine_file_lacks_is_not_taken_from_the_version_run(results_dir: Path) -> None:
    own = {"postgres_version": "15.18 (Debian)", "calibration_tps": 12904.0}
    machine.write_machine_file("box", {key: value for key, value in facts("full").items()
                                       if key != "postgres_source"} | own)  # fmt: skip
    comparison = {"postgres_version": "15.18", "postgres_source": "wheel", "calibration_tps": 9000.0}
    path = machine.write_machine_file("box", {**facts("full"), **comparison}, keep_postgres=True)
    data = yaml.safe_load(path.read_text())
    assert data["postgres_version"] == "15.18 (Debian)" and "postgres_source" not in data


def test_a_first_run_over_several_versions_records_what_it_ran(results_dir: Path) -> None:
    comparison = {"postgres_version": "15.18", "postgres_source": "wheel", "calibration_tps": 9000.0}
    path = machine.write_machine_file("box", {**facts("full"), **comparison}, keep_postgres=True)
    data = yaml.safe_load(path.read_text())
    assert {key: data[key] for key in comparison} == comparison


def test_netem_status_records_the_probes_reason_where_it_cannot_run(monkeypatch: pytest.MonkeyPatch) -> None:
    reason = "netem not available on this machine: Specified qdisc kind is unknown"
    monkeypatch.setattr(machine, "probe_netem", lambda: machine_netem.NetemStatus(False, reason))
    assert machine.netem_status() == reason


def test_netem_status_says_available_where_the_probe_added_a_qdisc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(machine, "probe_netem", lambda: machine_netem.NetemStatus(True))
    assert machine.netem_status() == machine.NETEM_AVAILABLE


def test_machine_schema_takes_the_netem_line() -> None:
    data = {"id": "test-2c-8g", **facts("quick"), "netem": "netem not available on this machine: x"}
    assert MachineFile(**data).netem == data["netem"]
