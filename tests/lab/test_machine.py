"""results/<machine>/machine.yaml: a path-safe default id, and a file that keeps what it should."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from connlab import paths
from connlab.contract.machine_schema import NOT_AVAILABLE, MachineFile
from connlab.data.validate import SAFE_ID, load_machine_file
from connlab.errors import LabError
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
def test_the_shape_id_is_a_valid_folder_name(model: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(machine, "cpu_model", lambda: model)
    machine_id = machine.shape_id()
    assert SAFE_ID.match(machine_id), machine_id
    assert machine_id.endswith("g")


HERE = {"cpu_model": "Test CPU", "threads": 2, "memory_gib": 8.0, "kernel": "6.1", "virtualised": "none"}


@pytest.fixture
def this_machine(results_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A machine of shape test-2c-8g whose fingerprint is HERE; MACHINE unset."""
    monkeypatch.delenv("MACHINE", raising=False)
    monkeypatch.setattr(machine, "fingerprint", lambda: dict(HERE))
    monkeypatch.setattr(machine, "shape_id", lambda: "test-2c-8g")
    return results_dir


def test_machine_variable_overrides_the_id(this_machine: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MACHINE", "lab-box-2")
    assert machine.machine_id_for_run() == "lab-box-2"
    assert machine.machine_id_for_run("lab-box-3") == "lab-box-3"


def test_a_machine_writes_its_own_folder_again(this_machine: Path) -> None:
    assert machine.machine_id_for_run() == "test-2c-8g"
    machine.write_machine_file("test-2c-8g", facts("quick"))
    assert machine.machine_id_for_run() == "test-2c-8g"
    machine.refuse_another_machines_folder("test-2c-8g")  # its own: nothing to refuse


def test_a_machine_of_the_same_shape_gets_a_folder_of_its_own(this_machine: Path) -> None:
    """make all on a machine shaped like a committed one never writes into the committed machine's folder."""
    machine.write_machine_file("test-2c-8g", {**facts("full"), "kernel": "6.0"})
    assert machine.machine_id_for_run() == "test-2c-8g-2"
    machine.write_machine_file("test-2c-8g-2", {**facts("quick"), "memory_gib": 16.0})
    assert machine.machine_id_for_run() == "test-2c-8g-3"


def test_a_named_folder_of_another_machine_is_refused_in_one_line(this_machine: Path) -> None:
    machine.write_machine_file("lab-box", {**facts("full"), "kernel": "6.0"})
    with pytest.raises(LabError) as refused:
        machine.machine_id_for_run("lab-box")
    message = str(refused.value)
    assert "\n" not in message
    assert "results/lab-box/ holds another machine's results (kernel 6.1 here, 6.0 there)" in message
    assert message.endswith("MACHINE=lab-box-2")
    with pytest.raises(LabError, match=r"kernel 6\.1 here, 6\.0 there"):
        machine.refuse_another_machines_folder("lab-box")


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


@pytest.mark.e2e  # `connlab run`, refused before it starts a server
def test_a_run_into_another_machines_folder_is_refused_and_writes_nothing(
    connlab_env: dict[str, str],
) -> None:
    results = Path(connlab_env["CONNLAB_RESULTS_DIR"]) / "lab-box"
    results.mkdir(parents=True)
    recorded = {**facts("full"), "id": "lab-box", "kernel": "0.0-another-machine"}
    (results / "machine.yaml").write_text(yaml.safe_dump(recorded))
    before = sorted(path.name for path in results.rglob("*"))
    result = subprocess.run(
        [sys.executable, "-m", "connlab.cli", "run", "clients-sweep", "--profile", "tiny",
         "--machine", "lab-box"],
        env=connlab_env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: results/lab-box/ holds another machine's results (")
    assert "kernel " in line and "there" in line and line.endswith("MACHINE=lab-box-2")
    assert sorted(path.name for path in results.rglob("*")) == before
    assert yaml.safe_load((results / "machine.yaml").read_text()) == recorded


def test_other_cpu_flags_make_another_machine(results_dir: Path) -> None:
    """A generic model name ("AMD EPYC") hides a host's CPU generation; its flags tell it."""
    current = {**facts("full"), "cpu_flags": "avx2 avx512f fpu sse4_2"}
    recorded = {**current, "id": "box", "cpu_flags": "avx2 fpu sse4_2 sse4a"}
    (results_dir / "box").mkdir(parents=True)
    (results_dir / "box" / "machine.yaml").write_text(yaml.safe_dump(recorded))
    with pytest.raises(LabError) as refused:
        machine.refuse_another_machines_folder("box", current)
    [line] = str(refused.value).splitlines()
    assert "(cpu_flags +avx512f -sse4a here against there)" in line
    assert line.endswith("MACHINE=box-2")
    machine.refuse_another_machines_folder("box", {**current, "cpu_flags": recorded["cpu_flags"]})


def test_parse_cpu_flags_sorts_the_first_processors_flags() -> None:
    cpuinfo = "processor\t: 0\nflags\t\t: sse2 fpu avx2 fpu\n\nprocessor\t: 1\nflags\t\t: fpu\n"
    assert machine.parse_cpu_flags(cpuinfo) == "avx2 fpu sse2"
    assert machine.parse_cpu_flags("Features\t: fp asimd evtstrm\n") == "asimd evtstrm fp"
    assert machine.parse_cpu_flags("processor\t: 0\n") is None


def test_a_rerun_on_the_same_machine_leaves_its_machine_file_as_it_was(results_dir: Path) -> None:
    """A fresh clone's `make all` on a machine whose folder is committed must not change that file: the
    quick run keeps the full profile, the first date, and the versions of poolers this clone has not built."""
    first = {**facts("full"), "odyssey_version": "odyssey 1.5.1", "calibration_tps": 12904.0}
    path = machine.write_machine_file("box", first)
    data = yaml.safe_load(path.read_text())
    # Hand-wrapped and reordered, as a contributor may commit it: the same facts, so left as it is.
    committed = yaml.safe_dump(dict(reversed(list(data.items()))), width=40)
    path.write_text(committed)
    later = {**facts("quick"), "odyssey_version": NOT_AVAILABLE, "collected_at": "2027-02-02T00:00:00Z",
             "calibration_tps": 9000.0}  # fmt: skip
    machine.write_machine_file("box", later)
    assert path.read_text() == committed
    machine.write_machine_file("box", {**later, "pgbouncer_version": "1.25.1"})
    data = yaml.safe_load(path.read_text())
    assert data["pgbouncer_version"] == "1.25.1"  # a new version is recorded
    assert data["odyssey_version"] == "odyssey 1.5.1" and data["collected_at"] == first["collected_at"]


PORT_FACTS = {"ip_local_port_range": "32768 60999", "tcp_tw_reuse": 2, "tcp_fin_timeout": 60}


def test_machine_schema_takes_the_client_hosts_port_settings() -> None:
    data = {"id": "test-2c-8g", **facts("quick"), **PORT_FACTS}
    assert MachineFile(**data).model_dump(include=set(PORT_FACTS)) == PORT_FACTS


def test_a_machine_file_without_the_port_settings_stays_valid() -> None:
    recorded = MachineFile(id="test-2c-8g", **facts("quick"))
    assert (recorded.ip_local_port_range, recorded.tcp_tw_reuse, recorded.tcp_fin_timeout) == (None,) * 3


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("ip_local_port_range", "32768", "expected two port numbers"),
        ("ip_local_port_range", "60999 32768", "lowest first"),
        ("ip_local_port_range", "0 60999", "from 1 to 65535"),
        ("ip_local_port_range", 32768, "valid string"),
        ("tcp_tw_reuse", 3, "0, 1 or 2"),
        ("tcp_fin_timeout", -1, "greater than or equal to 0"),
        ("tcp_fin_timeout", "sixty", "valid integer"),
    ],
)
def test_a_malformed_port_setting_is_one_line_naming_the_file_and_field(
    tmp_path: Path, field: str, value: object, message: str
) -> None:
    path = tmp_path / "box" / "machine.yaml"
    path.parent.mkdir()
    path.write_text(
        yaml.safe_dump({"id": "box", **facts("quick"), **PORT_FACTS, field: value}, sort_keys=False)
    )
    recorded, problems = load_machine_file(path)
    assert recorded is None
    [line] = problems
    assert line.startswith(f"{path}:") and f": {field}: " in line and message in line, line


