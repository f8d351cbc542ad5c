"""PgPool-II (Debian's 4.3.5) in front of the throwaway cluster, SCRAM end to end, run for real.

Contract: `PoolerProcess` (base.py). From the `PoolerSetup`: `pool_size` becomes `num_init_children`
with `max_pool = 1`, so PgPool-II holds at most as many server connections as the other poolers' pool
(one backend per child, cached for the child's next client). That is PgPool-II's own model, process per
client: there is no transaction pooling, and a client past `num_init_children` waits at the pooler until a
child is free, however long that takes. Callers bound every wait.

SCRAM, as the seed runs it, with its traps:
- pool_passwd must hold the password AES-encrypted ("bench:AES..."), not the server's SCRAM verifier:
  with the verifier every login fails with "failed to authenticate with backend using SCRAM". So PgPool-II,
  unlike PgBouncer, needs each SCRAM user's password (`PoolerUser.password`, this run's, memory only).
- The key lives in a file of its own (mode 600, owned by postgres, written by `prepare()`, a fresh random
  key per run) and reaches pgpool only through PGPOOLKEYFILE in its environment; without it pgpool starts
  and then refuses every SCRAM login ("unable to decrypt password from pool_passwd"). The start check
  therefore logs in as the first SCRAM user too, and a refusal fails the start in one line with the log.
- `pg_enc -p` refuses a non-terminal stdin and a password argument would show in the process list, so the
  pairs go through `pg_enc -i` from a 600 file that is removed at once. `pg_enc -m` creates pool_passwd
  and replaces a user's line when run again.
- pool_passwd's path is absolute in pgpool.conf: pg_enc resolves a relative one against its own cwd.
- `-n` (no daemon) keeps pgpool in the foreground; logs go to stderr, which the shell sends to pooler.log.

Counters: the children's process titles ("wait for connection request" when free) tell how many clients
are being served even when every child is busy; `SHOW POOL_NODES` needs a free child, so it is read with a
short timeout and left out when none is free. PgPool-II has no command to drop its cached server
connections, so `reset_server_connections()` does nothing and `support()` says so.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
from typing import ClassVar

import psutil
import psycopg

from connlab.contract.poolers import features
from connlab.errors import LabError
from connlab.lab.host import as_server_user, chown_to_server_user
from connlab.lab.poolers.base import SUPPORTED, PoolerProcess, find_binary, logging_to
from connlab.poolers.pgpool import config

KEY_FILE = config.KEY_FILE
PAIRS_FILE = "pg_enc.pairs"
PG_ENC_TIMEOUT_S = 30
ADMIN_TIMEOUT_S = 2
START_LOGIN_S = 5
PREPARED = features.PREPARED_STATEMENTS_SETTING  # nothing to turn on: each client keeps its backend
FREE_CHILD_TITLE = "wait for connection request"
CHILD_PREFIX = "pgpool: "
# The parent and its helpers (pcp, health check, worker, logger) are not children that serve clients.
HELPER_TITLES = ("pgpool: PCP", "pgpool: health check", "pgpool: worker", "pgpool: logger")


def children_counts(titles: list[str]) -> dict[str, float]:
    """From the tree's process titles: the children that serve clients (not the parent, runuser or the
    helpers), how many wait for a client, and how many serve one now."""
    children = [t for t in titles if t.startswith(CHILD_PREFIX) and not t.startswith(HELPER_TITLES)]
    free = sum(FREE_CHILD_TITLE in title for title in children)
    return {"children": len(children), "children_free": free, "clients_served": len(children) - free}


class PgPool(PoolerProcess):
    declaration = config.CONFIG
    env_var: ClassVar[str] = "PGPOOL_BIN"

    @classmethod
    def pg_enc(cls) -> str:
        # A staged build's pool_passwd is written by its own pg_enc, staged beside it.
        if cls.build is not None:
            return cls.staged_program("pg_enc")
        return find_binary("pg_enc", "PG_ENC_BIN", "/usr/sbin/pg_enc")

    # --- configuration (pure, in connlab.poolers.pgpool.config) ------------------------------------
    def settings(self) -> dict[str, object]:
        return config.settings(self.setup)

    def config_files(self) -> dict[str, str]:
        return config.config_files(self.setup)

    def command(self, binary: str) -> list[str]:
        root = self.setup.root
        pgpool = [binary, "-n", "-f", str(root / config.CONF), "-F", str(root / config.PCP_FILE),
                  "-a", str(root / config.HBA_FILE)]  # fmt: skip
        return logging_to(root / self.log_file, pgpool)

    def extra_environment(self) -> dict[str, str]:
        return {"PGPOOLKEYFILE": str(self.setup.root / KEY_FILE)}

    # --- start-up ---------------------------------------------------------------------------------
    def password_users(self) -> list[tuple[str, str]]:
        pairs = []
        for user in self.setup.users:
            if user.password:
                pairs.append((user.name, user.password))
            elif user.verifier:
                raise LabError(
                    f"pgpool: user {user.name} has only a SCRAM verifier; PgPool-II needs the password "
                    f"itself (AES-encrypted in pool_passwd) to log in to the server"
                )
        return pairs

    def prepare(self) -> None:
        """A fresh key file and pool_passwd with each SCRAM user's password, AES-encrypted by pg_enc."""
        root = self.setup.root
        key = root / KEY_FILE
        key.write_text(secrets.token_urlsafe(32) + "\n")
        key.chmod(0o600)
        chown_to_server_user(key)
        (root / config.POOL_PASSWD).unlink(missing_ok=True)
        pairs = self.password_users()
        if not pairs:
            return
        pairs_file = root / PAIRS_FILE
        try:
            descriptor = os.open(pairs_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w") as stream:
                stream.writelines(f"{name}:{password}\n" for name, password in pairs)
            chown_to_server_user(pairs_file)
            command = [self.pg_enc(), "-m", "-f", str(root / config.CONF), "-k", str(key),
                       "-i", str(pairs_file)]  # fmt: skip
            result = subprocess.run(
                as_server_user(command), capture_output=True, text=True, timeout=PG_ENC_TIMEOUT_S
            )
        finally:
            pairs_file.unlink(missing_ok=True)
        if result.returncode != 0:
            detail = (result.stderr or result.stdout).strip().splitlines()
            raise LabError(f"pgpool: pg_enc failed: {detail[-1] if detail else result.returncode}")

    def accepts(self) -> bool:
        """The start check: the trust user gets in, and so does the first SCRAM user. A key PgPool-II
        cannot read lets it start and then refuse every SCRAM login; that must fail the start, in one line
        with the log, not the first window."""
        if not super().accepts():
            return False
        pairs = self.password_users()
        if not pairs:
            return True
        name, password = pairs[0]
        conninfo = self.conninfo(self.setup.databases[0], name)
        try:
            psycopg.connect(conninfo, password=password, connect_timeout=START_LOGIN_S).close()
        except psycopg.OperationalError as error:
            log = self.log_tail()  # before stopping: the shutdown lines would push the cause out
            self.stop()  # the base start loop does not stop a pooler whose check raised
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise LabError(f"pgpool: SCRAM login of {name} failed at start: {first} (log: {log})") from error
        return True

    # --- while it runs ----------------------------------------------------------------------------
    def child_titles(self) -> list[str]:
        """The process titles of the whole tree (pgpool rewrites argv[0] in place, padding the rest)."""
        titles = []
        for process in self.processes():
            with contextlib.suppress(psutil.Error):
                titles.append((process.cmdline() or [""])[0].strip())
        return titles

    def counters(self) -> dict[str, float]:
        return {**children_counts(self.child_titles()), **self.node_counters()}

    def node_counters(self) -> dict[str, float]:
        """SHOW POOL_NODES through PgPool-II itself: only when a child is free to answer."""
        with (
            contextlib.suppress(psycopg.Error),
            psycopg.connect(
                self.conninfo(self.setup.databases[0]), autocommit=True, connect_timeout=ADMIN_TIMEOUT_S
            ) as conn,
        ):
            cursor = conn.execute("SHOW POOL_NODES")
            names = [column.name for column in cursor.description or []]
            rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
            return {"backend_select_cnt": sum(int(row.get("select_cnt") or 0) for row in rows)}
        return {}

    def support(self, feature: str) -> str:
        if feature == features.PREPARED_IN_TRANSACTION_MODE:
            return SUPPORTED  # each client keeps its own child and backend, so its statements stay
        if feature == features.SCRAM_CLIENT_AUTH:
            return SUPPORTED
        if feature == features.TRANSACTION_POOLING:
            return "not supported: PgPool-II gives each client a process and its cached backend"
        if feature == features.SERVER_CONNECTION_RESET:
            return "not supported: PgPool-II has no command to close its cached server connections"
        return features.unknown_feature(feature)


# What the registry (connlab.lab.poolers.registry) runs for this folder's kind.
ADAPTER = PgPool
