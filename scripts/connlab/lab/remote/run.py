"""The entry of `connlab run EXP --server URL --server-cores N` (and run-all, contribute): experiments'
windows against a server the user names, from this host. The options are parsed once
(connlab.lab.remote.target), the server is checked (it answers, the password is right, its room for
connections), each plan is fitted to its max_connections (connlab.lab.remote.plan), the user confirms the
load of them all at once (or gave --yes), and each sweep runs with the named server's bench
(connlab.lab.remote.bench).

The results folder names both hosts: `<server host>-<port>-from-<client shape>`, unless the user names one.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console

from connlab.contract.experiment import Plan, make_plan
from connlab.contract.machine_schema import SAFE_ID_PATTERN
from connlab.errors import LabError
from connlab.lab.machine import machine_id_for_run, shape_id
from connlab.lab.remote.bench import remote_opener
from connlab.lab.remote.login import facts_over_login
from connlab.lab.remote.plan import confirmation, fit_to_server, not_for_a_named_server, trim_message
from connlab.lab.remote.target import ServerUrl, parse_target
from connlab.lab.versions import BenchOpener

MAX_ID_LENGTH = 64


@dataclass(frozen=True)
class ServerRuns:
    """Confirmed runs against a named server: the plans fitted to it, the results folder, the bench."""

    plans: list[Plan]
    machine_id: str
    opener: BenchOpener


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
    target = parse_target(server_url, stated_cores, keep, lambda line: console.print(line, highlight=False))
    url = target.url
    plans = [make_plan(name, profile, server_cores=target.stated_cores) for name in experiments]
    refusals = {plan.experiment: why for plan in plans if (why := not_for_a_named_server(plan))}
    if len(plans) == 1 and refusals:
        raise LabError(next(iter(refusals.values())))
    facts = facts_over_login(url)
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
    question = confirmation(fitted, url, target.stated_cores)
    if confirm is not None:
        if not sys.stdin.isatty():
            raise LabError(f"{question}. Not confirmed: rerun with --yes to run without asking")
        if not confirm(f"{question}. Go on?"):
            raise LabError("not confirmed; nothing was done")
    machine_id = machine_id_for_run(machine or os.environ.get("MACHINE") or remote_machine_id(url))
    return ServerRuns(fitted, machine_id, remote_opener(target))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-.") or "server"


def remote_machine_id(url: ServerUrl) -> str:
    """`<server host>-<port>-from-<client shape>`: a results folder per server and client host pair."""
    client = f"-from-{shape_id()}"
    server = f"{_slug(url.host)}-{url.port}"[: MAX_ID_LENGTH - len(client)].strip("-.")
    machine_id = f"{server}{client}"
    assert re.fullmatch(SAFE_ID_PATTERN, machine_id), machine_id
    return machine_id
