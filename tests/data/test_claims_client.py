"""A verdict never rests on the load generator without saying so: where pgbench saturated its cores at a
claim's points the verdict is "cannot be evaluated" with pgbench's figure, or, where the query states the
bias's direction, a bound that is judged only where it decides; a claim that reads an experiment with
client-bound windows and does not say whether its own points were stops the build. Every verdict carries
the dates its experiments were measured, and how many readings it rests on where the query says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

from connlab.contract.names import CLIENT_NEAR_LIMIT_SHARE, OTHERS_WELL_BELOW_SHARE
from connlab.contract.yaml_models import load_yaml_model
from connlab.data.aggregate import aggregate_all
from connlab.data.claims import (
    CANNOT_EVALUATE,
    DOES_NOT_HOLD,
    HOLDS,
    INCONCLUSIVE,
    NOT_MEASURED,
    ClaimsFile,
    Runs,
    Threshold,
    claim_experiments,
    client_words,
    judge_bound,
    judge_claims,
    measured_on,
)
from connlab.errors import LabError
from connlab.paths import ARTICLES_SRC_DIR, RESULTS_DIR

MACHINES = ["bound-box", "free-box"]


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    """A pooler-churn table of one client-bound machine and one free one, and main.measured saying so."""
    connection = duckdb.connect()
    connection.execute(
        "CREATE SCHEMA pooler_churn; CREATE TABLE pooler_churn.t (machine VARCHAR, value DOUBLE, low DOUBLE, "
        "high DOUBLE, client_saturated BOOLEAN, client_cpu DOUBLE, client_cores DOUBLE)"
    )
    connection.execute(
        "INSERT INTO pooler_churn.t VALUES ('bound-box', 3.0, 2.7, 3.1, true, 0.95, 1), "
        "('free-box', 3.0, 2.7, 3.1, false, 0.4, 1)"
    )
    connection.execute(
        "CREATE TABLE main.measured AS SELECT * FROM (VALUES "
        "('bound-box', 'pooler-churn', '2026-12-01T10:00:00Z', '2026-12-01T11:00:00Z', 6), "
        "('free-box', 'pooler-churn', '2026-11-30T23:00:00Z', '2026-12-01T01:00:00Z', 0)) "
        "AS m(machine, experiment, first_window, last_window, windows_client_saturated)"
    )
    return connection


def claim(query: str, threshold: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "the-claim",
        "claim": "The claim.",
        "seed": "What the source measured.",
        "reading": "seed",
        "value_label": "a value",
        "threshold": threshold or {"op": ">=", "value": 2},
        "query": query,
        **extra,
    }


def verdicts(con: duckdb.DuckDBPyConnection, tmp_path: Path, **fields: Any) -> dict[str, dict[str, Any]]:
    path = tmp_path / "demo.claims.yaml"
    path.write_text(yaml.safe_dump({"source": "free-box", "claims": [claim(**fields)]}, sort_keys=False))
    out = judge_claims(con, path, MACHINES, tmp_path / "claims").path
    [result] = json.loads(out.read_text())["claims"]
    return {v["machine"]: v for v in result["verdicts"]}


COLUMNS = "machine, value, low, high, client_saturated, client_cpu, client_cores"


def test_a_client_bound_point_cannot_be_evaluated(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    by_machine = verdicts(con, tmp_path, query=f"SELECT {COLUMNS} FROM pooler_churn.t")
    bound = by_machine["bound-box"]
    assert bound["verdict"] == CANNOT_EVALUATE
    assert bound["reason"].startswith("pgbench used 0.95 of its core")
    assert bound["client_cpu"] == 0.95 and bound["client_saturated"] is True
    assert bound["value"] is None  # the load generator's figure is not shown as the claim's
    free = by_machine["free-box"]
    assert free["verdict"] == HOLDS and free["client_saturated"] is False and free["client_cpu"] == 0.4


def test_a_bound_is_judged_only_where_it_decides(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    query = f"SELECT {COLUMNS}, 'at least' AS bound FROM pooler_churn.t"
    decided = verdicts(con, tmp_path, query=query)["bound-box"]
    assert (decided["verdict"], decided["bound"], decided["value"]) == (HOLDS, "at least", 3.0)
    open_ = verdicts(con, tmp_path, query=query, threshold={"op": ">=", "value": 18.9})["bound-box"]
    assert open_["verdict"] == CANNOT_EVALUATE
    assert open_["reason"] == (
        "pgbench used 0.95 of its core, so the figure is at least 2.7, which cannot decide 'at least 18.9'"
    )
    assert open_["value"] == 3.0 and open_["bound"] == "at least"  # the bound is shown with its reason
    refuted = verdicts(con, tmp_path, query=query, threshold={"op": "<=", "value": 2})["bound-box"]
    assert refuted["verdict"] == DOES_NOT_HOLD


def test_a_claim_silent_on_client_bound_windows_stops_the_build(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    with pytest.raises(LabError, match=r"claim the-claim: bound-box: reads pooler-churn \(6 client-bound"):
        verdicts(con, tmp_path, query="SELECT machine, value, low, high FROM pooler_churn.t")
    # A claim about pgbench's own saturation is measured by those windows.
    about = verdicts(
        con, tmp_path, query="SELECT machine, value FROM pooler_churn.t", client_bound="not-a-bias"
    )
    assert about["bound-box"]["verdict"] == HOLDS
    # A query over tables that leave client-bound points out says so in its claim, and is judged.
    kept_out = verdicts(
        con, tmp_path, query="SELECT machine, value FROM pooler_churn.t", client_bound="excluded"
    )
    assert kept_out["bound-box"]["verdict"] == HOLDS and kept_out["bound-box"]["client_saturated"] is None


def test_every_verdict_carries_its_experiments_dates(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    by_machine = verdicts(con, tmp_path, query=f"SELECT {COLUMNS}, 1 AS readings FROM pooler_churn.t")
    assert by_machine["bound-box"]["measured_on"] == "2026-12-01"
    assert by_machine["free-box"]["measured_on"] == "2026-11-30 to 2026-12-01"
    assert by_machine["free-box"]["readings"] == 1
    assert measured_on([]) is None
    assert measured_on([Runs(first=None, last=None, client_saturated=0)]) is None


@pytest.mark.parametrize(
    ("column", "message"),
    [("'at best' AS bound", "column bound must be"), ("0 AS readings", "column readings must be a whole")],
)
def test_a_bad_bound_or_readings_names_the_claim(
    con: duckdb.DuckDBPyConnection, tmp_path: Path, column: str, message: str
) -> None:
    with pytest.raises(LabError, match=f"claim the-claim: .*{message}"):
        verdicts(con, tmp_path, query=f"SELECT {COLUMNS}, {column} FROM pooler_churn.t")


def test_claim_ids_are_unique(tmp_path: Path) -> None:
    path = tmp_path / "twice.claims.yaml"
    path.write_text(yaml.safe_dump({"source": "x", "claims": [claim("SELECT 1"), claim("SELECT 2")]}))
    with pytest.raises(LabError, match="twice: the-claim"):
        load_yaml_model(path, ClaimsFile)


@pytest.mark.parametrize(
    ("op", "value", "bound", "low", "high", "expected"),
    [
        (">=", 2, "at least", 2.5, 3, HOLDS),  # the floor already meets it
        (">=", 2, "at least", 1.5, 3, None),  # the true value could be either side
        ("<=", 2, "at least", 2.5, 3, DOES_NOT_HOLD),  # the floor already exceeds it
        ("<=", 2, "at least", 1.5, 3, None),
        ("<=", 2, "at most", 1, 1.5, HOLDS),
        ("<=", 2, "at most", 1, 2.5, None),
        (">", 1, "at most", 0.3, 0.9, DOES_NOT_HOLD),
        (">", 1, "at most", 0.3, 1.5, None),
        ("between", (1, 2), "at least", 2.5, 3, DOES_NOT_HOLD),
        ("between", (1, 2), "at least", 1.5, 3, None),
        ("between", (1, 2), "at most", 0.2, 0.5, DOES_NOT_HOLD),
    ],
)
def test_judge_bound(op: str, value: Any, bound: Any, low: float, high: float, expected: str | None) -> None:
    assert judge_bound(Threshold(op=op, value=value), bound, low, high) == expected  # type: ignore[arg-type]


def test_client_words() -> None:
    assert client_words(0.947, 1) == "pgbench used 0.95 of its core"
    assert client_words(0.93, 2) == "pgbench used 93% of its 2 cores"
    assert client_words(None, None) == "pgbench saturated its cores"


def test_a_pooler_without_a_core_of_its_own_cannot_be_near_one(tmp_path: Path) -> None:
    """pgbouncer-trade's pooler-near-a-core over constructed rows: its own budget below the load, a shared
    budget used whole (before the pooler had a cgroup of its own, and after), and a pooler with room."""
    [near] = [
        c
        for c in load_yaml_model(ARTICLES_SRC_DIR / "pgbouncer-trade.claims.yaml", ClaimsFile).claims
        if c.id == "pooler-near-a-core"
    ]
    con = duckdb.connect()
    con.execute(
        "CREATE SCHEMA pgbouncer_trade; CREATE TABLE pgbouncer_trade.pool_sizes AS SELECT * FROM (VALUES "
        "('small-budget', 0.4, 0.5, false, false, 0.6, 1.0), "
        "('shared-old', 0.22, NULL, true, true, 0.94, 1.0), "
        "('shared-new', 0.3, 1.0, true, false, 0.97, 1.0), "
        "('room', 0.8, 1.0, false, false, 1.5, 2.0)) "
        "AS t(machine, pooler_cpu, pooler_cpu_budget, pooler_shares_server_cores, pooler_in_server_cgroup, "
        "busy_cpu, server_cores)"
    )
    con.execute(
        "ALTER TABLE pgbouncer_trade.pool_sizes ADD COLUMN builtin VARCHAR DEFAULT 'select-only'; "
        "ALTER TABLE pgbouncer_trade.pool_sizes ADD COLUMN clients INTEGER; "
        "ALTER TABLE pgbouncer_trade.pool_sizes ADD COLUMN pool_size INTEGER; "
        # The source article's operating point per server core: 25 clients on a pool of 2.
        "UPDATE pgbouncer_trade.pool_sizes SET clients = 25 * server_cores, pool_size = 2 * server_cores; "
        "ALTER TABLE pgbouncer_trade.pool_sizes ADD COLUMN pooler_cpu_min DOUBLE DEFAULT NULL; "
        "ALTER TABLE pgbouncer_trade.pool_sizes ADD COLUMN pooler_cpu_max DOUBLE DEFAULT NULL; "
        "ALTER TABLE pgbouncer_trade.pool_sizes ADD COLUMN pooled_client_saturated BOOLEAN DEFAULT false; "
        "ALTER TABLE pgbouncer_trade.pool_sizes ADD COLUMN pooled_client_cpu DOUBLE DEFAULT 0.5; "
        "ALTER TABLE pgbouncer_trade.pool_sizes ADD COLUMN client_cores DOUBLE DEFAULT 1; "
        "CREATE TABLE main.published (machine VARCHAR, experiment VARCHAR, metric VARCHAR, value DOUBLE)"
    )
    path = tmp_path / "near.claims.yaml"
    path.write_text(
        yaml.safe_dump(
            {"source": "room", "claims": [near.model_dump(exclude_defaults=False)]}, sort_keys=False
        )
    )
    machines = ["small-budget", "shared-old", "shared-new", "room"]
    out = judge_claims(con, path, machines, tmp_path / "claims").path
    by_machine = {v["machine"]: v for v in json.loads(out.read_text())["claims"][0]["verdicts"]}
    assert by_machine["small-budget"]["reason"].startswith("PgBouncer's own budget was 0.5 of a core")
    assert "inside the server's cgroup" in by_machine["shared-old"]["reason"]
    assert by_machine["shared-new"]["verdict"] == CANNOT_EVALUATE
    assert "inside the server's cgroup" not in by_machine["shared-new"]["reason"]
    assert by_machine["room"]["verdict"] == HOLDS
    # Away from the operating point: judged nowhere, the reason naming the nearest point.
    con.execute("UPDATE pgbouncer_trade.pool_sizes SET clients = 200 * server_cores")
    out = judge_claims(con, path, machines, tmp_path / "claims").path
    far = {v["machine"]: v for v in json.loads(out.read_text())["claims"][0]["verdicts"]}
    assert far["room"]["verdict"] == CANNOT_EVALUATE
    assert far["room"]["reason"] == (
        "nearest point measured is 200 clients per server core on a pool of 2 per server core; "
        "the claim is at 25 on 2"
    )


def _one_claim_verdicts(
    con: duckdb.DuckDBPyConnection, claim_id: str, machines: list[str], tmp_path: Path
) -> dict:
    [definition] = [
        c
        for c in load_yaml_model(ARTICLES_SRC_DIR / "pgbouncer-trade.claims.yaml", ClaimsFile).claims
        if c.id == claim_id
    ]
    path = tmp_path / f"{claim_id}.claims.yaml"
    dumped = {"source": machines[0], "claims": [definition.model_dump(exclude_defaults=False)]}
    path.write_text(yaml.safe_dump(dumped, sort_keys=False))
    out = judge_claims(con, path, machines, tmp_path / "claims").path
    return {v["machine"]: v for v in json.loads(out.read_text())["claims"][0]["verdicts"]}


def test_the_statements_ceiling_is_judged_only_where_pgbouncer_was_near_its_core(tmp_path: Path) -> None:
    """Issue 52: a ceiling through PgBouncer is the pooler's only where PgBouncer was near its core; at 0.14
    to 0.32 of a core it was somewhere else, and the claim cannot be evaluated, saying so."""
    con = duckdb.connect()
    con.execute(
        "CREATE SCHEMA pgbouncer_trade; CREATE TABLE pgbouncer_trade.pool_sizes AS SELECT * FROM (VALUES "
        "('idle-pooler', 'tpcb-like', 1000.0, 0.14), ('idle-pooler', 'select-only', 7000.0, 0.32), "
        "('busy-pooler', 'tpcb-like', 1000.0, 0.9), ('busy-pooler', 'select-only', 7000.0, 0.95)) "
        "AS t(machine, builtin, pooled_tps, pooler_cpu)"
    )
    con.execute(
        "ALTER TABLE pgbouncer_trade.pool_sizes ADD COLUMN clients INTEGER DEFAULT 200; "
        "ALTER TABLE pgbouncer_trade.pool_sizes ADD COLUMN statements_per_s DOUBLE; "
        "UPDATE pgbouncer_trade.pool_sizes SET statements_per_s = pooled_tps "
        "    * CASE builtin WHEN 'tpcb-like' THEN 7 ELSE 1 END; "
        "ALTER TABLE pgbouncer_trade.pool_sizes ADD COLUMN statements_per_s_min DOUBLE; "
        "ALTER TABLE pgbouncer_trade.pool_sizes ADD COLUMN statements_per_s_max DOUBLE; "
        "UPDATE pgbouncer_trade.pool_sizes SET statements_per_s_min = statements_per_s, "
        "    statements_per_s_max = statements_per_s; "
        "ALTER TABLE pgbouncer_trade.pool_sizes ADD COLUMN pooled_client_saturated BOOLEAN DEFAULT false; "
        "ALTER TABLE pgbouncer_trade.pool_sizes ADD COLUMN pooled_client_cpu DOUBLE DEFAULT 0.5; "
        "ALTER TABLE pgbouncer_trade.pool_sizes ADD COLUMN client_cores DOUBLE DEFAULT 1; "
        "CREATE TABLE main.published (machine VARCHAR, experiment VARCHAR, metric VARCHAR, workload VARCHAR, "
        "value DOUBLE)"
    )
    verdicts = _one_claim_verdicts(con, "statements-ceiling-shared", ["idle-pooler", "busy-pooler"], tmp_path)
    assert verdicts["idle-pooler"]["verdict"] == CANNOT_EVALUATE
    assert verdicts["idle-pooler"]["reason"] == (
        "PgBouncer used 0.14 of a core at its best pool: below 0.85, so the ceiling was not the pooler's"
    )
    assert verdicts["busy-pooler"]["verdict"] == HOLDS  # 7,000 against 7,000 statements per second
    assert verdicts["busy-pooler"]["value"] == pytest.approx(1.0)


# -- over the committed results -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def committed_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out_dir = tmp_path_factory.mktemp("data")
    aggregate_all(out_dir=out_dir)
    return out_dir


@pytest.fixture(scope="module")
def committed(committed_dir: Path) -> dict[str, list[dict[str, Any]]]:
    return {
        path.stem: json.loads(path.read_text())["claims"]
        for path in sorted((committed_dir / "claims").glob("*.json"))
    }


@pytest.mark.slow
def test_every_claim_on_measured_windows_says_how_it_treats_a_client_bound_point(committed_dir: Path) -> None:
    """Not only where today's results hold client-bound windows: a machine added tomorrow may have them
    anywhere, and its verdicts must say so too."""
    con = duckdb.connect(str(committed_dir / "connlab.duckdb"), read_only=True)
    silent = []
    for path in sorted(ARTICLES_SRC_DIR.glob("*.claims.yaml")):
        for definition in load_yaml_model(path, ClaimsFile).claims:
            if not claim_experiments(definition) or definition.client_bound != "reported":
                continue
            names = [column[0] for column in con.execute(definition.query).description]
            if "client_saturated" not in names:
                silent.append(f"{path.name}: {definition.id}")
    con.close()
    assert silent == []


# The busiest-process rule written out again over the raw columns, apart from the aggregation's: pgbench near
# its limit, the server (with a pooler on its cores) and the pooler each well below theirs.
CLIENT_BOUND_IN_RAW = f"""
    client_cpu_cores >= {CLIENT_NEAR_LIMIT_SHARE} * coalesce(nullif(client_cpu_budget, 0), client_cores)
    AND coalesce(server_cpu_cores + CASE WHEN pooler_cpu_budget IS NOT NULL AND pooler_shares_server_cores
                                         THEN pooler_cpu_cores ELSE 0 END, 0)
        < {OTHERS_WELL_BELOW_SHARE} * server_cpu_budget
    AND coalesce(pooler_cpu_cores, 0)
        < {OTHERS_WELL_BELOW_SHARE} * coalesce(pooler_cpu_budget, server_cpu_budget)
