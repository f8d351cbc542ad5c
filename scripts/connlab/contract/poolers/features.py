"""Which pooler version supports which feature: a result for the row, never a crash.

Each rule takes the version text a pooler printed of itself (`PoolerProcess.version()`) and answers
`SUPPORTED` ("ok") or why not, naming the version, e.g. "not supported by this version (1.18.0)". The
versions are parsed here once so that every adapter words its answers alike.

Traps:
- PgBouncer's transaction-mode prepared statements arrived in 1.21 (`max_prepared_statements`); 1.18, the
  Debian 12 package, fails `pgbench -M prepared` with 'prepared statement "P_0" already exists' and still
  prints a tps line. The row must say "not supported by this version", not show that tps.
- A version that cannot be parsed is not "supported": the answer says so, with the text it got.
"""

from __future__ import annotations

import re

from connlab.contract.poolers.setup import PREPARED_STATEMENTS_SETTING as _PREPARED_SETTING

SUPPORTED = "ok"  # the same word as base.SUPPORTED; kept here so this module imports nothing heavy

# Feature names the experiments ask about; adapters answer any other name with UNKNOWN_FEATURE.
PREPARED_IN_TRANSACTION_MODE = "prepared statements in transaction mode"
SCRAM_CLIENT_AUTH = "scram-sha-256 client authentication"
TRANSACTION_POOLING = "transaction pooling"
SERVER_CONNECTION_RESET = "closing idle server connections on request"
FEATURES = (PREPARED_IN_TRANSACTION_MODE, SCRAM_CLIENT_AUTH, TRANSACTION_POOLING, SERVER_CONNECTION_RESET)

# The one setting every adapter reads from `PoolerSetup.settings` and maps to its own key: turn the
# pooler's prepared-statement support on (PgBouncer max_prepared_statements, Odyssey
# pool_reserve_prepared_statement, pgcat prepared_statements_cache_size; PgPool-II needs nothing).
PREPARED_STATEMENTS_SETTING = _PREPARED_SETTING  # defined in the contract: the configs read it too

PGBOUNCER_PREPARED_SINCE = (1, 21)
_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def parse_version(text: str) -> tuple[int, int, int] | None:
    """The first dotted version in a program's own banner ("PgBouncer 1.18.0", "pgpool-II version
    4.3.5 (tamahomeboshi)", "pgcat 1.2.0"); None when there is none."""
    found = _VERSION.search(text)
    if found is None:
        return None
    major, minor, patch = found.groups()
    return int(major), int(minor), int(patch or 0)


def version_label(version: tuple[int, int, int]) -> str:
    return ".".join(str(part) for part in version)


def unknown_feature(feature: str) -> str:
    return f"unknown feature {feature!r}; known: {', '.join(FEATURES)}"


def not_in_version(version_text: str, since: tuple[int, ...]) -> str:
    """SUPPORTED when the version is at least `since`, else the reason with the version in it."""
    version = parse_version(version_text)
    if version is None:
        return f"version unknown ({version_text.strip() or 'no version printed'})"
    if version >= since:
        return SUPPORTED
    needs = ".".join(str(part) for part in since)
    return f"not supported by this version ({version_label(version)}); needs {needs}+"


def pgbouncer_support(feature: str, version_text: str) -> str:
    """PgBouncer's answer for one feature, from `pgbouncer --version` text."""
    if feature == PREPARED_IN_TRANSACTION_MODE:
        return not_in_version(version_text, PGBOUNCER_PREPARED_SINCE)
    if feature in (SCRAM_CLIENT_AUTH, TRANSACTION_POOLING, SERVER_CONNECTION_RESET):
        return SUPPORTED  # auth_type scram-sha-256 since 1.14; RECONNECT since 1.15
    return unknown_feature(feature)


def pgbouncer_prepared_settings(version_text: str, cache_size: int = 200) -> dict[str, object]:
    """The setting that turns prepared-statement tracking on, only where the version has it (an unknown
    key stops PgBouncer 1.18 at start)."""
    if pgbouncer_support(PREPARED_IN_TRANSACTION_MODE, version_text) != SUPPORTED:
        return {}
    return {"max_prepared_statements": cache_size}