def test_the_port_settings_are_read_from_proc() -> None:
    """This host's own /proc/sys/net/ipv4: the three values, in the form the schema takes."""
    read = machine.client_port_facts()
    assert set(read) == set(PORT_FACTS)
    low, high = (int(port) for port in str(read["ip_local_port_range"]).split())
    assert read["ip_local_port_range"] == " ".join(
        (machine.PROC_NET_IPV4 / "ip_local_port_range").read_text().split()
    )
    assert 1 <= low <= high <= 65535
    assert read["tcp_tw_reuse"] == int((machine.PROC_NET_IPV4 / "tcp_tw_reuse").read_text())
    assert read["tcp_fin_timeout"] == int((machine.PROC_NET_IPV4 / "tcp_fin_timeout").read_text())
    MachineFile(id="test-2c-8g", **facts("quick"), **read)


def test_port_settings_the_kernel_does_not_give_are_left_out(tmp_path: Path) -> None:
    (tmp_path / "ip_local_port_range").write_text("1024\t65535\n")
    (tmp_path / "tcp_tw_reuse").write_text("7\n")  # not a value the schema takes
    assert machine.client_port_facts(tmp_path) == {"ip_local_port_range": "1024 65535"}


def test_a_run_that_cannot_read_the_port_settings_keeps_those_recorded(results_dir: Path) -> None:
    machine.write_machine_file("box", {**facts("full"), **PORT_FACTS})
    path = machine.write_machine_file("box", facts("full"))
    assert {key: yaml.safe_load(path.read_text())[key] for key in PORT_FACTS} == PORT_FACTS
    path = machine.write_machine_file("box", {**facts("full"), **PORT_FACTS, "tcp_tw_reuse": 0})
    assert yaml.safe_load(path.read_text())["tcp_tw_reuse"] == 0


