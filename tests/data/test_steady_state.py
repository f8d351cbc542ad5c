"""A rate needs a steady state (issue 52, item 5): a point whose passes spent more than a tenth of their
windows connecting has no throughput or latency in `windows` and so in no figure, peak, fit or claim; its
passes are kept or left out together, by their median share (connlab.data.views.STEADY_SQL)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pytest

from connlab.contract.names import CONNECTING_SHARE_LIMIT
from connlab.data.aggregate import aggregate_all
from connlab.data.claims import CANNOT_EVALUATE
from connlab.data.views import BEST_PROFILE_VIEW
from support.helpers import STEADY_STATE_DEFAULTS, passes

if TYPE_CHECKING:
    from support.rows import RunWriter


def windows_of(points: dict[int, list[float]]) -> dict[int, list[float | None]]:
    """Each point's (client count's) tps per pass as `windows` keeps them, from 15-s windows that spent the
    given seconds connecting."""
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE raw_windows (client_cpu_cores DOUBLE DEFAULT 0.1, client_cpu_budget DOUBLE, "
        "client_cores INTEGER DEFAULT 1, server_cpu_cores DOUBLE DEFAULT 0.9, pooler_cpu_cores DOUBLE, "
        "pooler_cpu_budget DOUBLE, pooler_shares_server_cores BOOLEAN, client_saturated BOOLEAN, "
        "server_cpu_budget DOUBLE DEFAULT 1.0, machine VARCHAR DEFAULT 'box', "
        "profile VARCHAR DEFAULT 'full', " + STEADY_STATE_DEFAULTS + ")"
    )
    for clients, connecting_s in points.items():
        for pass_no, seconds in enumerate(connecting_s, start=1):
            con.execute(
                "INSERT INTO raw_windows (clients, pass_no, initial_connection_ms) VALUES (?, ?, ?)",
                [clients, pass_no, 1000 * seconds],
            )
    con.execute(BEST_PROFILE_VIEW)
    found: dict[int, list[float | None]] = {}
    for clients, tps in con.execute("SELECT clients, tps FROM windows ORDER BY clients, pass_no").fetchall():
        found.setdefault(clients, []).append(tps)
    return found


def test_a_point_mostly_connecting_has_no_rate_and_its_passes_go_together() -> None:
    assert pytest.approx(0.1) == CONNECTING_SHARE_LIMIT
    found = windows_of(
        {
            4: [0.0, 0.1, 0.0],  # connected at once
            100: [0.6, 3.0, 1.2],  # one slow pass (20%), median 8%: every pass kept
            200: [1.6, 1.65, 1.7],  # 10.7-11.3%: just past a tenth, every pass left out
            400: [5.4, 5.2, 1.4],  # one quick pass (9%), median 35%: left out with the rest
            150: [1.5, 1.5, 1.5],  # exactly a tenth: steady
        }
    )
    assert found[4] == [100, 100, 100]
    assert found[100] == [100, 100, 100]
    assert found[150] == [100, 100, 100]
    assert found[200] == [None, None, None]
    assert found[400] == [None, None, None]


def crowd_rows(direct_connect_ms: float) -> list[dict]:
    """pgbouncer-trade's crowd: 200 persistent clients direct and through PgBouncer's pools, 15-s windows."""
    direct = passes("direct-select-only", 200, [900, 950, 1000])
    for row in direct:
        row.update(initial_connection_ms=direct_connect_ms, server_cpu_cores=0.95, client_cpu_cores=0.3)
    pooled = []
    for pool in (4, 16):
        rows = passes(f"pooled-select-only-pool{pool}", 200, [1700, 1800, 1900])
        for row in rows:
            row.update(target="pgbouncer", pool_size=pool, initial_connection_ms=300.0,
                       server_cpu_cores=0.9, client_cpu_cores=0.3, pooler_cpu_cores=0.4,
                       pooler_cpus="0", pooler_cpu_budget=1.0, pooler_shares_server_cores=True)  # fmt: skip
        pooled += rows
    return [*direct, *pooled]


def crowd_verdict(tmp_path: Path, write_run: RunWriter, direct_connect_ms: float) -> dict:
    results = tmp_path / "results"
    write_run(results, "full-box", crowd_rows(direct_connect_ms), "full", experiment="pgbouncer-trade")
    aggregate_all(results_dir=results, out_dir=tmp_path / "data")
    claims = json.loads((tmp_path / "data" / "claims" / "pgbouncer-trade.json").read_text())["claims"]
    [claim] = [c for c in claims if c["id"] == "direct-beats-pooled-at-200"]
    return {v["machine"]: v for v in claim["verdicts"]}["full-box"]


@pytest.mark.slow
def test_a_claim_on_a_point_mostly_connecting_cannot_be_evaluated_and_says_why(
    tmp_path: Path, write_run: RunWriter
) -> None:
    """Issue 52's case: amd-epyc-2c-24g-2's direct 200 clients spent 17% of their 15-s windows connecting;
    the claim that reads them is undecided, in words, rather than judged on a rate over the rest."""
    verdict = crowd_verdict(tmp_path, write_run, direct_connect_ms=2550.0)
    assert verdict["verdict"] == CANNOT_EVALUATE
    assert verdict["value"] is None
    assert verdict["reason"] == (
        "at 200 clients (direct-select-only), connecting took 17% of the window "
        "(a steady state needs 10% at most)"
    )


@pytest.mark.slow
def test_the_same_claim_on_a_steady_point_is_judged(tmp_path: Path, write_run: RunWriter) -> None:
    verdict = crowd_verdict(tmp_path, write_run, direct_connect_ms=900.0)
    assert verdict["verdict"] == "does not hold"  # through PgBouncer about twice direct, not below it
    assert verdict["value"] == pytest.approx(1800 / 950)


def test_a_claim_with_no_figure_where_points_were_left_out_names_them() -> None:
    """A claim's query that finds no rate (its point was left out for connecting too long) gets the left-out
    points as its reason; with none left out, a missing value stays an error the claim must explain."""
    from connlab.contract.yaml_models import load_yaml_model
    from connlab.data.claims import ClaimsFile, _verdict
    from connlab.errors import LabError
    from connlab.paths import ARTICLES_SRC_DIR

    claims = load_yaml_model(ARTICLES_SRC_DIR / "pgbouncer-trade.claims.yaml", ClaimsFile).claims
    claim = next(c for c in claims if c.id == "read-write-collapses-at-50-per-core")
    row = {"machine": "box", "value": None}
    texts = [
        f"at {n} clients (direct-tpcb-like), connecting took 30% of the window" for n in (50, 100, 200, 400)
    ]
    verdict = _verdict(claim, row, "box", unsteady=texts)
    assert verdict["verdict"] == CANNOT_EVALUATE
    assert verdict["reason"] == "no steady-state figure here: " + "; ".join(texts[:3]) + "; and 1 more"
    with pytest.raises(LabError, match="no value and no reason"):
        _verdict(claim, row, "box", unsteady=[])
