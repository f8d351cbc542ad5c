"""Where machines' verdicts on a claim differ, the sentence names what differs between them and only that."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import yaml

from connlab.contract.experiment import load_experiment
from connlab.data.answers.claim_rows import explained
from connlab.data.claims import judge_claims
from connlab.data.disagreements import disagreement, disagreements
from connlab.data.verdict_conditions import conditions, short_version


def cell(machine: str, verdict: str, **overrides: object) -> dict:
    base = {
        "profile": "full",
        "steal_pct_max": 0.1,
        "cpu_pressure_pct_max": 80.0,
        "postgres_version": "15.18",
        "server_cores": 1.0,
        "poolers": {"pgbouncer": "1.18.0"},
    }
    client = {k: overrides.pop(k) for k in ("client_saturated", "client_cpu") if k in overrides}
    return {
        "machine": machine,
        "verdict": verdict,
        "value": 1.0,
        "client_saturated": client.get("client_saturated", False),
        "client_cpu": client.get("client_cpu", 0.3),
        "conditions": {**base, **overrides},
    }


def row(*cells: dict) -> dict:
    return {"id": "c", "claim": "A claim.", "cells": list(cells)}


def test_machines_that_agree_have_no_sentence() -> None:
    agreeing = row(cell("a", "holds"), cell("b", "holds", profile="quick"), cell("c", "not measured"))
    assert disagreement(agreeing) is None
    # 'cannot be evaluated' gives its own reason in its cell: it is no disagreement.
    assert disagreement(row(cell("a", "holds"), cell("b", "cannot be evaluated"))) is None


def test_only_what_differs_is_named_with_each_verdicts_conditions() -> None:
    found = disagreement(
        row(
            cell("full-box", "holds"),
            cell("quick-box", "inconclusive", profile="quick", steal_pct_max=18.0),
        )
    )
    assert found is not None
    assert found["differs"] == ["profile", "steal"]
    assert found["groups"] == [
        {"verdict": "holds", "machines": ["full-box"], "traits": ["full profile", "steal up to 0.1%"]},
        {
            "verdict": "inconclusive",
            "machines": ["quick-box"],
            "traits": ["quick profile", "steal up to 18%"],
        },
    ]
    assert "server cores" in found["alike"] and "profile" not in found["alike"]


def test_how_the_rows_were_run_comes_from_the_rows_and_is_named_where_it_differs() -> None:
    """Passes, window lengths, the grid, pools and CPU accounting as main.measured read them from the rows:
    the rows' count of passes wins over the profile's (refinement adds passes), and the lists are the union
    over the claim's experiments."""
    runs = [
        {"experiment": "pooler-churn", "profile": "full", "passes": 2, "window_lengths_s": [10],
         "client_grid": [1, 4, 32], "pool_sizes": [2], "cpu_methods": ["cgroup-v1"]},
        {"experiment": "idle-memory", "profile": "full", "passes": 5, "window_lengths_s": [3, 10],
         "client_grid": [4, 400], "pool_sizes": [], "cpu_methods": ["cgroup-v1"]},
    ]  # fmt: skip
    found = conditions(runs, None, [])
    assert found["passes"] == 2
    assert found["window_lengths_s"] == [3, 10]
    assert found["client_grid"] == [1, 4, 32, 400]
    assert found["pool_sizes"] == [2]
    assert found["cpu_methods"] == ["cgroup-v1"]
    differing = disagreement(
        row(
            cell("coarse", "holds", client_grid=[1, 4, 32, 400], passes=2, window_lengths_s=[3]),
            cell("fine", "does not hold", client_grid=[1, 2, 4, 8, 16], passes=3, window_lengths_s=[3],
                 pool_sizes=[4], cpu_methods=["taskset"]),
        )
    )  # fmt: skip
    assert differing is not None
    assert differing["differs"] == ["passes", "client grid", "pool sizes", "CPU accounting"]
    assert differing["groups"][0]["traits"] == [
        "2 passes", "clients 1, 4, 32, 400", "no pool", "CPU accounting unknown"
    ]  # fmt: skip
    assert differing["groups"][1]["traits"] == [
        "3 passes", "clients 1, 2, 4, 8, 16", "pool of 4", "CPU budgets by taskset"
    ]  # fmt: skip
    assert "window lengths" in differing["alike"]


