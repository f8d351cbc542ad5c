"""connlab.site.render.advice: each article's "What to do" answers for the server cores a reader picks, from
the fixture results' aggregated data, with a basis that names its machines with their server cores; and the
rendered article opens with it, before the short answer."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from connlab.contract.facts_files import read_facts
from connlab.contract.names import ANSWERS_SUBDIR, CLAIMS_SUBDIR, MACHINES_JSON, POOL_SIZES_FILE
from connlab.site.render.advice import (
    ADVISED_ARTICLES,
    CLAIM_ARTICLES,
    CORE_CHOICES,
    WHOLE_FACTS,
    basis,
    nearest_cores,
    what_to_do,
)

SERVER_CORES = re.compile(r"[\w.-]+, [\d.]+ server cores?")


def _reading(machine: str, cores: float, value: float, indicative: bool = False) -> dict:
    return {
        "machine": machine,
        "server_cores": cores,
        "value": value,
        "low": None,
        "high": None,
        "versions": {},
        "indicative": indicative,
    }


def test_a_measured_core_count_is_measured_and_another_is_scaled_from_the_nearest() -> None:
    found = [_reading("small", 1.0, 4.0), _reading("big", 8.0, 3.0, indicative=True)]
    measured = basis(found, 8, scaled=True)
    assert measured is not None and measured["kind"] == "measured"
    assert measured["line"] == (
        "measured on 1 machine with 8 server cores (big, 8 server cores), indicative (quick runs only)"
    )
    scaled = basis(found, 2, scaled=True)
    assert scaled is not None and scaled["kind"] == "scaled" and scaled["value"] == 4.0
    assert "small, 1 server core; the nearest measured core count is 1" in scaled["line"]
    assert not scaled["indicative"]
    # A ratio is quoted from the nearest machines, never scaled by the cores.
    nearest = basis(found, 32, scaled=False)
    assert nearest is not None and nearest["kind"] == "nearest" and nearest["value"] == 3.0
    assert basis([], 8, scaled=True) is None


def test_the_nearest_core_count_is_nearest_by_ratio_and_a_tie_goes_to_the_larger() -> None:
    assert nearest_cores([1.0, 8.0], 4) == 8.0  # 4 is twice 2 from 8 and four times from 1
    assert nearest_cores([2.0, 8.0], 4) == 8.0  # as far from both by ratio: the larger
    assert nearest_cores([1.0, 8.0], 2) == 1.0


@pytest.fixture(scope="module")
def fixture_advice(built_site: Path) -> dict[str, dict]:
    """Each article's advice from the data the fixture results aggregate into (the built site's data)."""
    data = built_site.parent / "data"
    claims = {
        s: json.loads((data / CLAIMS_SUBDIR / f"{s}.json").read_text())["claims"] for s in CLAIM_ARTICLES
    }
    pool_sizes = json.loads((data / ANSWERS_SUBDIR / POOL_SIZES_FILE).read_text())
    columns = json.loads((data / "facts" / "machines.json").read_text())["columns"]
    machines = json.loads((data / MACHINES_JSON).read_text())
    found = {}
    for slug in ADVISED_ARTICLES:
        facts_file = data / "facts" / f"{slug}.json"
        facts = (
            read_facts(data / "facts", slug) if slug in WHOLE_FACTS else json.loads(facts_file.read_text())
        )
        found[slug] = what_to_do(slug, claims, pool_sizes, columns, machines, facts)
    return found


def _row(advice: dict, cores: int) -> dict:
    return next(row for row in advice["rows"] if row["cores"] == cores)


def test_pool_sizing_on_eight_cores_differs_from_one_and_names_its_machines_with_their_cores(
    fixture_advice: dict[str, dict],
) -> None:
    advice = fixture_advice["pool-sizing"]
    assert [row["cores"] for row in advice["rows"]] == list(CORE_CHOICES)
    one, eight = _row(advice, 1), _row(advice, 8)
    assert one["pool"] != eight["pool"]
    # The 8-server-core machine's one pool size answers for 8 cores; 1-core machines answer for 1.
    assert eight["basis"]["kind"] == "measured"
    assert eight["basis"]["machines"] == [{"machine": "intel-xeon-16c-126g", "server_cores": 8.0}]
    assert "intel-xeon-16c-126g, 8 server cores" in eight["basis"]["line"]
    assert "indicative (quick runs only)" in eight["basis"]["line"]  # a quick-profile machine alone
    assert "amd-epyc-2c-24g, 1 server core" in one["basis"]["line"]
    assert "indicative" not in one["basis"]["line"]  # a full-profile machine stands behind it
    assert eight["max_connections"] > eight["pool"]
    assert f"default_pool_size = {eight['pool']}" in eight["pgbouncer_ini"]
    assert eight["node"] == f"new Pool({{ max: {eight['pool']} }})"
    assert f"maximumPoolSize={eight['pool']}" == eight["hikari"]
    assert f"pool_size={eight['pool']}" in eight["sqlalchemy"]
    # PgBouncer 1.18, the version measured, has no max_prepared_statements: the fragment leaves it out.
    assert eight["pgbouncer_version"] == "1.18.0" and not eight["prepared_setting"]
    assert "max_prepared_statements" not in eight["pgbouncer_ini"]


def test_every_basis_line_names_each_machine_with_its_server_cores(fixture_advice: dict[str, dict]) -> None:
    lines = []
    for advice in fixture_advice.values():
        for row in advice["rows"]:
            bases = [row.get("basis"), row.get("share"), row.get("latency"), *row.get("figures", {}).values()]
            lines += [b["line"] for b in bases if b]
    assert lines
    for line in lines:
        named = line.split("(", 1)[1]
        assert SERVER_CORES.search(named), line


def test_too_many_connections_scales_the_peak_and_quotes_the_far_side(
    fixture_advice: dict[str, dict],
) -> None:
    advice = fixture_advice["too-many-connections"]
    one, eight = _row(advice, 1), _row(advice, 8)
    assert one["peak_clients"] != eight["peak_clients"]
    assert eight["peak_clients"] == round(eight["per_core"] * 8)
    assert eight["share"] is not None and 0 < eight["share"]["value"] < 1
    assert eight["latency"] is not None and eight["latency"]["value"] > 1


def test_pgbouncer_trade_decides_by_how_the_application_connects(fixture_advice: dict[str, dict]) -> None:
    row = _row(fixture_advice["pgbouncer-trade"], 8)
    figures = row["figures"]
    assert figures["per_request"]["decision"] == "faster"
    assert figures["crowd"]["decision"] == "faster"
    assert figures["steady"]["value"] < 1
    # Every pooler figure names the version measured.
    assert all(f["versions"] == ["PgBouncer 1.18.0"] for f in figures.values() if f["machines"])
    assert row["pool"]["pool"] == _row(fixture_advice["pool-sizing"], 8)["pool"]


def test_four_poolers_ranks_the_whole_poolers_memory_and_names_the_versions(
    fixture_advice: dict[str, dict],
) -> None:
    poolers = fixture_advice["four-poolers"]["poolers"]
    memory = poolers["memory_at_start"]
    assert [r["pooler"] for r in memory] == ["pgbouncer", "pgpool"]
    assert memory[0]["mib"] < memory[1]["mib"] and memory[1]["processes"] > 1
    assert {r["version"] for r in memory} == {"1.18.0", "4.3.5"}
    assert [r["pooler"] for r in poolers["prepared_ok"]] == ["pgpool"]
    assert not poolers["prepared_versions_support"]
    assert all(r["machine"] == "amd-epyc-2c-24g-2, 1 server core" for r in memory)


@pytest.mark.parametrize("slug", ADVISED_ARTICLES)
def test_the_article_opens_with_what_to_do_before_the_short_answer(built_site: Path, slug: str) -> None:
    markdown = (built_site.parent / "docs" / "articles" / f"{slug}.md").read_text()
    assert "## What to do" in markdown
    what_to_do_at = markdown.index("## What to do")
    # The short answer's box (connlab.site.render: _short_answer.md.j2) comes after it.
    assert what_to_do_at < markdown.index('class="short-answer')
    box = markdown[what_to_do_at : markdown.index('class="short-answer')]
    assert re.search(r"connlab-advice__number\">[^<]*\d", box), box[:400]
