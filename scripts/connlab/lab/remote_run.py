"""`connlab run EXP --server URL --server-cores N` (and run-all, contribute): experiments' windows against a
server the user names, from this host. The URL and the server are checked first (it answers, the password is
right, its room for connections), each plan is fitted to its max_connections, the user confirms the load of
them all at once (or gave --yes), and each sweep runs with the named server's bench
(connlab.lab.remote_bench)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console

from connlab.contract.experiment import Plan, make_plan
from connlab.errors import LabError
from connlab.lab.host import find_bindir
from connlab.lab.machine import machine_id_for_run
from connlab.lab.remote_bench import (
    RemoteTarget,
    login_password,
    password_file,
    private_folder,
    remote_opener,
)
from connlab.lab.remote_plan import (
    confirmation,
    fit_to_server,
    not_for_a_named_server,
    remote_machine_id,
    trim_message,
)
from connlab.lab.remote_server import RemoteServer, ServerFacts, ServerUrl, parse_server_url
from connlab.lab.versions import BenchOpener


@dataclass(frozen=True)
class ServerRuns:
    """Confirmed runs against a named server: the plans fitted to it, the results folder, the bench."""

    plans: list[Plan]
    machine_id: str
    opener: BenchOpener


def _server_facts(url: ServerUrl) -> ServerFacts:
    """The server's facts, over a login checked the way the runs will log in."""
    with private_folder() as folder:
        server = RemoteServer(url, folder, find_bindir())
        password = login_password(url, server)
        with password_file(folder, url.user, password):
            return server.facts()


def prepare_server_runs(
    experiments: list[str],
    profile: str,
    server_url: str,
    stated_cores: float | None,
    machine: str | None,
    keep: bool,
    confirm: Callable[[str], bool] | None,
    console: Console,
) -> ServerRuns:
    """Check the server, fit each experiment's plan to it, and ask once for them all. An experiment of a
    set that cannot run against a named server, or of which no window fits, is left out and said so; alone,
    it stops the command. confirm: asks the user whether to go on (None: --yes, go on without asking)."""
    url = parse_server_url(server_url)
    if stated_cores is None or stated_cores <= 0:
        raise LabError("--server needs --server-cores N: the server's cores, which SQL cannot see")
    plans = [make_plan(name, profile, server_cores=stated_cores) for name in experiments]
    refusals = {plan.experiment: why for plan in plans if (why := not_for_a_named_server(plan))}
    if len(plans) == 1 and refusals:
        raise LabError(next(iter(refusals.values())))
    facts = _server_facts(url)
    fitted: list[Plan] = []
    for plan in plans:
        if plan.experiment in refusals:
            console.print(f"left out: {refusals[plan.experiment]}", highlight=False)
            continue
        plan, notes = fit_to_server(plan, facts.connection_room)
        if notes:
            line = trim_message(url, facts.max_connections, facts.connection_room, notes)
            console.print(line if len(plans) == 1 else f"{plan.experiment}: {line}", highlight=False)
        if plan.windows():
            fitted.append(plan)
        elif len(plans) > 1:
            line = f"left out: no window of {plan.experiment} fits its max_connections"
            console.print(line, highlight=False)
    if not fitted:
        what = experiments[0] if len(plans) == 1 else "these experiments"
        raise LabError(f"{url.shown}: no window of {what} fits its max_connections; nothing was done")
    question = confirmation(fitted, url, stated_cores)
    if confirm is not None:
        if not sys.stdin.isatty():
            raise LabError(f"{question}. Not confirmed: rerun with --yes to run without asking")
        if not confirm(f"{question}. Go on?"):
            raise LabError("not confirmed; nothing was done")
    machine_id = machine_id_for_run(machine or os.environ.get("MACHINE") or remote_machine_id(url))
    target = RemoteTarget(url, stated_cores, keep, say=lambda line: console.print(line, highlight=False))
    return ServerRuns(fitted, machine_id, remote_opener(target))
