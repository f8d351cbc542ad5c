"""End to end: the pgpool-versions experiment (tiny profile) measures the machine's own PgPool-II and the
4.7.2 build `make poolers` staged in one run, each row saying which version it measured, and the aggregation
gives one line per version with its tree before the first query and its churn.

Needs PgPool-II installed (Debian's pgpool2) and the staged build (build/pgpool-4.7.2/, `make poolers`);
skipped, saying which, where either is missing.
"""

from __future__ import annotations

import duckdb
import pytest

from connlab.data.experiment_tables import register_raw_windows, run_sql_file
from connlab.data.views import BEST_PROFILE_VIEW, SHARED_MACROS
from connlab.lab.poolers.registry import POOLERS
from connlab.paths import experiment_dir
from support.tiny_runs import tiny_run_by_workload

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("require_root", "require_postgres")]

EXPERIMENT = "pgpool-versions"
MACHINE = "e2e-pgpool-versions"
BUILD = "4.7.2"


@pytest.fixture(scope="module")
def installed_version() -> str:
    """The machine's own PgPool-II's version, which must differ from the staged build's."""
    version = POOLERS["pgpool"].measured_version()
    if version is None:
        pytest.skip("no PgPool-II installed here (apt-get install pgpool2)")
    if POOLERS["pgpool"].of_build(BUILD).measured_version() != BUILD:
        pytest.skip(f"no PgPool-II {BUILD} staged here: run `make poolers POOLER_TOOLS=<tools folder>`")
    if version == BUILD:
        pytest.skip(f"the machine's own PgPool-II is {BUILD} already: nothing to compare")
    return version


def test_both_versions_measured_in_one_run_each_row_with_its_version(
    connlab_env: dict[str, str], installed_version: str
) -> None:
    path, rows = tiny_run_by_workload(EXPERIMENT, MACHINE, connlab_env)
    versions = {workload: row["pooler_version"] for workload, row in rows.items()}
    assert versions == {
        workload: BUILD if workload.endswith("-build") else installed_version for workload in rows
    }
    for workload, row in rows.items():
        assert row["ok"] == "true", (workload, row["error"])
        # Both trees read before the first query: the parent and its children already forked.
        assert int(row["pooler_start_rss_bytes"]) > 0 and int(row["pooler_start_processes"]) > 1

    # The aggregation: one line per version, each with its tree at start and its churn.
    con = duckdb.connect()
    register_raw_windows(con, [path])
    con.execute(SHARED_MACROS)
    con.execute(BEST_PROFILE_VIEW)
    run_sql_file(con, experiment_dir(EXPERIMENT) / "aggregate.sql")
    summary = dict(
        con.execute(
            "SELECT pooler_version, [start_rss_mib, start_processes, churn_tps] FROM versions"
        ).fetchall()
    )
    assert set(summary) == {installed_version, BUILD}
    assert all(start_rss > 0 and processes > 1 for start_rss, processes, _ in summary.values())
    # A window that finished no transaction on a busy machine leaves its churn figure out, not zero.
    assert all(churn is None or churn > 0 for _, _, churn in summary.values())
    loads = con.execute("SELECT DISTINCT pooler_version FROM load").fetchall()
    assert {version for (version,) in loads} == {installed_version, BUILD}
