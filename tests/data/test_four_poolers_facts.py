"""four-poolers' facts SQL on a sustained load of two passes: each pass (started afresh) is a line."""

from __future__ import annotations

import duckdb

from connlab.data.facts_export import split_named_queries
from connlab.paths import ARTICLES_SRC_DIR

QUERIES = split_named_queries((ARTICLES_SRC_DIR / "four-poolers.facts.sql").read_text())


def rss_series(rows: list[tuple[str, str, int, int, float]]) -> list[tuple]:
    database = duckdb.connect()
    database.execute("CREATE SCHEMA pooler_sustained")
    database.execute(
        "CREATE TABLE pooler_sustained.rss_series "
        "(machine VARCHAR, pooler VARCHAR, pass_no INTEGER, seconds INTEGER, rss_mib DOUBLE)"
    )
    database.executemany("INSERT INTO pooler_sustained.rss_series VALUES (?, ?, ?, ?, ?)", rows)
    return database.execute(QUERIES["rss_series"]).fetchall()


def test_two_passes_draw_a_line_each_and_one_pass_keeps_the_poolers_name() -> None:
    rows = [
        ("two", "pgbouncer", 1, 0, 2.0), ("two", "pgbouncer", 1, 10, 2.5),
        ("two", "pgbouncer", 2, 0, 2.1), ("two", "pgbouncer", 2, 10, 2.4),
        ("one", "pgbouncer", 1, 0, 2.0), ("one", "pgbouncer", 1, 10, 2.2),
    ]  # fmt: skip
    lines = {(machine, pooler) for machine, pooler, *_ in rss_series(rows)}
    assert lines == {("two", "pgbouncer, pass 1"), ("two", "pgbouncer, pass 2"), ("one", "pgbouncer")}
