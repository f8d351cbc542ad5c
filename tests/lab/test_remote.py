"""A named server (connlab run --server), without a server: the URL, the one-line causes of a refused
login, the room max_connections leaves and the plan fitted to it, the results folder's name, the password
file, the budget that is not one, and machine.yaml's record of the server."""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

from connlab.contract.experiment import experiment_names, make_plan
from connlab.contract.machine_schema import SAFE_ID_PATTERN, MachineFile
from connlab.contract.remote import NOT_AVAILABLE_REMOTE, REMOTE_CPU_METHOD
from connlab.errors import LabError
from connlab.lab.counters import Snapshot, window_metrics
from connlab.lab.overall import Overall
from connlab.lab.remote.bench import remote_budget, stand_in_roles
from connlab.lab.remote.login import PASSWORD_FILE, password_file
from connlab.lab.remote.plan import confirmation, fit_to_server, trim_message
from connlab.lab.remote.run import remote_machine_id
from connlab.lab.remote.server import HARNESS_CONNECTIONS, ServerFacts, connect_problem
from connlab.lab.remote.target import parse_server_url
from support.paths import REPO_ROOT

SECRET = "s3cr:et\\pw"


def test_a_url_gives_host_port_user_and_database_and_keeps_its_password_out_of_sight() -> None:
    url = parse_server_url(
        f"postgresql://app:{SECRET.replace(':', '%3A').replace(chr(92), '%5C')}@db.example:6432/ops"
    )
    assert (url.host, url.port, url.user, url.dbname, url.password) == (
        "db.example",
        6432,
        "app",
        "ops",
        SECRET,
    )
    assert url.shown == "postgresql://app@db.example:6432/ops"
    assert SECRET not in repr(url) and SECRET not in url.shown
    plain = parse_server_url("postgresql://app@10.0.0.5")
    assert (plain.port, plain.dbname, plain.password) == (5432, "postgres", None)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("postgresql://10.0.0.5:5432/postgres", "name the user"),
        ("postgresql://app@%2Fvar%2Frun%2Fpostgresql/postgres", "over TCP"),
        ("postgresql://app@a,b/postgres", "over TCP"),
        ("postgresql://app@db/postgres?sslmode=require", "sslmode=require"),
        ("postgresql://app@db/postgres?application_name=x", "application_name: not supported"),
        ("postgresql://app@db:99999/postgres", "not a TCP port"),
        ("not a url = =", "not a PostgreSQL URL"),
    ],
)
def test_a_bad_url_is_one_line_naming_what_is_wrong(url: str, message: str) -> None:
    with pytest.raises(LabError, match=re.escape(message)) as raised:
        parse_server_url(url)
    assert "\n" not in str(raised.value)


URL = parse_server_url("postgresql://app@10.213.1.2:5432/postgres")


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        ('connection failed: connection to server at "10.213.1.2", port 5432 failed: FATAL:  password '
         'authentication failed for user "app"', "wrong password for user app"),
        ("connection failed: fe_sendauth: no password supplied", "PGPASSWORD or ~/.pgpass"),
        ('FATAL:  no pg_hba.conf entry for host "10.213.1.1", user "app", database "postgres", no encryption',
         "requires TLS"),
        ('FATAL:  pg_hba.conf rejects connection for host "10.213.1.1", user "app", database "postgres", '
         "no encryption", "requires TLS"),
        ('FATAL:  no pg_hba.conf entry for host "10.213.1.1", user "app", database "postgres", '
         "SSL encryption", "lets no connection in"),
        ('connection failed: connection to server at "10.213.1.2", port 5432 failed: Connection refused'
         "\n\tIs the server running",
         "cannot reach postgresql://app@10.213.1.2:5432/postgres: connection to server"),
    ],
)  # fmt: skip
def test_a_refused_login_is_said_by_its_cause(error: str, expected: str) -> None:
    line = connect_problem(URL, Exception(error))
    assert expected in line and "\n" not in line and line.startswith(("postgresql://", "cannot reach"))


