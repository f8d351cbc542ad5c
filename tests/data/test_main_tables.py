"""The main tables (connlab.data.main_tables): the machines read from their machine.yaml (cached by file
status), published folders marked, and the pooler versions each machine records."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest
import yaml

from connlab.data.aggregate import aggregate_all
from connlab.data.main_tables import load_machines, register_machines
from connlab.paths import MACHINE_FILE_NAME
from support.helpers import db_records, records
from support.rows import RunWriter, machine_facts


@pytest.fixture
def results_dir(tmp_path: Path) -> Path:
    """Two measured machines and a published folder, their machine.yaml only."""
    results = tmp_path / "results"
    for machine in ("alpha", "beta", "published-ref"):
        (results / machine).mkdir(parents=True)
        (results / machine / MACHINE_FILE_NAME).write_text(yaml.safe_dump(machine_facts(machine)))
    return results


def test_machines_list_marks_published_folders(results_dir: Path) -> None:
    machines = {machine["id"]: machine for machine in load_machines(results_dir)}
    assert set(machines) == {"alpha", "beta", "published-ref"}
    assert machines["published-ref"]["published"] is True
    assert machines["alpha"]["published"] is False
    assert machines["alpha"]["cpu_model"] == "Test CPU 3000"


def test_machine_files_are_read_again_only_when_changed(results_dir: Path, tmp_path: Path) -> None:
    """The cache gives what parsing gives; a machine.yaml edited, added or removed is read as it now is."""
    cache = tmp_path / "machine-files.json"
    parsed = load_machines(results_dir)
    assert load_machines(results_dir, cache) == parsed
    assert cache.exists() and load_machines(results_dir, cache) == parsed
    alpha = results_dir / "alpha" / MACHINE_FILE_NAME
    alpha.write_text(alpha.read_text().replace("Test CPU 3000", "Test CPU 4000, edited"))
    shutil.rmtree(results_dir / "beta")
    shutil.copytree(results_dir / "alpha", results_dir / "gamma")
    machines = {machine["id"]: machine for machine in load_machines(results_dir, cache)}
    assert set(machines) == {"alpha", "gamma", "published-ref"}
    assert machines["alpha"]["cpu_model"] == machines["gamma"]["cpu_model"] == "Test CPU 4000, edited"
    assert list(machines.values()) == load_machines(results_dir)


def test_pooler_versions_say_which_poolers_ran_on_each_machine(tmp_path: Path) -> None:
    """Each pooler kind machine.yaml records becomes a row, with what else the file records of how it ran
    (pgcat's allocator); one whose program was missing is not available, and a file from before poolers were
    recorded gives no rows rather than a guess."""
    results = tmp_path / "results"
    allocator = "jemalloc (libjemalloc2 preloaded)"
    for machine, extra in (
        ("gamma", {"pgbouncer_version": "1.18.0", "odyssey_version": "not available on this machine"}),
        ("delta", {}),
        ("epsilon", {"pgcat_version": "1.2.0", "pgcat_allocator": allocator}),
    ):
        (results / machine).mkdir(parents=True)
        (results / machine / "machine.yaml").write_text(yaml.safe_dump(machine_facts(machine, **extra)))
    connection = duckdb.connect()
    register_machines(connection, load_machines(results))
    assert records(connection, "SELECT * FROM main.pooler_versions ORDER BY machine, pooler") == [
        {
            "machine": "epsilon",
            "pooler": "pgcat",
            "version": "1.2.0",
            "available": True,
            "facts": f"allocator: {allocator}",
        },
        {
            "machine": "gamma",
            "pooler": "odyssey",
            "version": "not available on this machine",
            "available": False,
            "facts": None,
        },
        {"machine": "gamma", "pooler": "pgbouncer", "version": "1.18.0", "available": True, "facts": None},
    ]


def test_machines_carry_the_client_hosts_port_limit(tmp_path: Path) -> None:
    """The client's ports (ip_local_port_range's, both ends counted), its tcp_tw_reuse and tcp_fin_timeout
    where machine.yaml records them, NULL where it does not; loopback unless the server was another host."""
    results = tmp_path / "results"
    ports = {"ip_local_port_range": "32768 60999", "tcp_tw_reuse": 2, "tcp_fin_timeout": 30}
    remote = {"host": "db.example.org", "port": 5432, "client_host": "box", "stated_cores": 4.0,
              "server_version": "16.4", "max_connections": 100, "shared_buffers": "128MB", "ssl": "on",
              "password_encryption": "scram-sha-256", "rtt_ms": 0.4}  # fmt: skip
    for machine, extra in (
        ("recorded", ports),
        ("older", {}),
        ("remote", {**ports, "remote_server": remote}),
        ("remote-local", {**ports, "remote_server": {**remote, "host": "127.0.0.1"}}),
    ):
        (results / machine).mkdir(parents=True)
        (results / machine / "machine.yaml").write_text(yaml.safe_dump(machine_facts(machine, **extra)))
    connection = duckdb.connect()
    register_machines(connection, load_machines(results))
    sql = (
        "SELECT id, client_ports, tcp_tw_reuse, tcp_fin_timeout, time_wait_s, server_on_loopback "
        "FROM main.machines ORDER BY id"
    )
    assert records(connection, sql) == [
        {"id": "older", "client_ports": None, "tcp_tw_reuse": None, "tcp_fin_timeout": None,
         "time_wait_s": 60, "server_on_loopback": True},
        {"id": "recorded", "client_ports": 28232, "tcp_tw_reuse": 2, "tcp_fin_timeout": 30,
         "time_wait_s": 60, "server_on_loopback": True},
        {"id": "remote", "client_ports": 28232, "tcp_tw_reuse": 2, "tcp_fin_timeout": 30,
         "time_wait_s": 60, "server_on_loopback": False},
        {"id": "remote-local", "client_ports": 28232, "tcp_tw_reuse": 2, "tcp_fin_timeout": 30,
         "time_wait_s": 60, "server_on_loopback": True},
    ]  # fmt: skip


@pytest.mark.slow
def test_a_run_calibrated_off_its_machine_marks_the_verdicts_that_read_it(
    tmp_path: Path, write_run: RunWriter
) -> None:
    """A quick run whose calibration lies further from machine.yaml's than the calibration's spread is
    kept, not refused: main.measured names its calibration, and every verdict that reads it says
    unverified, with both figures. A run within the spread marks nothing, nor does a tiny run's
    calibration (the tests' own, never held: connlab.contract.provenance.HELD_PROFILES)."""
    results = tmp_path / "results"
    for machine, profile, calibration in (("off", "quick", 6000.0), ("calm", "quick", 9000.0),
                                          ("tiny", "tiny", 3000.0)):  # fmt: skip
        (results / machine).mkdir(parents=True)
        facts = machine_facts(machine, profile, calibration_tps=10000.0, calibration_spread_tps=300.0)
        (results / machine / MACHINE_FILE_NAME).write_text(yaml.safe_dump(facts))
        rows = [
            {"clients": clients, "pass_no": number, "run_calibration_tps": calibration,
             "run_calibration_spread_tps": 150.0}
            for number in (1, 2, 3)
            for clients in (1, 2, 4)
        ]  # fmt: skip
        write_run(results, machine, rows, profile=profile)
    database = aggregate_all(results_dir=results, out_dir=tmp_path / "data")
    assert db_records(
        database,
        "SELECT machine, off_calibrations FROM main.measured WHERE experiment = 'clients-sweep' ORDER BY 1",
    ) == [
        {"machine": "calm", "off_calibrations": []},
        {"machine": "off", "off_calibrations": [6000.0]},
        {"machine": "tiny", "off_calibrations": []},
    ]
    claims = json.loads((tmp_path / "data" / "claims" / "too-many-connections.json").read_text())
    verdicts = [
        verdict
        for claim in claims["claims"]
        for verdict in claim["verdicts"]
        if verdict.get("machine") and verdict["verdict"] != "not measured"
    ]
    assert {verdict["machine"] for verdict in verdicts} == {"off", "calm", "tiny"}
    for verdict in verdicts:
        if verdict["machine"] == "off":
            assert verdict["unverified"] == (
                "A run this verdict reads calibrated at 6,000 tps, this machine at 10,000 tps: further apart "
                "than the calibration's spread, so the machine was under other load then, or another "
                "machine measured them."
            )
        else:
            assert verdict["unverified"] is None
