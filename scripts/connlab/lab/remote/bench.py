"""The bench for a named server (connlab.lab.remote.server): pgbench, the probes and the poolers on this
host, the server over the network, and everything the run made removed at its end, however it ends.

- Credentials. The password is in a file of the run's private folder, named to every child by PGPASSFILE,
  never in a command line, a result, a log or a page (connlab.lab.remote.login).
- Roles. The harness creates no role on a server it does not own: every role an experiment names is the
  URL's user there, and the server's own authentication (its password_encryption, recorded) is what it is.
- CPU. No budget: the server's cores are what the user stated (`--server-cores`), pgbench and the poolers
  share this host's cores. cpu_budget_method says `remote`.
- Poolers beside the client, as an application's side-car pooler: those whose config declares `remote`
  (PgBouncer, PgPool-II and Odyssey) start here and log in to the named server as the URL's user. The others
  (pgcat) are not set up for it: their windows are left out, named at the end, as for a pooler missing here.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import psycopg

from connlab.contract.experiment import Plan, Role, Workload
from connlab.contract.names import BENCH_DB, SERVER_USER
from connlab.contract.poolers.from_plan import plan_setup
from connlab.contract.poolers.registry import CONFIGS
from connlab.contract.poolers.setup import PoolerUser
from connlab.contract.remote import REMOTE_CPU_METHOD, RemoteServerFacts
from connlab.contract.tls import SSLMODE_PLAIN
from connlab.errors import LabError
from connlab.interrupts import run_in_group
from connlab.lab.bench import PGBENCH_INIT_TIMEOUT_S, Bench, check_poolers
from connlab.lab.cpu_budget import CpuPlan
from connlab.lab.host import find_bindir, find_program, free_port
from connlab.lab.poolers.base import PoolerProcess, PoolerUnavailable
from connlab.lab.poolers.registry import POOLERS
from connlab.lab.remote.login import login_password, password_file, private_folder
from connlab.lab.remote.plan import not_for_a_named_server
from connlab.lab.remote.server import RemoteServer, ServerFacts, connect_problem
from connlab.lab.remote.target import RemoteTarget
from connlab.lab.run_lock import hold_measurement_lock

LOGIN_CHECK_TIMEOUT_S = 2


@dataclass
class RemoteBudget:
    """What the harness asks of a CPU budget, for a server whose cores are not this host's: pgbench gets
    every core here, and the server's figures read from its host are not available."""

    plan: CpuPlan
    method: str = REMOTE_CPU_METHOD
    name: str = "remote"
    # No cgroup of the poolers' own either: their CPU is read from their process trees.
    pooler: None = None

    def enter(self) -> None:
        """A pooler here runs on this host's cores, beside pgbench."""

    def enter_client(self) -> None:
        """pgbench runs on every core of this host."""

    def set_cores(self, cores: float) -> None:
        """The server's cores are its own; the stated count is the window's server_cpu_budget."""

    def set_client_cores(self, cores: float | None) -> None:
        if cores is not None:
            raise LabError("a CPU quota for pgbench (client_cpu_share) needs a local server, not --server")

    def server_cpu_seconds(self) -> float | None:
        return None

    def memory_stat(self) -> dict[str, int]:
        return {}

    def release(self) -> None:
        """Nothing was created."""


def remote_budget(stated_cores: float) -> RemoteBudget:
    return RemoteBudget(CpuPlan(stated_cores, (), tuple(sorted(os.sched_getaffinity(0)))))


@dataclass
class RemoteBench(Bench):
    """A Bench whose server is named: windows over TCP, facts for machine.yaml, a round trip per window."""

    facts: dict[str, object] = field(default_factory=dict)

    def transport_of(self, workload: Workload) -> str:
        return "tcp"

    @property
    def calibration_transport(self) -> str:
        return "tcp"  # a named server's socket is on another host

    def machine_facts(self) -> dict[str, object]:
        return self.facts

    def round_trip_ms(self) -> float | None:
        server = self.cluster
        assert isinstance(server, RemoteServer)
        return server.round_trip_ms()


class RemoteLogin:
    """A pooler's start check as the URL's user: its admin user (postgres, trust on the pooler) has no login
    on a named server."""

    setup: object

    def accepts(self) -> bool:
        setup = self.setup
        user = setup.users[-1].name  # type: ignore[attr-defined]
        conninfo = self.conninfo(setup.databases[0], user)  # type: ignore[attr-defined]
        with contextlib.suppress(psycopg.Error):
            psycopg.connect(conninfo, autocommit=True, connect_timeout=LOGIN_CHECK_TIMEOUT_S).close()
            return True
        return False


def remote_adapter(kind: str) -> type[PoolerProcess] | None:
    """The kind's harness adapter, logging in as the URL's user, where its config declares it can run in
    front of a named server (PoolerConfig.remote); None where it cannot."""
    adapter = POOLERS.get(kind)
    if adapter is None or not CONFIGS[kind].remote:
        return None
    return type(f"Remote{adapter.__name__}", (RemoteLogin, adapter), {})