"""
# The columns the rule reads, typed: files older than a column read it as empty.
RULE_COLUMNS = {
    "client_cpu_cores": "DOUBLE", "client_cpu_budget": "DOUBLE", "client_cores": "DOUBLE",
    "server_cpu_cores": "DOUBLE", "server_cpu_budget": "DOUBLE", "pooler_cpu_cores": "DOUBLE",
    "pooler_cpu_budget": "DOUBLE", "pooler_shares_server_cores": "BOOLEAN",
}  # fmt: skip


def _raw(pattern: str) -> str:
    """The committed rows of the CSVs a glob names, with the rule's columns typed whether or not the files
    have them."""
    empty = ", ".join(f"NULL::{kind} AS {name}" for name, kind in RULE_COLUMNS.items())
    typed = ", ".join(f"TRY_CAST({name} AS {kind}) AS {name}" for name, kind in RULE_COLUMNS.items())
    return (
        f"(SELECT * REPLACE ({typed}) FROM (SELECT {empty} WHERE false UNION ALL BY NAME "
        f"SELECT * FROM read_csv('{pattern}', union_by_name = true, all_varchar = true)))"
    )


def _saturated_in_raw() -> set[tuple[str, str]]:
    """(machine, experiment) pairs with a client-bound window in the most thorough profile, read straight
    from the committed CSVs, apart from the aggregation."""
    return set(
        duckdb.sql(
            f"""
            WITH best AS (
                SELECT * FROM {_raw(f"{RESULTS_DIR}/*/*/*.csv")}
                QUALIFY CASE profile WHEN 'full' THEN 3 WHEN 'quick' THEN 2 ELSE 1 END
                      = max(CASE profile WHEN 'full' THEN 3 WHEN 'quick' THEN 2 ELSE 1 END)
                        OVER (PARTITION BY machine, experiment)
            )
            SELECT DISTINCT machine, experiment FROM best WHERE {CLIENT_BOUND_IN_RAW}
            """
        ).fetchall()
    )


@pytest.mark.slow
def test_no_committed_verdict_rests_on_a_client_bound_window_unsaid(
    committed: dict[str, list[dict[str, Any]]],
) -> None:
    saturated = _saturated_in_raw()
    assert saturated, "the committed results hold client-bound windows; this test must see some"
    claims = {
        c.id: c
        for path in ARTICLES_SRC_DIR.glob("*.claims.yaml")
        for c in load_yaml_model(path, ClaimsFile).claims
    }
    looked = 0
    for article, results in committed.items():
        for result in results:
            definition = claims[result["id"]]
            for verdict in result["verdicts"]:
                where = f"{article}: {result['id']}: {verdict['machine']}"
                if verdict["verdict"] == NOT_MEASURED:
                    continue
                bound_here = {
                    experiment
                    for experiment in claim_experiments(definition)
                    if (verdict["machine"], experiment) in saturated
                }
                if bound_here and definition.client_bound == "reported":
                    # It read client-bound windows on this machine: it must say whether its points were.
                    assert verdict["client_saturated"] is not None, where
                    looked += 1
                if verdict["client_saturated"] and definition.client_bound == "reported":
                    assert verdict["verdict"] in (CANNOT_EVALUATE, HOLDS, DOES_NOT_HOLD, INCONCLUSIVE), where
                    assert verdict["verdict"] != INCONCLUSIVE, where
                    if verdict["bound"] is None:
                        assert verdict["verdict"] == CANNOT_EVALUATE, where
                        assert verdict["reason"].startswith("pgbench used"), where
                        assert verdict["client_cpu"] is not None, where
                        assert verdict["client_cpu"] >= CLIENT_NEAR_LIMIT_SHARE, where
                    elif verdict["verdict"] == CANNOT_EVALUATE:
                        assert f"is {verdict['bound']}" in verdict["reason"], where
    assert looked, "no claim read a client-bound experiment: the check above checked nothing"


@pytest.mark.slow
def test_committed_churn_verdicts_say_pgbench_was_the_limit(
    committed: dict[str, list[dict[str, Any]]],
) -> None:
    """The PgBouncer churn windows where pgbench used its whole core (issue 41's 24 windows): the verdicts on
    them are not published as measurements of the pooler."""
    raw = duckdb.sql(
        f"""
        SELECT DISTINCT machine FROM {_raw(f"{RESULTS_DIR}/*/pooler-churn/*.csv")}
        WHERE workload = 'churn-pgbouncer' AND {CLIENT_BOUND_IN_RAW} AND profile = 'full'
        """
    ).fetchall()
    machines = {machine for (machine,) in raw}
    churn = {c["id"]: {v["machine"]: v for v in c["verdicts"]} for c in committed["four-poolers"]}
    for machine in machines:
        verdict = churn["pgbouncer-falls-with-churn"][machine]
        assert verdict["verdict"] == CANNOT_EVALUATE and verdict["client_saturated"], machine


@pytest.mark.slow
def test_committed_verdicts_carry_their_experiments_dates(committed: dict[str, list[dict[str, Any]]]) -> None:
    dates = dict(
        duckdb.sql(
            f"""
            SELECT machine || '/' || experiment, max(started_at)::DATE::VARCHAR
            FROM read_csv('{RESULTS_DIR}/*/*/*.csv', union_by_name = true) GROUP BY ALL
            """
        ).fetchall()
    )
    claims = {
        c.id: c
        for path in ARTICLES_SRC_DIR.glob("*.claims.yaml")
        for c in load_yaml_model(path, ClaimsFile).claims
    }
    checked = 0
    for results in committed.values():
        for result in results:
            experiments = claim_experiments(claims[result["id"]])
            for verdict in result["verdicts"]:
                days = [
                    dates[f"{verdict['machine']}/{e}"]
                    for e in experiments
                    if f"{verdict['machine']}/{e}" in dates
                ]
                if verdict["verdict"] == NOT_MEASURED or not days:
                    continue
                assert verdict["measured_on"] is not None, (result["id"], verdict["machine"])
                assert max(days) in verdict["measured_on"], (result["id"], verdict["machine"])
                checked += 1
    assert checked


def test_the_run_to_run_swing_leaves_client_bound_points_out(tmp_path: Path) -> None:
    """four-poolers' throughput-swings-between-runs and memory-repeats-better-than-throughput say they
    leave client-bound points out (client_bound: excluded): a client-bound point with the widest swing of
    all must not be what either verdict rests on."""
    wanted = ("throughput-swings-between-runs", "memory-repeats-better-than-throughput")
    found = {
        c.id: c
        for c in load_yaml_model(ARTICLES_SRC_DIR / "four-poolers.claims.yaml", ClaimsFile).claims
        if c.id in wanted
    }
    assert sorted(found) == sorted(wanted) and all(c.client_bound == "excluded" for c in found.values())
    con = duckdb.connect()
    con.execute(
        "CREATE SCHEMA pooler_memory; CREATE TABLE pooler_memory.throughput AS SELECT * FROM (VALUES "
        "('box', 'pgbouncer', 10, 3, 3, 100.0, 130.0, false), "
        "('box', 'pgbouncer', 100, 3, 3, 100.0, 110.0, false), "
        "('box', 'pgpool', 10, 3, 3, 100.0, 900.0, true)) "
        "AS t(machine, pooler, clients, windows, windows_ok, tps_min, tps_max, client_saturated); "
        "CREATE TABLE pooler_memory.memory AS SELECT * FROM (VALUES "
        "('box', 'pgbouncer', 10, 10.0, 10.1), ('box', 'pgbouncer', 100, 10.0, 10.0), "
        "('box', 'pgpool', 10, 10.0, 90.0)) AS m(machine, pooler, clients, rss_mib_min, rss_mib_max)"
    )
    path = tmp_path / "swing.claims.yaml"
    dumped = [found[name].model_dump(exclude_defaults=False) for name in wanted]
    path.write_text(yaml.safe_dump({"source": "box", "claims": dumped}, sort_keys=False))
    out = judge_claims(con, path, ["box"], tmp_path / "claims").path
    swing, memory = (
        {v["machine"]: v for v in c["verdicts"]}["box"] for c in json.loads(out.read_text())["claims"]
    )
    # The client-bound pgpool point (9 times) is left out: the widest swing measured is PgBouncer's 1.3.
    assert swing["value"] == pytest.approx(1.3) and swing["note"] == "at 10 clients through pgbouncer"
    assert swing["verdict"] == DOES_NOT_HOLD
    # Memory's median swing (0.005) against throughput's (0.2), over the two free points only.
    assert memory["value"] == pytest.approx(0.005 / 0.2) and memory["verdict"] == HOLDS
