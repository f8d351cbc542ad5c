"""How the harness logs in to a named server: the run's private folder on this host, the password file its
children read, and the one login that finds the password.

The password (from the URL, PGPASSWORD or ~/.pgpass, as libpq finds it) is written once into a password file,
mode 600, in the run's private folder (mode 700), named to every child by PGPASSFILE; it is never in a
command line, a result, a log or a page. PGPASSWORD is taken out of the environment meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg

from connlab.errors import LabError
from connlab.interrupts import hold_signals
from connlab.lab.host import chown_to_server_user, find_bindir
from connlab.lab.remote.server import RemoteServer, ServerFacts, connect_problem
from connlab.lab.remote.target import ServerUrl

PASSWORD_FILE = "pgpass"
PRIVATE_PREFIX = "connlab-remote-"


@contextlib.contextmanager
def private_folder() -> Iterator[Path]:
    """The run's folder on this host: mode 700, the poolers' user its owner (PgBouncer and PgPool-II run as
    postgres), removed at the end. It is made under tempfile.gettempdir(), so TMPDIR places it (each test
    run has its own); the folders above it must be searchable by postgres."""
    folder: Path | None = None
    try:
        with hold_signals():  # made and named here at once: a Ctrl-C in between would leave it behind
            folder = Path(tempfile.mkdtemp(prefix=PRIVATE_PREFIX, dir=tempfile.gettempdir()))
        folder.chmod(0o700)
        chown_to_server_user(folder)
        yield folder
    finally:
        if folder is not None:
            with hold_signals():
                shutil.rmtree(folder, ignore_errors=True)


def _pgpass_field(text: str) -> str:
    return text.replace("\\", "\\\\").replace(":", "\\:")


@contextlib.contextmanager
def password_file(folder: Path, user: str, password: str | None) -> Iterator[None]:
    """PGPASSFILE for this process and its children while the run lasts, PGPASSWORD out of the way; the
    environment as it was afterwards."""
    saved = {key: os.environ.get(key) for key in ("PGPASSFILE", "PGPASSWORD")}
    path = folder / PASSWORD_FILE
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as stream:
            if password:
                # Any host and port: the server's, and the poolers' in front of it on this host.
                stream.write(f"*:*:*:{_pgpass_field(user)}:{_pgpass_field(password)}\n")
        os.environ["PGPASSFILE"] = str(path)
        os.environ.pop("PGPASSWORD", None)
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def login_password(url: ServerUrl, server: RemoteServer) -> str | None:
    """The password libpq logs in with (the URL's, else PGPASSWORD's, else ~/.pgpass's), by logging in once;
    None where the server asks for none. A refused login is one line saying why."""
    given = {"password": url.password} if url.password else {}
    try:
        with psycopg.connect(server.conninfo(), **given) as conn:
            return conn.info.password or None
    except psycopg.OperationalError as error:
        raise LabError(connect_problem(url, error)) from None


def facts_over_login(url: ServerUrl) -> ServerFacts:
    """The server's facts, over a login checked the way the runs will log in."""
    with private_folder() as folder:
        server = RemoteServer(url, folder, find_bindir())
        password = login_password(url, server)
        with password_file(folder, url.user, password):
            return server.facts()
