"""main.odyssey_config (connlab/poolers/odyssey/facts.py): each machine's Odyssey version with what the config
writer does for it (the logging buffer, the prepared-statement default) and the version difference from the
seed, in words; the aggregation reaches it through the pooler registry, and the article's fact that reads it
is kept whole as its declaration says."""

from __future__ import annotations

import duckdb
import pytest

from connlab.contract.facts_files import ACROSS_MACHINE_FACTS
from connlab.contract.poolers.features import parse_version
from connlab.data import main_tables
from connlab.errors import LabError
from connlab.poolers.odyssey import config
from connlab.poolers.odyssey.facts import register_main_tables, versions_note


def database(versions: dict[str, tuple[bool, str]]) -> duckdb.DuckDBPyConnection:
    """main.machines and main.pooler_versions as register_machines writes them: machine -> (published,
    odyssey version or "not available on this machine")."""
    con = duckdb.connect()
    con.execute("CREATE TABLE main.machines (id VARCHAR, published BOOLEAN)")
    con.execute(
        "CREATE TABLE main.pooler_versions "
        "(machine VARCHAR, pooler VARCHAR, version VARCHAR, available BOOLEAN)"
    )
    for machine, (published, version) in versions.items():
        con.execute("INSERT INTO main.machines VALUES (?, ?)", [machine, published])
        available = not version.startswith("not available")
        con.execute(
            "INSERT INTO main.pooler_versions VALUES (?, 'odyssey', ?, ?)", [machine, version, available]
        )
        con.execute("INSERT INTO main.pooler_versions VALUES (?, 'pgbouncer', '1.18.0', true)", [machine])
    return con


def rows(con: duckdb.DuckDBPyConnection) -> dict[str, dict]:
    cursor = con.execute("SELECT * FROM main.odyssey_config")
    names = [column[0] for column in cursor.description]
    return {row[0]: dict(zip(names, row, strict=True)) for row in cursor.fetchall()}


def test_each_version_gets_what_the_writer_does_for_it() -> None:
    con = database({
        "published-four-poolers": (True, "1.4.0"),
        "new": (False, "1.5.1"),
        "old": (False, "1.4.0"),
        "none": (False, "not available on this machine"),
    })  # fmt: skip
    register_main_tables(con)
    found = rows(con)
    assert set(found) == {"published-four-poolers", "new", "old"}  # no row where Odyssey did not run
    new, old = found["new"], found["old"]
    # From the writer: 1.5.1 bounds its buffer at the writer's depth; 1.4 has none and no prepared default.
    assert new["log_queue_depth"] == config.LOG_QUEUE_DEPTH and old["log_queue_depth"] is None
    assert new["log_buffer"] == config.log_buffer_note((1, 5, 1)) and "log_queue_depth" in new["log_buffer"]
    assert old["log_buffer"] == "no logging buffer in this version"
    assert new["prepared_by_default"] is True and old["prepared_by_default"] is False
    assert new["versions"] == "Odyssey 1.5.1 here, 1.4.0 in the seed"
    assert old["versions"] == "Odyssey 1.4.0 here, 1.4.0 in the seed (the same)"
    seed = found["published-four-poolers"]
    assert seed["versions"] is None and seed["published"]


def test_a_version_the_writer_cannot_read_is_named_with_its_machine() -> None:
    con = database({"odd": (False, "built from main")})
    named = r"results/odd/machine.yaml: odyssey_version: no version in 'built from main'"
    with pytest.raises(LabError, match=named):
        register_main_tables(con)


def test_versions() -> None:
    assert parse_version("Odyssey 1.5.1 (abc)") == (1, 5, 1)
    assert parse_version("1.4") == (1, 4, 0)
    assert parse_version("none") is None
    assert versions_note("1.5.1", []) == "Odyssey 1.5.1 here; the seed names no version"


def test_the_aggregation_finds_it_through_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The data stage names no pooler: it calls each pooler folder's facts.py, where there is one."""
    con = database({"new": (False, "1.5.1")})
    main_tables.register_pooler_tables(con)
    assert set(rows(con)) == {"new"}
    monkeypatch.setattr(main_tables, "POOLER_FACTS_HOOK", "no_such_hook")
    with pytest.raises(LabError, match=r"odyssey/facts\.py: no_such_hook: missing, or not a function"):
        main_tables.register_pooler_tables(con)


def test_its_summary_is_kept_whole_as_its_declaration_says() -> None:
    assert config.CONFIG.across_machine_facts == ("odyssey_summary",)
    assert set(config.CONFIG.across_machine_facts) <= ACROSS_MACHINE_FACTS
