"""End to end: the pgbouncer-versions experiment (tiny profile) measures the machine's own PgBouncer and the
1.25.2 build `make poolers` staged in one run, each row saying which version it measured: -M prepared with
max_prepared_statements 200 runs clean on 1.25.2 and is "not supported by this version" on a version before
1.21 (Debian 12's 1.18), and the aggregation gives one line per version.

Needs the staged build (build/pgbouncer-1.25.2/, `make poolers`) and a PgBouncer older than 1.21 as the
machine's own; skipped, saying which, where either is missing.
"""

from __future__ import annotations

import duckdb
import pytest

from connlab.contract.poolers import features
from connlab.data.experiment_tables import register_raw_windows, run_sql_file
from connlab.data.views import BEST_PROFILE_VIEW, SHARED_MACROS
from connlab.lab.poolers.registry import POOLERS
from connlab.paths import experiment_dir
from support.tiny_runs import tiny_run_by_workload

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("require_root", "require_postgres")]

EXPERIMENT = "pgbouncer-versions"
MACHINE = "e2e-pgbouncer-versions"
BUILD = "1.25.2"


@pytest.fixture(scope="module")
def installed_version() -> str:
    """The machine's own PgBouncer's version, which must lack transaction-mode prepared statements."""
    version = POOLERS["pgbouncer"].measured_version()
    if version is None:
        pytest.skip("no PgBouncer installed here (apt-get install pgbouncer)")
    if features.pgbouncer_support(features.PREPARED_IN_TRANSACTION_MODE, version) == features.SUPPORTED:
        pytest.skip(f"the machine's PgBouncer is {version}, which has max_prepared_statements already")
    if POOLERS["pgbouncer"].of_build(BUILD).measured_version() != BUILD:
        pytest.skip(f"no PgBouncer {BUILD} staged here: run `make poolers POOLER_TOOLS=<tools folder>`")
    return version


def test_both_versions_measured_in_one_run_each_row_with_its_version(
    connlab_env: dict[str, str], installed_version: str
) -> None:
    path, rows = tiny_run_by_workload(EXPERIMENT, MACHINE, connlab_env)
    versions = {workload: row["pooler_version"] for workload, row in rows.items()}
    assert versions == {
        workload: BUILD if workload.endswith("-build") else installed_version for workload in rows
    }

    # 1.25.2 with max_prepared_statements 200: clean. With 0 it fails as 1.18 does.
    built = rows["prepared-200-build"]
    assert built["ok"] == "true" and built["failed_transactions"] == "0", built["error"]
    assert float(built["tps"]) > 0
    assert rows["prepared-0-build"]["ok"] == "false"
    assert "prepared statement" in rows["prepared-0-build"]["error"]
    # 1.18 asked for 200: no pgbench ran, the row says why, naming the version. At 0 it runs, and fails.
    unsupported = rows["prepared-200-installed"]
    assert unsupported["ok"] == "false" and unsupported["tps"] == ""
    assert f"not supported by this version ({installed_version})" in unsupported["error"]
    assert rows["prepared-0-installed"]["ok"] == "false"
    assert "prepared statement" in rows["prepared-0-installed"]["error"]
    for workload in ("load-installed", "load-build", "churn-installed", "churn-build"):
        assert rows[workload]["ok"] == "true", rows[workload]["error"]
        assert int(rows[workload]["pooler_start_rss_bytes"]) > 0

    # The aggregation: one line per version, the outcomes as the rows say.
    con = duckdb.connect()
    register_raw_windows(con, [path])
    con.execute(SHARED_MACROS)
    con.execute(BEST_PROFILE_VIEW)
    run_sql_file(con, experiment_dir(EXPERIMENT) / "aggregate.sql")
    summary = {
        version: (outcome_0, outcome_200, start_rss, churn_tps)
        for version, outcome_0, outcome_200, start_rss, churn_tps in con.execute(
            "SELECT pooler_version, prepared_0_outcome, prepared_200_outcome, start_rss_mib, churn_tps "
            "FROM versions"
        ).fetchall()
    }
    assert set(summary) == {installed_version, BUILD}
    assert summary[BUILD][:2] == ("failed", "ok")
    assert summary[installed_version][:2] == ("failed", "unsupported")
    assert all(start_rss > 0 and churn_tps > 0 for _, _, start_rss, churn_tps in summary.values())
