"""The facts files (connlab.data.facts_export): named queries split, each row written by DuckDB as Python
would write it, a failing query named with its file, and an article's rows split by measured machine."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from connlab.contract.facts_files import read_facts
from connlab.data.facts_export import export_facts, query_json_rows, split_named_queries
from connlab.errors import LabError

FACTS_SQL = """\
-- Facts for a test article.

-- name: numbers
SELECT 1 AS one, 2.5 AS two_and_a_half, NULL AS nothing;

-- name: words
-- A comment inside the query stays part of it.
SELECT 'a' AS word UNION ALL SELECT 'b' ORDER BY word
"""


def test_split_named_queries() -> None:
    queries = split_named_queries(FACTS_SQL)
    assert list(queries) == ["numbers", "words"]
    assert queries["numbers"] == "SELECT 1 AS one, 2.5 AS two_and_a_half, NULL AS nothing"
    assert queries["words"].startswith("-- A comment inside the query stays part of it.\nSELECT 'a'")
    assert not queries["words"].endswith(";")
    assert split_named_queries("SELECT 1") == {}


def test_export_facts(tmp_path: Path) -> None:
    facts_sql = tmp_path / "test-article.facts.sql"
    facts_sql.write_text(FACTS_SQL)
    path = export_facts(duckdb.connect(), facts_sql, tmp_path / "facts")
    assert path == tmp_path / "facts" / "test-article.json"
    assert json.loads(path.read_text()) == {
        "numbers": [{"one": 1, "two_and_a_half": 2.5, "nothing": None}],
        "words": [{"word": "a"}, {"word": "b"}],
    }


def test_a_failing_facts_query_names_the_file_and_query(tmp_path: Path) -> None:
    facts_sql = tmp_path / "broken.facts.sql"
    facts_sql.write_text("-- name: fine\nSELECT 1 AS x\n\n-- name: typo\nSELECT * FROM no_such_table\n")
    with pytest.raises(LabError) as caught:
        export_facts(duckdb.connect(), facts_sql, tmp_path / "facts")
    message = str(caught.value)
    assert message.startswith(f"{facts_sql}: query typo: ")
    assert "no_such_table" in message
    assert len(message.splitlines()) == 1


def test_facts_rows_are_written_by_duckdb_as_python_would_write_them() -> None:
    """query_json_rows: the query's order, NaN as null, decimals as numbers and dates as text, as Python's
    own conversion of the rows gave them before DuckDB wrote them."""
    con = duckdb.connect()
    sql = (
        "SELECT * FROM (VALUES ('b', 'nan'::DOUBLE, 2.50::DECIMAL(5, 2), DATE '2026-01-02', 3), "
        "('a', 0.1::DOUBLE, 1.00::DECIMAL(5, 2), NULL, NULL)) t(machine, share, cost, day, n) "
        "ORDER BY machine DESC"
    )
    rows = [json.loads(row) for row in query_json_rows(con, sql)]
    assert rows == [
        {"machine": "b", "share": None, "cost": 2.5, "day": "2026-01-02", "n": 3},
        {"machine": "a", "share": 0.1, "cost": 1.0, "day": None, "n": None},
    ]
    assert rows[0] == {"machine": "b", "share": None, "cost": 2.5, "day": "2026-01-02", "n": 3}
    assert [type(value) for value in rows[1].values()] == [str, float, float, type(None), type(None)]


def test_an_articles_facts_are_split_by_measured_machine(tmp_path: Path) -> None:
    """Measured machines' rows of a fact that names machines go to each machine's own file (every such fact
    listed there); published rows, facts summed up over machines and facts without machines stay in the
    article's file; counts cover every row; a machine no longer measured loses its file."""
    facts_sql = tmp_path / "demo.facts.sql"
    facts_sql.write_text(
        "-- name: peaks\n"
        "SELECT * FROM (VALUES ('b', 2), ('published-x', 9), ('a', 1)) t(machine, tps) ORDER BY tps\n"
        "-- name: normalised\nSELECT 'a' AS machine, 0.5 AS share\n"
        "-- name: settings\nSELECT 100 AS pool_size\n"
        "-- name: nothing\nSELECT 'a' AS machine WHERE false\n"
    )
    out = tmp_path / "facts"
    export_facts(duckdb.connect(), facts_sql, out, measured={"a", "b", "c"})
    assert json.loads((out / "demo.json").read_text()) == {
        "peaks": [{"machine": "published-x", "tps": 9}],
        "normalised": [{"machine": "a", "share": 0.5}],
        "settings": [{"pool_size": 100}],
        "nothing": [],
    }
    assert json.loads((out / "demo" / "a.json").read_text()) == {
        "peaks": [{"machine": "a", "tps": 1}],
        "nothing": [],
    }
    assert json.loads((out / "demo" / "c.json").read_text()) == {"peaks": [], "nothing": []}
    assert json.loads((out / "demo.counts.json").read_text()) == {
        "peaks": 3, "normalised": 1, "settings": 1, "nothing": 0
    }  # fmt: skip
    assert [row["machine"] for row in read_facts(out, "demo")["peaks"]] == ["published-x", "a", "b"]
    export_facts(duckdb.connect(), facts_sql, out, measured={"a"})
    assert sorted(path.name for path in (out / "demo").iterdir()) == ["a.json"]
