"""An article's claims, checked per machine: three-valued verdicts computed on the median and on the range of
the passes (holds, does not hold, inconclusive), "cannot be evaluated" with its reason in words, "not
measured" where a machine has no data, and a build that stops, naming the file and the claim, when a claim
cannot be checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

from connlab.contract.yaml_models import load_yaml_model
from connlab.data.claims import (
    CANNOT_EVALUATE,
    DOES_NOT_HOLD,
    EMPTY_VERDICT,
    HOLDS,
    INCONCLUSIVE,
    NOT_MEASURED,
    ClaimsFile,
    Threshold,
    judge,
    judge_claims,
    summarise,
)
from connlab.data.main_tables import load_machines, register_machines
from connlab.errors import LabError
from connlab.paths import ARTICLES_SRC_DIR, MACHINE_FILE_NAME
from support.rows import machine_facts

MACHINES = ["holds-box", "fails-box", "straddles-box", "reason-box", "nan-box", "absent-box"]
AT_LEAST_HALF = {"op": ">=", "value": 0.5}


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    connection.execute(
        "CREATE TABLE t (machine VARCHAR, value DOUBLE, low DOUBLE, high DOUBLE, reason VARCHAR)"
    )
    connection.execute(
        "INSERT INTO t VALUES ('holds-box', 0.6, 0.55, 0.7, NULL), ('fails-box', 0.3, 0.2, 0.4, NULL), "
        "('straddles-box', 0.53, 0.45, 0.64, NULL), "
        "('reason-box', NULL, NULL, NULL, '5 client counts; a fit needs 6'), "
        "('nan-box', 'NaN'::DOUBLE, NULL, NULL, 'no figure printed')"
    )
    return connection


def claim(claim_id: str, query: str, threshold: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": claim_id,
        "claim": f"The claim {claim_id}.",
        "seed": "What the source measured.",
        "reading": "seed",
        "value_label": "a value",
        "threshold": threshold or AT_LEAST_HALF,
        "query": query,
        **extra,
    }


def write_claims(tmp_path: Path, *claims: dict[str, Any], source: str = "holds-box") -> Path:
    path = tmp_path / "demo.claims.yaml"
    path.write_text(yaml.safe_dump({"source": source, "claims": list(claims)}, sort_keys=False))
    return path


def evaluated(
    con: duckdb.DuckDBPyConnection, path: Path, tmp_path: Path, **kwargs: Any
) -> list[dict[str, Any]]:
    out = judge_claims(con, path, MACHINES, tmp_path / "claims", **kwargs).path
    assert out == tmp_path / "claims" / "demo.json"
    data = json.loads(out.read_text())
    assert data["source"] == "holds-box"
    return data["claims"]


def by_machine(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {v["machine"]: v for v in result["verdicts"]}


# -- the rule ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("threshold", "value", "low", "high", "expected"),
    [
        (AT_LEAST_HALF, 0.6, 0.55, 0.7, HOLDS),
        (AT_LEAST_HALF, 0.3, 0.2, 0.4, DOES_NOT_HOLD),
        (AT_LEAST_HALF, 0.53, 0.45, 0.64, INCONCLUSIVE),  # the median holds, a pass does not
        (AT_LEAST_HALF, 0.48, 0.45, 0.51, INCONCLUSIVE),  # the median fails, a pass holds
        (AT_LEAST_HALF, 0.5, None, None, HOLDS),  # a published figure: no range, the value decides
        (AT_LEAST_HALF, 0.6, 0.65, 0.7, HOLDS),  # a range that leaves out the value is widened to it
        ({"op": "<", "value": 1}, 0.9, 0.8, 1.0, INCONCLUSIVE),  # touching a strict bound counts against
        ({"op": "<=", "value": 1}, 0.9, 0.8, 1.0, HOLDS),
        ({"op": ">", "value": 1}, 1.2, 1.0, 1.3, INCONCLUSIVE),
        ({"op": "between", "value": [2, 6]}, 4, 2, 6, HOLDS),  # both ends included
        ({"op": "between", "value": [2.83, 5.66]}, 4, 2, 4, INCONCLUSIVE),  # one pass peaked at 2
        ({"op": "between", "value": [2.83, 5.66]}, 8, 8, 16, DOES_NOT_HOLD),
        ({"op": "between", "value": [2.83, 5.66]}, 1, 1, 2, DOES_NOT_HOLD),
        ({"op": "between", "value": [2.83, 5.66]}, 4, 1, 16, INCONCLUSIVE),  # range wider than the band
    ],
)
def test_judge(
    threshold: dict[str, Any], value: float, low: float | None, high: float | None, expected: str
) -> None:
    assert judge(Threshold(**threshold), value, low, high) == expected


@pytest.mark.parametrize(
    ("threshold", "text"),
    [
        ({"op": ">=", "value": 0.48}, "at least 0.48"),
        ({"op": ">", "value": 0.5}, "above 0.5"),
        ({"op": "<=", "value": 1.3}, "at most 1.3"),
        ({"op": "<", "value": 2}, "below 2"),
        ({"op": "between", "value": [0.71, 1.41]}, "between 0.71 and 1.41"),
    ],
)
def test_threshold_in_words(threshold: dict[str, Any], text: str) -> None:
    assert Threshold(**threshold).text() == text


@pytest.mark.parametrize(
    "threshold",
    [
        {"op": "between", "value": 3},
        {"op": ">=", "value": [1, 2]},
        {"op": "between", "value": [6, 2]},
        {"op": "~", "value": 1},
    ],
)
def test_a_malformed_threshold_is_refused(threshold: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Threshold(**threshold)


def test_summarise_counts_measured_machines_only() -> None:
    verdicts = [
        {"machine": "a", "verdict": HOLDS},
        {"machine": "b", "verdict": HOLDS},
        {"machine": "c", "verdict": INCONCLUSIVE},
        {"machine": "d", "verdict": NOT_MEASURED},
        {"machine": "published-x", "verdict": DOES_NOT_HOLD},
    ]
    assert summarise(verdicts, ["a", "b", "c", "d"]) == "holds on 2 of 3 machines, inconclusive on 1"
    assert summarise(verdicts, ["c"]) == "inconclusive on 1 of 1 machine"
    assert summarise(verdicts, ["d"]) == "no measured machine has the data"


# -- evaluating a claims file -----------------------------------------------------------------------------
def test_a_verdict_per_machine_with_its_range(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    path = write_claims(tmp_path, claim("from-table", "SELECT machine, value, low, high, reason FROM t"))
    [result] = evaluated(con, path, tmp_path, measured=MACHINES[:4])
    verdicts = by_machine(result)
    assert {m: v["verdict"] for m, v in verdicts.items()} == {
        "holds-box": HOLDS,
        "fails-box": DOES_NOT_HOLD,
        "straddles-box": INCONCLUSIVE,
        "reason-box": CANNOT_EVALUATE,
        "nan-box": CANNOT_EVALUATE,
        "absent-box": NOT_MEASURED,  # not returned by the query at all
    }
    assert verdicts["straddles-box"] == {
        **EMPTY_VERDICT, "machine": "straddles-box", "verdict": INCONCLUSIVE, "value": 0.53, "low": 0.45,
        "high": 0.64,
    }  # fmt: skip
    # A claim that cannot be evaluated says why in words, and shows no value beside it.
    assert verdicts["reason-box"]["reason"] == "5 client counts; a fit needs 6"
    assert verdicts["reason-box"]["value"] is None
    assert [v["machine"] for v in result["verdicts"]] == MACHINES  # in the order of the machines
    assert result["threshold"] == "at least 0.5"
    assert result["reading"] == "seed"
    assert result["summary"] == (
        "holds on 1 of 4 machines, does not hold on 1, inconclusive on 1, cannot be evaluated on 1"
    )
    assert "query" not in result


def test_low_and_high_are_optional(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    path = write_claims(
        tmp_path, claim("bare", "SELECT machine, value FROM t WHERE value IS NOT NULL AND NOT isnan(value)")
    )
    [result] = evaluated(con, path, tmp_path)
    verdicts = by_machine(result)
    assert verdicts["straddles-box"]["verdict"] == HOLDS  # 0.53 alone meets the threshold
    assert verdicts["straddles-box"]["low"] is None


def test_a_value_without_a_reason_stops_the_build(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    """A row with no value must say why: a silent gap would read as 'not measured' on a measured machine."""
    path = write_claims(tmp_path, claim("silent", "SELECT machine, NULL::DOUBLE AS value FROM t"))
    with pytest.raises(LabError, match="claim silent: holds-box: no value and no reason"):
        judge_claims(con, path, MACHINES, tmp_path / "claims")
    assert not (tmp_path / "claims" / "demo.json").exists()


def test_a_range_upside_down_stops_the_build(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    path = write_claims(
        tmp_path,
        claim("upside", "SELECT machine, value, high AS low, low AS high FROM t WHERE low IS NOT NULL"),
    )
    with pytest.raises(LabError, match=r"claim upside: holds-box: low 0\.7 is above high 0\.55"):
        judge_claims(con, path, MACHINES, tmp_path / "claims")


def test_two_rows_for_one_machine_stop_the_build(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    path = write_claims(
        tmp_path, claim("twice", "SELECT machine, value FROM t UNION ALL SELECT machine, value FROM t")
    )
    with pytest.raises(LabError, match="claim twice: more than one row for machine holds-box"):
        judge_claims(con, path, MACHINES, tmp_path / "claims")


def test_no_machines_gives_empty_verdicts(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    path = write_claims(tmp_path, claim("any", "SELECT machine, value FROM t"))
    out = judge_claims(con, path, [], tmp_path / "claims").path
    [result] = json.loads(out.read_text())["claims"]
    assert result["verdicts"] == []
    assert result["summary"] == "no measured machine has the data"


def test_a_failing_query_names_the_file_and_the_claim(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    path = write_claims(
        tmp_path,
        claim("fine", "SELECT machine, value, reason FROM t"),
        claim("broken-claim", "SELECT machine, value FROM no_such_table"),
    )
    with pytest.raises(LabError) as caught:
        judge_claims(con, path, MACHINES, tmp_path / "claims")
    message = str(caught.value)
    assert message.startswith(f"{path}: claim broken-claim: query failed: ")
    assert "no_such_table" in message
    assert len(message.splitlines()) == 1
    assert not (tmp_path / "claims" / "demo.json").exists()  # nothing half-checked is published


def test_a_query_without_the_value_column(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    path = write_claims(tmp_path, claim("no-value", "SELECT machine, low FROM t"))
    with pytest.raises(LabError) as caught:
        judge_claims(con, path, MACHINES, tmp_path / "claims")
    assert str(caught.value) == (
        f"{path}: claim no-value: query must return columns machine and value (missing: value)"
    )


def test_a_claims_file_with_an_unknown_key(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    path = write_claims(
        tmp_path,
        claim("first", "SELECT machine, value FROM t"),
        claim("second", "SELECT machine, value FROM t", colour="blue"),
    )
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "colour:" in text)
    with pytest.raises(LabError) as caught:
        judge_claims(con, path, MACHINES, tmp_path / "claims")
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: claims.1.colour: unknown key")
    assert len(message.splitlines()) == 1


def test_a_claim_needs_a_reading(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    unnamed = claim("unnamed", "SELECT machine, value FROM t")
    del unnamed["reading"]
    path = write_claims(tmp_path, unnamed)
    with pytest.raises(LabError, match=r"claims\.0\.reading"):
        judge_claims(con, path, MACHINES, tmp_path / "claims")


def test_a_claims_file_that_is_not_yaml(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    path = tmp_path / "demo.claims.yaml"
    path.write_text("source: x\nclaims:\n  - id: x\n    claim: a: b\n")
    with pytest.raises(LabError) as caught:
        judge_claims(con, path, MACHINES, tmp_path / "claims")
    assert str(caught.value).startswith(f"{path}:4: (yaml): ")


def test_a_claim_id_must_be_a_slug(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    path = write_claims(tmp_path, claim("Not A Slug", "SELECT machine, value FROM t"))
    with pytest.raises(LabError, match=r"claims\.0\.id: String should match pattern"):
        judge_claims(con, path, MACHINES, tmp_path / "claims")


def test_a_value_that_is_not_a_number_names_the_claim(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    """A claim whose value column is text cannot be published as a figure; the build must stop with the
    file and the claim named, as for a failing query, not with a ValueError traceback."""
    path = write_claims(tmp_path, claim("text-value", "SELECT machine, 'lots' AS value FROM t"))
    with pytest.raises(LabError, match="claim text-value"):
        judge_claims(con, path, MACHINES, tmp_path / "claims")


def test_the_articles_claims_files_load() -> None:
    """Every article's claims: unique ids, and a project's reading says so in its sentence, so a reader
    never takes it for the seed's statement."""
    files = sorted(ARTICLES_SRC_DIR.glob("*.claims.yaml"))
    assert files
    for path in files:
        claims_file = load_yaml_model(path, ClaimsFile)
        assert claims_file.source.startswith("published-")
        ids = [c.id for c in claims_file.claims]
        assert len(ids) == len(set(ids)), f"{path}: claim ids repeat"
        for c in claims_file.claims:
            assert c.claim.startswith("Project's reading") == (c.reading == "project"), f"{path}: {c.id}"