def facts(max_connections: int, others: int, **settings: str) -> ServerFacts:
    values = {"max_connections": str(max_connections), "superuser_reserved_connections": "3", **settings}
    return ServerFacts("16.4", values, superuser=False, may_checkpoint=False, other_connections=others)


def test_the_room_for_clients_is_what_max_connections_leaves() -> None:
    assert facts(100, 0).connection_room == 100 - 3 - HARNESS_CONNECTIONS
    assert facts(100, 10, reserved_connections="5").connection_room == 100 - 3 - 5 - 10 - HARNESS_CONNECTIONS


def test_the_plan_keeps_only_the_windows_the_server_has_room_for() -> None:
    plan = make_plan("pgbouncer-trade", "tiny", server_cores=2)
    assert 16 in plan.client_counts
    fitted, notes = fit_to_server(plan, room=10)
    direct = [w for w in fitted.windows() if w.workload.target == "direct"]
    assert direct and max(w.clients for w in direct) <= 10
    # Through PgBouncer a pool of 2x = 4 reaches the server, whatever the clients: those windows stay.
    pooled = [w for w in plan.windows() if w.workload.target != "direct"]
    assert [w.key for w in fitted.windows() if w.workload.target != "direct"] == [w.key for w in pooled]
    assert any(note.startswith("direct-select-only at 16") for note in notes)
    assert len(fitted.windows()) < len(plan.windows()) and fitted.spec_hash != plan.spec_hash
    roomy, none = fit_to_server(plan, room=1000)
    assert none == [] and [w.key for w in roomy.windows()] == [w.key for w in plan.windows()]
    line = trim_message(URL, 20, 10, notes)
    assert line.startswith("10.213.1.2:5432: max_connections 20 leaves room for 10") and "\n" not in line


def test_an_experiment_about_refusal_keeps_the_windows_the_server_will_refuse() -> None:
    plan = make_plan("too-many-clients", "tiny", server_cores=2)
    assert fit_to_server(plan, room=1) == (plan, [])


def test_the_confirmation_names_the_server_the_time_and_the_load_never_the_password() -> None:
    plan = make_plan("clients-sweep", "tiny", server_cores=4)
    url = parse_server_url(f"postgresql://app:{SECRET.replace(':', '%3A')}@db:5432/")
    text = confirmation([plan], url, 4)
    assert text.startswith("clients-sweep (tiny) will load postgresql://app@db:5432/postgres (stated 4")
    assert SECRET not in text
    assert f"{len(plan.windows())} windows" in text and f"up to {max(plan.client_counts)} clients" in text
    assert "it creates database bench" in text and "drops it" in text


def test_one_confirmation_covers_a_set_of_experiments_with_their_total_time_and_load() -> None:
    """run-all and contribute ask once: every experiment's windows, the largest client count, the time
    estimated as the progress line's ETA is, and each experiment's own database."""
    plans = [make_plan(name, "tiny", server_cores=2) for name in ("clients-sweep", "pgbouncer-trade")]
    text = confirmation(plans, URL, 2)
    windows = sum(len(plan.windows()) for plan in plans)
    minutes = Overall.of([(plan, len(plan.windows())) for plan in plans]).total_s / 60
    assert text.startswith("clients-sweep, pgbouncer-trade (tiny) will load postgresql://app@10.213.1.2")
    assert f"for about {max(minutes, 1):.0f} min: {windows} windows" in text
    assert f"up to {max(w.clients for plan in plans for w in plan.windows())} clients" in text
    assert "each creates database bench" in text
    many = confirmation([make_plan(name, "tiny", server_cores=2) for name in experiment_names()[:6]], URL, 2)
    assert many.startswith("6 experiments (tiny)")


def test_the_results_folder_names_the_server_and_the_client_host() -> None:
    machine = remote_machine_id(URL)
    assert re.fullmatch(SAFE_ID_PATTERN, machine) and machine.startswith("10.213.1.2-5432-from-")
    long = remote_machine_id(parse_server_url(f"postgresql://a@{'x' * 60}.Example.COM:5432/"))
    assert re.fullmatch(SAFE_ID_PATTERN, long) and "-from-" in long


