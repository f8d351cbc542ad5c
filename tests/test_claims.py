"""An article's claims, checked per machine: a verdict per machine (holds, does not hold, not measured), and a
claim that cannot be checked stops the build with a message naming the file and the claim."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

from connlab.data.claims import ClaimsFile, evaluate_claims
from connlab.data.yaml_models import load_yaml_model
from connlab.errors import LabError
from connlab.paths import ARTICLES_SRC_DIR

MACHINES = ["holds-box", "fails-box", "null-box", "nan-box", "absent-box"]


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    connection.execute("CREATE TABLE t (machine VARCHAR, value DOUBLE, holds BOOLEAN)")
    connection.execute(
        "INSERT INTO t VALUES ('holds-box', 4.0, true), ('fails-box', 8.5, false), "
        "('null-box', NULL, NULL), ('nan-box', 'NaN'::DOUBLE, true)"
    )
    return connection


def claim(claim_id: str, query: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": claim_id,
        "claim": f"The claim {claim_id}.",
        "seed": "What the source measured.",
        "value_label": "a value",
        "query": query,
        **extra,
    }


def write_claims(tmp_path: Path, *claims: dict[str, Any]) -> Path:
    path = tmp_path / "demo.claims.yaml"
    path.write_text(yaml.safe_dump({"claims": list(claims)}, sort_keys=False))
    return path


def verdicts(result: dict[str, Any]) -> dict[str, tuple[str, float | None]]:
    return {v["machine"]: (v["verdict"], v["value"]) for v in result["verdicts"]}


def test_a_verdict_per_machine(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    path = write_claims(
        tmp_path,
        claim("from-table", "SELECT machine, value, holds FROM t"),
        claim("holds-nowhere", "SELECT machine, value, false AS holds FROM t WHERE machine = 'holds-box'"),
    )
    out = evaluate_claims(con, path, MACHINES, tmp_path / "claims")
    assert out == tmp_path / "claims" / "demo.json"
    first, second = json.loads(out.read_text())
    assert verdicts(first) == {
        "holds-box": ("holds", 4.0),
        "fails-box": ("does not hold", 8.5),
        "null-box": ("not measured", None),  # holds is null: the machine lacks the data
        "nan-box": ("holds", None),  # NaN is no number in JSON
        "absent-box": ("not measured", None),  # not returned by the query at all
    }
    assert [v["machine"] for v in first["verdicts"]] == MACHINES  # in the order of the machines
    assert {key: first[key] for key in ("id", "claim", "seed", "value_label")} == {
        "id": "from-table",
        "claim": "The claim from-table.",
        "seed": "What the source measured.",
        "value_label": "a value",
    }
    assert "query" not in first
    assert verdicts(second)["holds-box"] == ("does not hold", 4.0)
    assert {verdict for verdict, _ in verdicts(second).values()} == {"does not hold", "not measured"}


def test_no_machines_gives_empty_verdicts(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    path = write_claims(tmp_path, claim("any", "SELECT machine, value, holds FROM t"))
    [result] = json.loads(evaluate_claims(con, path, [], tmp_path / "claims").read_text())
    assert result["verdicts"] == []


def test_a_failing_query_names_the_file_and_the_claim(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    path = write_claims(
        tmp_path,
        claim("fine", "SELECT machine, value, holds FROM t"),
        claim("broken-claim", "SELECT machine, value, holds FROM no_such_table"),
    )
    with pytest.raises(LabError) as caught:
        evaluate_claims(con, path, MACHINES, tmp_path / "claims")
    message = str(caught.value)
    assert message.startswith(f"{path}: claim broken-claim: query failed: ")
    assert "no_such_table" in message
    assert len(message.splitlines()) == 1
    assert not (tmp_path / "claims" / "demo.json").exists()  # nothing half-checked is published


def test_a_query_without_the_holds_column(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    path = write_claims(tmp_path, claim("no-holds", "SELECT machine, value FROM t"))
    with pytest.raises(LabError) as caught:
        evaluate_claims(con, path, MACHINES, tmp_path / "claims")
    assert str(caught.value) == (
        f"{path}: claim no-holds: query must return columns machine, value, holds (missing: holds)"
    )


def test_a_claims_file_with_an_unknown_key(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    path = write_claims(
        tmp_path,
        claim("first", "SELECT machine, value, holds FROM t"),
        claim("second", "SELECT machine, value, holds FROM t", colour="blue"),
    )
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "colour:" in text)
    with pytest.raises(LabError) as caught:
        evaluate_claims(con, path, MACHINES, tmp_path / "claims")
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: claims.1.colour: unknown key")
    assert len(message.splitlines()) == 1


def test_a_claims_file_that_is_not_yaml(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    path = tmp_path / "demo.claims.yaml"
    path.write_text("claims:\n  - id: x\n    claim: a: b\n")
    with pytest.raises(LabError) as caught:
        evaluate_claims(con, path, MACHINES, tmp_path / "claims")
    assert str(caught.value).startswith(f"{path}:3: (yaml): ")


def test_a_claim_id_must_be_a_slug(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    path = write_claims(tmp_path, claim("Not A Slug", "SELECT machine, value, holds FROM t"))
    with pytest.raises(LabError, match=r"claims\.0\.id: String should match pattern"):
        evaluate_claims(con, path, MACHINES, tmp_path / "claims")


def test_a_value_that_is_not_a_number_names_the_claim(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    """A claim whose value column is text cannot be published as a figure; the build must stop with the
    file and the claim named, as for a failing query, not with a ValueError traceback."""
    path = write_claims(tmp_path, claim("text-value", "SELECT machine, 'lots' AS value, holds FROM t"))
    with pytest.raises(LabError, match="claim text-value"):
        evaluate_claims(con, path, MACHINES, tmp_path / "claims")


def test_a_text_holds_column_is_not_truthy(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    """holds must be a boolean: the string 'false' is not a claim that holds."""
    query = "SELECT machine, value, CASE WHEN holds THEN 'true' ELSE 'false' END AS holds FROM t"
    path = write_claims(tmp_path, claim("text-holds", query))
    try:
        out = evaluate_claims(con, path, MACHINES, tmp_path / "claims")
    except LabError as error:  # refusing a non-boolean holds column is fine too
        assert "text-holds" in str(error)
        return
    [result] = json.loads(out.read_text())
    assert verdicts(result)["fails-box"][0] == "does not hold"


def test_the_articles_claims_files_load() -> None:
    files = sorted(ARTICLES_SRC_DIR.glob("*.claims.yaml"))
    assert files
    for path in files:
        claims = load_yaml_model(path, ClaimsFile).claims
        ids = [c.id for c in claims]
        assert len(ids) == len(set(ids)), f"{path}: claim ids repeat"