def test_a_claim_across_machines_gives_one_verdict(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    query = (
        "SELECT max(value) / min(value) AS value, 1.0 AS low, 2.5 AS high, "
        "'largest against smallest' AS note FROM t WHERE low IS NOT NULL"
    )
    path = write_claims(tmp_path, claim("across", query, {"op": "<=", "value": 2}, scope="across"))
    [result] = evaluated(con, path, tmp_path)
    assert result["verdicts"] == []
    assert result["across"]["verdict"] == INCONCLUSIVE  # 2.0 meets "at most 2"; a pass at 2.5 does not
    assert result["across"]["value"] == pytest.approx(2.0)
    assert result["across"]["note"] == "largest against smallest"
    assert result["summary"] == INCONCLUSIVE


def test_a_claim_across_machines_returns_one_row(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    path = write_claims(tmp_path, claim("many", "SELECT value FROM t", scope="across"))
    with pytest.raises(LabError, match="claim many: a claim across machines returns one row, got 5"):
        judge_claims(con, path, MACHINES, tmp_path / "claims")


def test_the_experiments_an_article_reads_come_from_its_queries() -> None:
    from connlab.contract.yaml_models import load_yaml_model
    from connlab.data.claims import ClaimsFile, experiments_read
    from connlab.paths import ARTICLES_SRC_DIR

    claims = load_yaml_model(ARTICLES_SRC_DIR / "pgbouncer-trade.claims.yaml", ClaimsFile)
    # main.published and main.machines are not experiments; pgbouncer_trade.churn is.
    assert experiments_read(claims) == [
        "pgbouncer-processes",
        "pgbouncer-trade",
        "tls-trade",
        "too-many-clients",
    ]


def test_only_the_changed_machines_are_checked_again(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    """With the machines whose data changed, the others' verdicts are read back from the file: a change to an
    unchanged machine's rows does not show, the changed machine's does, and the summary counts both."""
    path = write_claims(
        tmp_path,
        claim("from-table", "SELECT machine, value, low, high, reason FROM t -- a comment on the last line;"),
        claim("across", "SELECT avg(value) AS value FROM t WHERE value < 1", scope="across"),
    )
    evaluated(con, path, tmp_path, measured=MACHINES[:4])
    con.execute("UPDATE t SET value = 0.1, low = 0.1, high = 0.1 WHERE machine IN ('holds-box', 'fails-box')")
    con.execute("UPDATE t SET value = 0.9, low = 0.9, high = 0.9 WHERE machine = 'straddles-box'")
    result, across = evaluated(con, path, tmp_path, measured=MACHINES[:4], changed={"straddles-box"})
    verdicts = {m: v["verdict"] for m, v in by_machine(result).items()}
    assert verdicts["holds-box"] == HOLDS and verdicts["fails-box"] == DOES_NOT_HOLD  # as written before
    assert verdicts["straddles-box"] == HOLDS  # checked again
    assert result["summary"] == "holds on 2 of 4 machines, does not hold on 1, cannot be evaluated on 1"
    assert across["across"]["value"] == pytest.approx((0.1 + 0.1 + 0.9) / 3)  # across machines: always again
    [everything, _] = evaluated(con, path, tmp_path, measured=MACHINES[:4])
    assert by_machine(everything)["holds-box"]["verdict"] == DOES_NOT_HOLD


def test_a_file_without_a_machines_verdict_checks_the_claim_on_every_machine(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    path = write_claims(tmp_path, claim("from-table", "SELECT machine, value, low, high, reason FROM t"))
    out = judge_claims(con, path, MACHINES[:3], tmp_path / "claims").path
    con.execute("UPDATE t SET value = 0.1, low = 0.1, high = 0.1 WHERE machine = 'holds-box'")
    # A machine the file has no verdict for (and that is not among the changed ones): checked anew, with all.
    judge_claims(con, path, MACHINES, tmp_path / "claims", changed={"fails-box"})
    [result] = json.loads(out.read_text())["claims"]
    assert by_machine(result)["holds-box"]["verdict"] == DOES_NOT_HOLD
    assert by_machine(result)["absent-box"]["verdict"] == NOT_MEASURED


def test_running_out_of_ports_states_the_clients_own_limit(tmp_path: Path) -> None:
    """too-many-connections' client-runs-out-of-ports over a tmp results tree: a machine whose machine.yaml
    records the client's port settings names its limit (ports ÷ TIME_WAIT) beside the fastest reconnecting,
    and whether tcp_tw_reuse lets its windows' loopback connections take ports in TIME_WAIT again; one
    whose file predates them keeps the reason and says the range was not recorded."""
    ports = {"ip_local_port_range": "32768 60999", "tcp_tw_reuse": 2, "tcp_fin_timeout": 60}
    remote = {"host": "db.example.org", "port": 5432, "client_host": "box", "stated_cores": 4.0,
              "server_version": "16.4", "max_connections": 100, "shared_buffers": "128MB", "ssl": "on",
              "password_encryption": "scram-sha-256", "rtt_ms": 0.4}  # fmt: skip
    machines = {
        "lab": ports,
        "older": {},
        "remote": {**ports, "remote_server": remote},
        "no-reuse": {**ports, "ip_local_port_range": "1024 65535", "tcp_tw_reuse": 0},
        "fast": ports,
    }
    results = tmp_path / "results"
    for machine, extra in machines.items():
        (results / machine).mkdir(parents=True)
        (results / machine / MACHINE_FILE_NAME).write_text(yaml.safe_dump(machine_facts(machine, **extra)))
    con = duckdb.connect()
    register_machines(con, load_machines(results))
    con.execute(
        "CREATE SCHEMA connect_cost; CREATE TABLE connect_cost.points AS SELECT * FROM (VALUES "
        "('lab', 'new-trust-tcp', 'tcp', 1, 281.4), ('lab', 'new-trust-unix', 'unix', 1, 900.0), "
        "('older', 'new-trust-tcp', 'tcp', 1, 228.0), ('remote', 'new-trust-tcp', 'tcp', 1, 120.0), "
        "('no-reuse', 'new-trust-tcp', 'tcp', 1, 300.0), ('fast', 'new-trust-tcp', 'tcp', 8, 2100.0)) "
        "AS t(machine, workload, transport, clients, tps_max); "
        "CREATE SCHEMA pooler_churn; CREATE TABLE pooler_churn.churn AS SELECT * FROM (VALUES "
        "('lab', 'pgbouncer', 8, 150.0), ('remote', 'pgbouncer', 8, 90.0)) "
        "AS t(machine, target, clients, tps_max); "
        "CREATE SCHEMA tls_trade; CREATE TABLE tls_trade.points AS SELECT * FROM (VALUES "
        "('lab', 'churn-direct-tls', 'direct', 8, 100.0)) AS t(machine, workload, target, clients, tps_max)"
    )
    [ports_claim] = [
        c
        for c in load_yaml_model(ARTICLES_SRC_DIR / "too-many-connections.claims.yaml", ClaimsFile).claims
        if c.id == "client-runs-out-of-ports"
    ]
    path = tmp_path / "ports.claims.yaml"
    dumped = ports_claim.model_dump(exclude_defaults=False)
    path.write_text(yaml.safe_dump({"source": "lab", "claims": [dumped]}, sort_keys=False))
    out = judge_claims(con, path, list(machines), tmp_path / "claims").path
    [result] = json.loads(out.read_text())["claims"]
    verdicts = by_machine(result)
    short = (
        "the fastest reconnecting over TCP measured here reached {} connections per second, short of the "
        "roughly 2,000 at which the source article's client ran out of ports, so no window here came near "
        "that limit; "
    )
    limit = "the client's own limit here: 28,232 ports ÷ 60 s = 470/s per server port; tcp_tw_reuse 2 "
    assert verdicts["lab"]["verdict"] == CANNOT_EVALUATE
    assert verdicts["lab"]["reason"] == short.format(281) + limit + (
        "lets loopback reuse ports in TIME_WAIT, and every window here ran over loopback"
    )
    assert verdicts["lab"]["note"] == "connect-cost, new-trust-tcp, 1 client"
    assert verdicts["older"]["reason"] == short.format(228) + "the client's port range was not recorded"
    # The server on another host: the direct point's connections left the host, the pooler's stayed on it.
    assert verdicts["remote"]["reason"].endswith(
        "lets loopback reuse ports in TIME_WAIT, and 1 of the 2 points here ran over loopback"
    )
    assert verdicts["no-reuse"]["reason"] == short.format(300) + (
        "the client's own limit here: 64,512 ports ÷ 60 s = 1,075/s per server port; tcp_tw_reuse 0 lets no "
        "connection reuse a port in TIME_WAIT"
    )
    # Judged where the reconnecting came near the seed's rate: the limit is the note's.
    assert verdicts["fast"]["verdict"] == HOLDS and verdicts["fast"]["value"] == pytest.approx(2100.0)
    assert verdicts["fast"]["note"] == "connect-cost, new-trust-tcp, 8 clients; " + limit + (
        "lets loopback reuse ports in TIME_WAIT, and every window here ran over loopback"
    )