def test_the_password_file_is_private_and_the_environment_restored(tmp_path: Path) -> None:
    os.environ["PGPASSWORD"] = "from-the-environment"
    try:
        with pytest.raises(RuntimeError), password_file(tmp_path, "app", SECRET):
            path = tmp_path / PASSWORD_FILE
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
            assert path.read_text() == "*:*:*:app:s3cr\\:et\\\\pw\n"
            assert os.environ["PGPASSFILE"] == str(path) and "PGPASSWORD" not in os.environ
            raise RuntimeError("a run that fails still restores the environment")
        assert os.environ["PGPASSWORD"] == "from-the-environment" and "PGPASSFILE" not in os.environ
    finally:
        os.environ.pop("PGPASSWORD", None)


def test_a_remote_budget_gives_pgbench_every_core_and_reads_nothing_of_the_server() -> None:
    budget = remote_budget(16)
    assert budget.method == REMOTE_CPU_METHOD and budget.plan.budget == 16
    assert (
        budget.plan.client_cores == tuple(sorted(os.sched_getaffinity(0))) and budget.plan.server_cores == ()
    )
    assert budget.server_cpu_seconds() is None and budget.memory_stat() == {}
    budget.set_client_cores(None)
    with pytest.raises(LabError, match="needs a local server"):
        budget.set_client_cores(0.5)


def test_a_window_without_the_servers_cpu_time_leaves_its_column_empty() -> None:
    before = Snapshot(0.0, None, 0, 100, None, 0, 0)
    after = Snapshot(2.0, None, 0, 300, None, 1, 0)
    metrics = window_metrics(before, after, client_cpu_s=1.0, client_cores=2)
    assert metrics["server_cpu_cores"] is None and metrics["client_cpu_cores"] == 0.5


def test_every_role_of_an_experiment_is_the_urls_user_on_a_named_server() -> None:
    plan = make_plan("pgbouncer-trade", "tiny", server_cores=2)
    roles = stand_in_roles(plan, "app")
    assert set(roles) == {role.name for role in plan.spec.roles} and {r.name for r in roles.values()} == {
        "app"
    }


def test_machine_yaml_records_the_remote_server() -> None:
    remote = {
        "host": "10.213.1.2", "port": 5432, "client_host": "client", "stated_cores": 16.0,
        "server_version": "16.4", "max_connections": 200, "shared_buffers": "8GB", "ssl": "on",
        "password_encryption": "scram-sha-256", "rtt_ms": 0.42, "skipped": [],
    }  # fmt: skip
    machine = MachineFile.model_validate({
        "id": "10.213.1.2-5432-from-x", "cpu_model": "x", "cores": 2, "threads": 2, "memory_gib": 8,
        "kernel": "6.1", "os": "Debian", "virtualised": "none", "postgres_version": "16.4",
        "pgbench_version": "16.4", "cpu_budget_method": "remote", "profile": "tiny",
        "collected_at": "2026-12-04T00:00:00Z", "server_cores": 16.0, "remote_server": remote,
    })  # fmt: skip
    assert (
        machine.remote_server is not None and machine.remote_server.server_host_probes == NOT_AVAILABLE_REMOTE
    )
    with pytest.raises(ValueError, match="password"):
        MachineFile.model_validate({**machine.model_dump(), "remote_server": {**remote, "password": "x"}})


# make -n starts nothing, but a make of a measuring target reads as e2e to the process markers.
@pytest.mark.e2e
@pytest.mark.parametrize("target", ["run", "run-all", "contribute"])
def test_make_hands_the_named_server_to_every_measuring_target(target: str) -> None:
    url = "postgresql://app@db.example:5432/postgres"
    done = subprocess.run(
        ["make", "-n", target, f"SERVER_URL={url}", "SERVER_CORES=16", "YES=1", "KEEP=1"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    [command] = [line for line in done.stdout.splitlines() if line.startswith(f".venv/bin/connlab {target} ")]
    assert f'--server "{url}" --server-cores "16" --yes --keep' in command
