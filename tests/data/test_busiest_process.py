"""The busiest process decides (issue 52): a window's rate is a bound, the client's, when pgbench was near its
limit while the server and the pooler were each well below theirs; where the server or the pooler was busy
too, the rate is theirs and counts. One rule (connlab.data.views.CLIENT_BOUND_SQL) applied to every window,
whatever flag the harness wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pytest

from connlab.data.aggregate import aggregate_all
from connlab.data.claims import CANNOT_EVALUATE, DOES_NOT_HOLD
from connlab.data.views import BEST_PROFILE_VIEW
from support.helpers import STEADY_STATE_DEFAULTS, db_records, passes

if TYPE_CHECKING:
    from support.rows import RunWriter

# (label, client cores used, client quota, client cores, server cores used, pooler cores used, pooler's
# budget, pooler on the server's cores, the harness's flag, client-bound by the rule)
WINDOWS = [
    # Issue 52's churn windows: pgbench at 0.889-0.897 of its core, PostgreSQL 0.06, PgBouncer 0.055.
    ("churn", 0.897, None, 1, 0.06, 0.055, 1.0, True, False, True),
    ("churn-low", 0.889, None, 1, 0.06, 0.055, 1.0, True, False, True),
    ("below-the-limit", 0.84, None, 1, 0.06, None, None, None, False, False),
    ("server-busy-too", 0.95, None, 1, 0.95, None, None, None, True, False),
    ("pooler-busy", 0.95, None, 1, 0.1, 0.6, 1.0, False, True, False),
    # Each under half, but sharing one core they used 0.6 of it together.
    ("shared-core-busy", 0.95, None, 1, 0.3, 0.3, 1.0, True, True, False),
    # An older run: the pooler inside the server's cgroup, whose figure already holds the pooler's.
    ("pooler-in-server-cgroup", 0.95, None, 1, 0.45, 0.3, None, None, True, True),
    ("quota", 0.45, 0.5, 1, 0.2, None, None, None, True, True),
    ("remote-server", 0.95, None, 1, None, None, None, None, True, True),
]


def test_the_rule_over_windows() -> None:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE raw_windows (label VARCHAR, client_cpu_cores DOUBLE, client_cpu_budget DOUBLE, "
        "client_cores INTEGER, server_cpu_cores DOUBLE, pooler_cpu_cores DOUBLE, "
        "pooler_cpu_budget DOUBLE, pooler_shares_server_cores BOOLEAN, client_saturated BOOLEAN, "
        "expected BOOLEAN, server_cpu_budget DOUBLE DEFAULT 1.0, machine VARCHAR DEFAULT 'box', "
        "profile VARCHAR DEFAULT 'quick', " + STEADY_STATE_DEFAULTS + ")"
    )
    con.executemany(
        "INSERT INTO raw_windows (label, client_cpu_cores, client_cpu_budget, client_cores, "
        "server_cpu_cores, pooler_cpu_cores, pooler_cpu_budget, pooler_shares_server_cores, "
        "client_saturated, expected) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        WINDOWS,
    )
    con.execute(BEST_PROFILE_VIEW)
    found = dict(con.execute("SELECT label, client_saturated FROM windows").fetchall())
    assert found == {window[0]: window[-1] for window in WINDOWS}


def churn_rows(server_cpu: float, pooler_cpu: float) -> list[dict[str, Any]]:
    """pgbouncer-trade's churn at 8 clients on one server core: direct near 65 tps with pgbench idle, through
    PgBouncer near 215 with pgbench at 0.889-0.897 of its core (the harness's flag: not saturated)."""
    direct = passes("churn-direct", 8, [62, 65, 68])
    for row in direct:
        row.update(client_cpu_cores=0.3, server_cpu_cores=0.9)
    pooled = passes("churn-pgbouncer", 8, [200, 215, 230])
    for row, client_cpu in zip(pooled, (0.889, 0.893, 0.897), strict=True):
        row.update(
            target="pgbouncer",
            pool_size=2,
            client_cpu_cores=client_cpu,
            client_saturated=False,
            server_cpu_cores=server_cpu,
            pooler_cpu_cores=pooler_cpu,
            pooler_cpus="0",
            pooler_cpu_budget=1.0,
            pooler_shares_server_cores=True,
        )
    return [*direct, *pooled]


def churn_verdict(tmp_path: Path, write_run: RunWriter, server_cpu: float, pooler_cpu: float) -> dict:
    results = tmp_path / "results"
    write_run(results, "quick-box", churn_rows(server_cpu, pooler_cpu), "quick", experiment="pgbouncer-trade")
    database = aggregate_all(results_dir=results, out_dir=tmp_path / "data")
    (churn,) = db_records(database, "SELECT * FROM pgbouncer_trade.churn")
    assert churn["speedup"] == pytest.approx(215 / 65)
    claims = json.loads((tmp_path / "data" / "claims" / "pgbouncer-trade.json").read_text())["claims"]
    [claim] = [c for c in claims if c["id"] == "churn-speedup-8-per-core"]
    return {v["machine"]: v for v in claim["verdicts"]}["quick-box"]


@pytest.mark.slow
def test_a_rate_set_by_the_client_is_a_bound(tmp_path: Path, write_run: RunWriter) -> None:
    """Issue 52's case: 3.3 (2.9-3.7) was 'does not hold' against the seed's 19.8 while pgbench sat just under
    the harness's 90% and PostgreSQL and PgBouncer were nearly idle. The pooled rate is the client's, so the
    speed-up is at least 2.9, which decides nothing about 'at least 19.8'."""
    verdict = churn_verdict(tmp_path, write_run, server_cpu=0.06, pooler_cpu=0.055)
    assert verdict["client_saturated"] is True
    assert verdict["bound"] == "at least"
    assert verdict["verdict"] == CANNOT_EVALUATE
    assert verdict["client_cpu"] == pytest.approx(0.897)
    assert "at least 2.94" in verdict["reason"]


@pytest.mark.slow
def test_a_rate_the_server_was_busy_for_is_a_value(tmp_path: Path, write_run: RunWriter) -> None:
    """The same client load with PostgreSQL and PgBouncer using most of their core: the rate is theirs."""
    verdict = churn_verdict(tmp_path, write_run, server_cpu=0.5, pooler_cpu=0.3)
    assert verdict["client_saturated"] is False
    assert verdict["bound"] is None
    assert verdict["verdict"] == DOES_NOT_HOLD
