"""Odyssey: config writer, start and stop, run whenever its binary is on PATH or named by ODYSSEY_BIN.

Contract: `PoolerProcess` (base.py). Where the binary is absent, `binary()` raises `PoolerUnavailable`
("odyssey: not available on this machine; ...") and the row says so: nothing is faked.

The config (odyssey.conf, Odyssey's own brace syntax) from the `PoolerSetup`: one `database { user {} }`
route per database and user, transaction pooling with `pool_size` server connections per route, the
server reached over TCP on 127.0.0.1 (the throwaway server listens there too), an admin console on the
database "console" for `SHOW POOLS`, and the log in the adapter's folder.

SCRAM end to end and its traps:
- Client side: `authentication "scram-sha-256"` with `password` set to the server's stored SCRAM verifier
  (Odyssey's rules accept a plain password, an MD5 hash or a SCRAM secret there), so the password itself
  is not needed to check clients.
- Server side: Odyssey logs in with `storage_password`, the run's generated password in plain text; the
  file is mode 600 in the cluster's folder and removed with it.
- A build without `-DUSE_SCRAM=ON` (and the server-dev headers) starts, then refuses every SCRAM login
  with "SCRAM auth is not supported in this build"; the start check (the postgres user, trust) cannot
  see that, the first SCRAM window does.
- `pool_reserve_prepared_statement yes` (setting `prepared_statements: true`) needs `pool_discard no`, or
  Odyssey refuses to start; `pool_discard no` is written always, which is also what PgBouncer does in
  transaction mode (no reset query between clients).
- The seed's log filled 31 GB in days: sessions and queries are not logged here.
"""

from __future__ import annotations

import subprocess
from typing import ClassVar

from connlab.contract.names import SERVER_USER
from connlab.errors import LabError
from connlab.lab.poolers import admin, features
from connlab.lab.poolers.base import SUPPORTED, PoolerProcess, PoolerUser, find_binary

CONSOLE_DB = "console"
VERSION_TIMEOUT_S = 10
# The first release we know has pool_reserve_prepared_statement (the seed's 1.4.0).
PREPARED_SINCE = (1, 4)


def _string(value: object) -> str:
    text = str(value)
    if '"' in text or "\n" in text:
        raise LabError(f"odyssey: a config value may not hold a quote or a newline: {text[:20]!r}")
    return f'"{text}"'


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    return _string(value)


def server_tcp_host(server_host: str) -> str:
    """Odyssey and pgcat reach the server over TCP; a socket folder means the same server on loopback."""
    return "127.0.0.1" if server_host.startswith("/") else server_host


class Odyssey(PoolerProcess):
    name: ClassVar[str] = "odyssey"
    label: ClassVar[str] = "Odyssey"
    env_var: ClassVar[str] = "ODYSSEY_BIN"
    known_paths: ClassVar[tuple[str, ...]] = (
        "/usr/local/bin/odyssey",
        "/usr/bin/odyssey",
    )
    config_name: ClassVar[str] = "odyssey.conf"

    @classmethod
    def binary(cls) -> str:
        return find_binary("odyssey", cls.env_var, *cls.known_paths)

    @classmethod
    def version(cls) -> str:
        result = subprocess.run(
            [cls.binary(), "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT_S
        )
        return (result.stdout + result.stderr).strip()

    # --- configuration (pure) --------------------------------------------------------------------
    def prepared_statements(self) -> bool:
        return bool(self.setup.settings.get(features.PREPARED_STATEMENTS_SETTING, False))

    def global_settings(self) -> dict[str, object]:
        root = self.setup.root
        own = features.PREPARED_STATEMENTS_SETTING
        extra = {key: value for key, value in self.setup.settings.items() if key != own}
        return {
            "daemonize": False,  # foreground: the process is ours to watch and to stop
            "pid_file": str(root / "odyssey.pid"),
            "unix_socket_dir": str(root),
            "unix_socket_mode": "0644",
            "log_file": str(root / self.log_file),
            "log_format": "%p %t %l [%i %s] (%c) %m\\n",
            "log_to_stdout": False,
            "log_config": False,
            "log_session": False,
            "log_query": False,
            "log_stats": False,
            "log_debug": False,
            "workers": 1,
            "resolvers": 1,
            **extra,
        }

    def route(self, user: PoolerUser, database: str) -> list[str]:
        setup = self.setup
        if user.verifier and not user.password:
            raise LabError(f"odyssey: user {user.name} needs this run's password to log in to the server")
        if user.password:
            # The verifier where there is one: clients are checked without the password itself.
            auth = ["authentication " + _string("scram-sha-256"),
                    "password " + _string(user.verifier or user.password)]  # fmt: skip
            storage_password = ["storage_password " + _string(user.password)]
        else:
            auth, storage_password = ["authentication " + _string("none")], []
        options = {
            "storage": "server",
            "storage_db": database,
            "storage_user": user.name,
            "pool": setup.pool_mode,
            "pool_size": setup.pool_size,
            "pool_timeout": 0,
            "pool_ttl": 0,
            "pool_discard": False,
            "pool_reserve_prepared_statement": self.prepared_statements(),
        }
        lines = [*auth, *[f"{key} {_value(value)}" for key, value in options.items()], *storage_password]
        return [f"\tuser {_string(user.name)} {{", *[f"\t\t{line}" for line in lines], "\t}"]

    def config_text(self) -> str:
        setup = self.setup
        lines = [f"{key} {_value(value)}" for key, value in self.global_settings().items()]
        lines += ["", "listen {", '\thost "127.0.0.1"', f"\tport {setup.port}", "}", ""]
        server_host = _string(server_tcp_host(setup.server_host))
        lines += ['storage "server" {', '\ttype "remote"', f"\thost {server_host}"]
        lines += [f"\tport {setup.server_port}", "}", "", 'storage "local" {', '\ttype "local"', "}", ""]
        for database in setup.databases:
            lines.append(f"database {_string(database)} {{")
            for user in setup.users:
                lines += self.route(user, database)
            lines += ["}", ""]
        # The admin console: SHOW POOLS for the counters, as the server's own user (trust, as on the server).
        console = ['authentication "none"', 'role "admin"', 'pool "session"', 'storage "local"']
        lines += [f"database {_string(CONSOLE_DB)} {{", f"\tuser {_string(SERVER_USER)} {{",
                  *[f"\t\t{line}" for line in console], "\t}", "}"]  # fmt: skip
        return "\n".join(lines) + "\n"

    def config_files(self) -> dict[str, str]:
        return {self.config_name: self.config_text()}

    def command(self, binary: str) -> list[str]:
        return [binary, str(self.setup.root / self.config_name)]

    # --- while it runs ----------------------------------------------------------------------------
    def counters(self) -> dict[str, float]:
        return admin.show_pools(f"host=127.0.0.1 port={self.port} user={SERVER_USER} dbname={CONSOLE_DB}")

    def support(self, feature: str) -> str:
        if feature == features.PREPARED_IN_TRANSACTION_MODE:
            return features.not_in_version(self.version(), PREPARED_SINCE)
        if feature in (features.SCRAM_CLIENT_AUTH, features.TRANSACTION_POOLING):
            return SUPPORTED
        if feature == features.SERVER_CONNECTION_RESET:
            return "not supported: Odyssey closes idle server connections only by pool_ttl"
        return features.unknown_feature(feature)
