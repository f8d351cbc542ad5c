"""What a run exposes: the throwaway server and PgBouncer listen on loopback and unix sockets only, and
the passwords generated for each run's SCRAM roles reach no result, no log and no check-it-yourself
block."""

from __future__ import annotations

import contextlib
import ipaddress
from pathlib import Path

import psutil
import pytest

from connlab.contract.experiment import experiment_names, make_plan
from connlab.site.render.snippets import pgbench_block
from support.lab_watch import lab_processes, start_run, wait_for
from support.paths import REPO_ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("require_root", "require_postgres")]


def listening_addresses(processes: list[psutil.Process]) -> set[str]:
    addresses = set()
    for process in processes:
        with contextlib.suppress(psutil.Error):
            for connection in process.net_connections(kind="inet"):
                if connection.status == psutil.CONN_LISTEN:
                    addresses.add(connection.laddr.ip)
    return addresses


def scram_password(env: dict[str, str]) -> str | None:
    """PGPASSWORD of a running pgbench of this run (only SCRAM windows are given one)."""
    build = env["CONNLAB_BUILD_DIR"]
    for process in psutil.process_iter(["name", "cmdline"]):
        if process.info["name"] == "pgbench" and build in " ".join(process.info["cmdline"] or []):
            with contextlib.suppress(psutil.Error):
                password = process.environ().get("PGPASSWORD")
                if password:
                    return password
    return None


def files_containing(root: Path, secret: str) -> list[Path]:
    found = []
    for path in root.rglob("*"):
        with contextlib.suppress(OSError):
            if path.is_file() and secret.encode() in path.read_bytes():
                found.append(path)
    return found


def test_loopback_only_and_generated_passwords_stay_in_memory(
    connlab_env: dict[str, str], shared_tmp: Path
) -> None:
    log = shared_tmp / "run.log"
    process = start_run(connlab_env, "pgbouncer", log)
    seen: dict[str, set[str]] = {"postgres": set(), "pgbouncer": set()}
    passwords: set[str] = set()

    def observe() -> bool:
        for name in seen:
            seen[name] |= listening_addresses(lab_processes(connlab_env, name))
        password = scram_password(connlab_env)
        if password:
            passwords.add(password)
        return bool(passwords) and all(seen.values())

    wait_for(process, observe, "a SCRAM window through PgBouncer", log)
    assert process.wait(timeout=300) == 0, log.read_text()[-2000:]

    for name, addresses in seen.items():
        assert addresses, f"{name} listened on no TCP address"
        assert all(ipaddress.ip_address(address).is_loopback for address in addresses), (name, addresses)

    [password] = passwords
    assert len(password) >= 24  # generated for the run, not a word from a file
    assert password not in log.read_text()
    assert files_containing(Path(connlab_env["CONNLAB_RESULTS_DIR"]), password) == []
    assert files_containing(Path(connlab_env["CONNLAB_BUILD_DIR"]), password) == []
    blocks = "\n".join(pgbench_block(make_plan(name, "tiny")) for name in experiment_names())
    assert password not in blocks
    # Nor does any password sit in a spec, a committed result or a reader's block as a fixed word.
    assert "PASSWORD '$PASSWORD'" in blocks and "PGPASSWORD=$PASSWORD " in blocks
    assert all("password:" not in path.read_text() for path in (REPO_ROOT / "experiments").rglob("*.yaml"))