def test_client_saturation_versions_and_cores_are_named_where_they_differ() -> None:
    found = disagreement(
        row(
            cell("small", "does not hold", client_saturated=True, client_cpu=0.95),
            cell(
                "big",
                "holds",
                server_cores=8.0,
                postgres_version="17.11",
                poolers={"pgbouncer": "1.25.2"},
            ),
        )
    )
    assert found is not None
    assert found["differs"] == ["pgbench's load", "PostgreSQL version", "pooler versions", "server cores"]
    big, small = found["groups"]  # the firmest verdict first
    assert small["traits"] == [
        "pgbench saturated (0.95 of its cores)",
        "PostgreSQL 15.18",
        "pgbouncer 1.18.0",
        "1 server core",
    ]
    assert big["traits"] == [
        "pgbench below saturation",
        "PostgreSQL 17.11",
        "pgbouncer 1.25.2",
        "8 server cores",
    ]


def test_small_steal_and_pressure_gaps_are_not_differences() -> None:
    # A hypervisor's background steal (0.1% against 1.5%) and pressure within 20 points read alike.
    found = disagreement(
        row(cell("a", "holds"), cell("b", "inconclusive", steal_pct_max=1.5, cpu_pressure_pct_max=95.0))
    )
    assert found is not None
    assert found["differs"] == []
    assert all(group["traits"] == [] for group in found["groups"])
    assert "steal" in found["alike"] and "CPU pressure" in found["alike"]


def test_a_group_of_several_machines_gives_the_range_and_each_distinct_value() -> None:
    found = disagreement(
        row(
            cell("a", "holds", steal_pct_max=0.2),
            cell("b", "holds", profile="quick", steal_pct_max=3.0),
            cell("c", "does not hold", steal_pct_max=12.0, cpu_pressure_pct_max=30.0),
        )
    )
    assert found is not None
    holds = found["groups"][0]
    assert holds["machines"] == ["a", "b"]
    assert holds["traits"] == [
        "full profile or quick profile",
        "steal up to 0.2–3%",
        "CPU pressure up to 80%",
    ]


def test_answers_name_each_verdicts_machines_and_keep_the_order_of_claims() -> None:
    rows = [
        row(cell("a", "holds"), cell("b", "holds")),
        {**row(cell("a", "holds"), cell("b", "does not hold", profile="quick")), "id": "second"},
    ]
    assert [d["id"] for d in disagreements(rows)] == ["second"]
    (written,) = explained(rows)
    assert written["groups"][1]["machines"] == {"names": ["b"], "more": 0, "count": 1}
    # With the machines' server cores, each name carries its own: a page names a machine with them.
    (with_cores,) = explained(rows, {"a": 1.0, "b": 8.0})
    assert with_cores["groups"][1]["machines"]["cores"] == [8.0]


def test_conditions_take_the_least_thorough_profile_and_the_most_steal_of_the_claims_experiments() -> None:
    runs = [
        {"profile": "full", "server_cores": 1.0, "steal_pct_max": 0.5, "cpu_pressure_pct_max": 70.0},
        {"profile": "quick", "server_cores": 1.0, "steal_pct_max": 9.0, "cpu_pressure_pct_max": None},
    ]
    facts = {
        "postgres_version": "15.18 (Debian 15.18-0+deb12u1)",
        "server_cores": 2.0,
        "profile": "full",
        "poolers": {"pgbouncer": "1.18.0", "pgpool": "4.3.5"},
    }
    assert conditions(runs, facts, ["pgbouncer"]) == {
        "profile": "quick",
        "steal_pct_max": 9.0,
        "cpu_pressure_pct_max": 70.0,
        "postgres_version": "15.18",
        "server_cores": 1.0,
        "poolers": {"pgbouncer": "1.18.0"},
        "passes": None,  # the runs name no experiment whose profile says
        "window_lengths_s": [],
        "client_grid": [],
        "pool_sizes": [],
        "cpu_methods": [],
    }
    # Without runs' cores and profile, the machine's.
    assert conditions([], facts, [])["server_cores"] == 2.0
    assert conditions([], facts, [])["profile"] == "full"
    assert short_version(None) is None