def test_machine_schema_takes_pgcats_allocator_and_older_files_lack_it() -> None:
    """pgcat declares a fact beside its version (its allocator): a field of its own, absent from older
    files."""
    allocator = "jemalloc (linked in)"
    recorded = MachineFile(id="test-2c-8g", **facts("quick"), pgcat_allocator=allocator)
    assert recorded.pgcat_allocator == allocator  # type: ignore[attr-defined]
    assert MachineFile(id="test-2c-8g", **facts("quick")).pgcat_allocator is None  # type: ignore[attr-defined]


def test_pooler_facts_say_the_allocator_of_the_pgcat_the_runs_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from connlab.poolers.pgcat import adapter as pgcat

    binary = tmp_path / "pgcat"
    binary.write_bytes(b"#!/bin/sh\necho 'pgcat 1.2.0'\n")
    binary.chmod(0o755)
    monkeypatch.setenv("PGCAT_BIN", str(binary))
    monkeypatch.setattr(pgcat, "DEBIAN_JEMALLOC", tmp_path / "libjemalloc.so.2")
    assert machine.pooler_facts()["pgcat_allocator"] == pgcat.GLIBC_MALLOC
    (tmp_path / "libjemalloc.so.2").write_bytes(b"")
    assert machine.pooler_facts()["pgcat_allocator"] == pgcat.PRELOADED_JEMALLOC
    assert pgcat.allocator(str(binary)) == (pgcat.PRELOADED_JEMALLOC, tmp_path / "libjemalloc.so.2")
    linked = tmp_path / "linked" / "pgcat"
    linked.parent.mkdir()
    linked.write_bytes(b"#!/bin/sh\n# " + pgcat.JEMALLOC_MARK + b": jemalloc's messages\n")
    linked.chmod(0o755)
    monkeypatch.setenv("PGCAT_BIN", str(linked))
    assert machine.pooler_facts()["pgcat_allocator"] == pgcat.LINKED_JEMALLOC
    monkeypatch.setenv("PGCAT_BIN", str(tmp_path / "missing"))
    assert machine.pooler_facts()["pgcat_allocator"] == NOT_AVAILABLE
