"""`connlab run EXP --server URL --server-cores N`: an experiment's windows against a server the user names,
from this host. The URL and the server are checked first (it answers, the password is right, its room for
connections), the plan is fitted to its max_connections, the user confirms the load (or gave --yes), and the
sweep runs with the named server's bench (connlab.lab.remote_bench)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from connlab.contract.experiment import make_plan
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
from connlab.lab.remote_plan import confirmation, fit_to_server, remote_machine_id, trim_message
from connlab.lab.remote_server import RemoteServer, parse_server_url
from connlab.lab.sweep import run_sweep


def run_against_server(
    experiment: str,
    profile: str,
    server_url: str,
    stated_cores: float | None,
    machine: str | None,
    keep: bool,
    confirm: Callable[[str], bool] | None,
    console: Console,
) -> Path:
    """confirm: asks the user whether to go on (None: --yes, go on without asking)."""
    url = parse_server_url(server_url)
    if stated_cores is None or stated_cores <= 0:
        raise LabError("--server needs --server-cores N: the server's cores, which SQL cannot see")
    plan = make_plan(experiment, profile, server_cores=stated_cores)
    with private_folder() as folder:
        server = RemoteServer(url, folder, find_bindir())
        password = login_password(url, server)
        with password_file(folder, url.user, password):
            facts = server.facts()
    plan, notes = fit_to_server(plan, facts.connection_room)
    if notes:
        console.print(trim_message(url, facts.max_connections, facts.connection_room, notes), highlight=False)
    if not plan.windows():
        raise LabError(f"{url.shown}: no window of {experiment} fits its max_connections; nothing was done")
    question = confirmation(plan, url, stated_cores)
    if confirm is not None:
        if not sys.stdin.isatty():
            raise LabError(f"{question}. Not confirmed: rerun with --yes to run without asking")
        if not confirm(f"{question}. Go on?"):
            raise LabError("not confirmed; nothing was done")
    machine_id = machine_id_for_run(machine or os.environ.get("MACHINE") or remote_machine_id(url))
    target = RemoteTarget(url, stated_cores, keep, say=lambda line: console.print(line, highlight=False))
    return run_sweep(plan, machine_id, console, opener=remote_opener(target))