def test_each_verdict_carries_the_conditions_of_its_claims_experiments(tmp_path: Path) -> None:
    """judge_claims reads main.measured, main.machines and main.pooler_versions into every verdict."""
    con = duckdb.connect()
    con.execute(
        "CREATE SCHEMA pooler_churn; CREATE TABLE pooler_churn.t AS SELECT * FROM (VALUES ('calm', 3.0), "
        "('stolen', 1.0)) AS t(machine, value)"
    )
    con.execute(
        "CREATE TABLE main.measured AS SELECT * FROM (VALUES "
        "('calm', 'pooler-churn', 'full', 1.0, '2026-12-01', '2026-12-01', 0, 0.1, 70.0), "
        "('calm', 'idle-memory', 'quick', 1.0, '2026-12-01', '2026-12-01', 0, 40.0, 9.0), "
        "('stolen', 'pooler-churn', 'tiny', 1.0, '2026-12-01', '2026-12-01', 0, 18.0, 80.0)) "
        "AS m(machine, experiment, profile, server_cores, first_window, last_window, "
        "windows_client_saturated, steal_pct_max, cpu_pressure_pct_max)"
    )
    con.execute(
        "CREATE TABLE main.machines AS SELECT * FROM (VALUES "
        "('calm', '15.18 (Debian)', 2.0, 'full', 7000.0), ('stolen', '17.11', 2.0, 'full', NULL)) "
        "AS m(id, postgres_version, server_cores, profile, calibration_tps)"
    )
    con.execute(
        "CREATE TABLE main.pooler_versions AS SELECT * FROM (VALUES ('calm', 'pgbouncer', '1.18.0', true), "
        "('calm', 'odyssey', 'not available on this machine', false), "
        "('stolen', 'pgbouncer', '1.25.2', true)) "
        "AS p(machine, pooler, version, available)"
    )
    path = tmp_path / "demo.claims.yaml"
    claim = {
        "id": "c",
        "claim": "The claim.",
        "seed": "The seed.",
        "reading": "seed",
        "value_label": "a value",
        "threshold": {"op": ">=", "value": 2},
        "client_bound": "not-a-bias",
        "query": "SELECT machine, value FROM pooler_churn.t",
    }
    path.write_text(yaml.safe_dump({"source": "calm", "claims": [claim]}))
    out = judge_claims(con, path, ["calm", "stolen"], tmp_path / "claims").path
    [result] = json.loads(out.read_text())["claims"]
    calm, stolen = result["verdicts"]
    # Only the claim's own experiment counts (idle-memory's steal is not pooler-churn's).
    assert calm["conditions"] == {
        "profile": "full",
        "steal_pct_max": 0.1,
        "cpu_pressure_pct_max": 70.0,
        "postgres_version": "15.18",
        "server_cores": 1.0,
        "poolers": {"pgbouncer": "1.18.0"},
        "passes": load_experiment("pooler-churn").profiles["full"].passes,
        "window_lengths_s": [],
        "client_grid": [],
        "pool_sizes": [],
        "cpu_methods": [],
    }
    assert calm["readings"] is None
    # A folder without a calibration: nothing checked its runs are one machine's, and its verdicts say so.
    assert calm["unverified"] is None
    assert stolen["unverified"].startswith("This machine records no calibration, so nothing checked")
    assert stolen["conditions"]["steal_pct_max"] == 18.0
    # pooler-churn's tiny profile runs one pass: the verdict says it rests on one reading, though the
    # query did not.
    assert stolen["conditions"]["passes"] == 1 and stolen["readings"] == 1
    found = disagreement({"id": "c", "claim": "The claim.", "cells": result["verdicts"]})
    assert found is not None
    assert found["differs"] == ["profile", "steal", "PostgreSQL version", "pooler versions", "passes"]