def prepare_database(server: RemoteServer, plan: Plan, pgbench: str, note: str) -> None:
    """The run's own database, created and marked, with pgbench's tables at the spec's scale."""
    server.create_own_database(note)
    command = [pgbench, *server.client_args(), "-i", "-s", str(plan.scale), "-q", BENCH_DB]
    environment = {**os.environ, "PGSSLMODE": SSLMODE_PLAIN}
    try:
        result = run_in_group(command, timeout_s=PGBENCH_INIT_TIMEOUT_S, env=environment)
    except subprocess.TimeoutExpired as error:
        raise LabError(f"pgbench -i did not finish within {PGBENCH_INIT_TIMEOUT_S} s") from error
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines() or [f"exit {result.returncode}"]
        raise LabError(f"pgbench -i on {server.url.shown} failed: {lines[-1]}")
    server.execute("VACUUM ANALYZE", dbname=BENCH_DB)


def server_facts(
    server: RemoteServer, facts: ServerFacts, stated_cores: float, rtt_ms: float
) -> dict[str, object]:
    """machine.yaml's remote_server and server_cores."""
    remote = RemoteServerFacts(
        host=server.host, port=server.port, client_host=os.uname().nodename, stated_cores=stated_cores,
        server_version=facts.version, max_connections=facts.max_connections,
        shared_buffers=facts.settings["shared_buffers"], ssl=facts.settings["ssl"],
        password_encryption=facts.settings["password_encryption"], rtt_ms=rtt_ms,
        skipped=sorted(server.skipped.values()),
    )  # fmt: skip
    return {"remote_server": remote.model_dump(), "server_cores": stated_cores}


def stand_in_roles(plan: Plan, user: str) -> dict[str, Role]:
    """Every role the experiment names is the URL's user on a named server (the harness creates none)."""
    return {role.name: Role.model_construct(name=user, auth=role.auth) for role in plan.spec.roles}


def start_poolers(
    bench: RemoteBench, plan: Plan, server: RemoteServer, password: str | None, stack: contextlib.ExitStack
) -> None:
    """Each pooler the experiment lists, here, in front of the named server, as the URL's user."""
    user = server.url.user
    method = "scram-sha-256" if password else "trust"
    users = [PoolerUser(user, password or "", password)]
    hba = [f"local all {user} {method}", f"host all {user} 127.0.0.1/32 {method}"]
    if user != SERVER_USER:  # the admin console's user, on the pooler only
        users.insert(0, PoolerUser(SERVER_USER))
        hba = [line for role in (Role(name=SERVER_USER, auth="trust"),) for line in role.hba_lines()] + hba
    for spec in plan.spec.poolers:
        adapter_class = remote_adapter(spec.kind)
        if adapter_class is None:
            bench.unavailable[spec.instance] = f"{spec.kind}: not set up in front of a remote server"
            continue
        setup = plan_setup(
            plan, spec.instance, root=server.root / spec.instance, port=free_port(), server_host=server.host,
            server_port=server.port, secret=lambda role: "",
        )  # fmt: skip
        setup.users, setup.hba_lines, setup.budget = users, hba, bench.budget
        try:
            bench.poolers[spec.instance] = stack.enter_context(adapter_class(setup))
        except PoolerUnavailable as error:
            bench.unavailable[spec.instance] = str(error)


def remote_opener(target: RemoteTarget) -> Callable[..., contextlib.AbstractContextManager[Bench]]:
    """An opener for connlab.lab.sweep.run_sweep (in place of open_bench)."""

    @contextlib.contextmanager
    def open_remote_bench(plan: Plan, name: str, bindir: Path | None = None) -> Iterator[Bench]:
        # The entry (connlab.lab.remote.run) left such plans out already; an opener reached another way
        # must still refuse them before it touches the server.
        refusal = not_for_a_named_server(plan)
        if refusal:
            raise LabError(refusal)
        check_poolers(plan)
        with contextlib.ExitStack() as stack:
            stack.enter_context(hold_measurement_lock())
            folder = stack.enter_context(private_folder())
            local_bindir = bindir or find_bindir()
            server = RemoteServer(target.url, folder, local_bindir)
            password = login_password(target.url, server)
            stack.enter_context(password_file(folder, target.url.user, password))
            facts = server.facts()
            if not target.keep:
                stack.callback(_drop, server, target.say)
            pgbench = find_program("pgbench", local_bindir)
            note = f"run {name} from {os.uname().nodename} at {datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ}"
            prepare_database(server, plan, pgbench, note)
            server.allow_what_the_role_may(facts, plan.spec.database.prewarm)
            for why in server.skipped.values():
                target.say(f"not on this server: {why}")
            budget = remote_budget(target.stated_cores)
            server.budget = budget
            bench = RemoteBench(
                server, budget, pgbench, "tcp", stand_in_roles(plan, target.url.user),  # type: ignore[arg-type]
                default_user=target.url.user,
                facts=server_facts(server, facts, target.stated_cores, server.round_trip_ms()),
            )  # fmt: skip
            start_poolers(bench, plan, server, password, stack)
            yield bench
            if target.keep:
                target.say(f"kept database {BENCH_DB} on {target.url.shown} (--keep); drop it when done")

    return open_remote_bench


def _drop(server: RemoteServer, say: Callable[[str], None]) -> None:
    """At the end, however the run ended: the harness's database, if it is there and the harness's."""
    try:
        if server.drop_own_database():
            say(f"dropped database {BENCH_DB} on {server.url.shown}")
    except psycopg.Error as error:
        say(f"could not drop database {BENCH_DB} on {server.url.shown}: {connect_problem(server.url, error)}")
