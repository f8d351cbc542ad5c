"""connlab.site.render.advice: each article's "What to do" answers for the server cores a reader picks, from
the fixture results' aggregated data, with a basis that names its machines with their server cores; and the
rendered article opens with it, before the short answer."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from connlab.contract.facts_files import read_facts
from connlab.contract.names import ANSWERS_SUBDIR, CLAIMS_SUBDIR, POOL_SIZES_FILE
from connlab.poolers.pgbouncer.config import PREPARED_CACHE_SIZE
from connlab.site.render.advice import (
    ADMIN_MARGIN,
    ADVISED_ARTICLES,
    CLAIM_ARTICLES,
    CORE_CHOICES,
    NAMED_UP_TO,
    POOLER_FACTS,
    SUPERUSER_RESERVED,
    WHOLE_FACTS,
    basis,
    configuration,
    memory_by_pooler,
    nearest_cores,
    pgbouncer_crowd,
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


def test_a_basis_names_as_many_unplaced_peaks_as_machines_and_counts_the_rest() -> None:
    """A thousand machines whose peaks are not placed make one line of a few names and a count, not a
    thousand (the page's weight grew with every machine)."""
    found = [{**_reading(f"m{i:02d}", 1.0, 4.0), "gap": "no point between 2 and 8"} for i in range(7)]
    line = (basis(found, 1, scaled=True) or {})["line"]
    assert line.count(": no point between 2 and 8") == NAMED_UP_TO and line.endswith("; and 3 more)")
    assert line.count("m0") == 2 * NAMED_UP_TO  # each named twice: in the machines, and with its gap


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
    pooler_facts = read_facts(data / "facts", POOLER_FACTS)
    found = {}
    for slug in ADVISED_ARTICLES:
        facts_file = data / "facts" / f"{slug}.json"
        facts = (
            read_facts(data / "facts", slug) if slug in WHOLE_FACTS else json.loads(facts_file.read_text())
        )
        found[slug] = what_to_do(slug, claims, pool_sizes, columns, pooler_facts, facts)
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
    # The 8-core machine's quick grid has nothing between 16 and 256 clients: its peak of 32 is not placed,
    # and the basis says where it may lie (issue 52: placed means a measured neighbour within √2 each side).
    assert eight["basis"]["line"].endswith(
        "; the peak is not placed (intel-xeon-16c-126g, 8 server cores: no point measured between 16 and "
        "256 clients "
        "but the peak's own 32)"
    )
    assert eight["max_connections"] > eight["pool"]
    assert f"default_pool_size = {eight['pool']}" in eight["pgbouncer_ini"]
    assert eight["node"] == f"new Pool({{ max: {eight['pool']} }})"
    assert f"maximumPoolSize={eight['pool']}" == eight["hikari"]
    assert f"pool_size={eight['pool']}" in eight["sqlalchemy"]
    # PgBouncer 1.18, the version measured, has no max_prepared_statements: the fragment leaves it out.
    assert eight["pgbouncer_version"] == "1.18.0" and not eight["prepared_setting"]
    assert "max_prepared_statements" not in eight["pgbouncer_ini"]


def _ini(fragment: str) -> dict[str, str]:
    """pgbouncer.ini's settings as key -> value (its section header and comments left out)."""
    pairs = (line.split(" = ", 1) for line in fragment.splitlines() if " = " in line)
    return {key: value for key, value in pairs}


def _configurations(advice: dict) -> list[dict]:
    """An article's configuration per core count: the row itself (Pool sizing) or its pool (the others)."""
    return [row if "pgbouncer_ini" in row else row["pool"] for row in advice["rows"] if row.get("pool")]


@pytest.mark.parametrize("slug", ["pool-sizing", "too-many-connections", "pgbouncer-trade"])
def test_each_core_counts_configuration_carries_pool_sizings_pool_in_every_setting(
    fixture_advice: dict[str, dict], slug: str
) -> None:
    pools = {row["cores"]: row["pool"] for row in fixture_advice["pool-sizing"]["rows"]}
    found = _configurations(fixture_advice[slug])
    assert [c["cores"] for c in found] == list(CORE_CHOICES)
    for config in found:
        pool = pools[config["cores"]]
        assert config["pool"] == pool
        ini = _ini(config["pgbouncer_ini"])
        assert ini["pool_mode"] == "transaction"
        assert ini["default_pool_size"] == str(pool)
        assert config["max_connections"] == pool + SUPERUSER_RESERVED + ADMIN_MARGIN
        # The three clients carry the same N, the pool.
        clients = [config["node"], config["hikari"], config["sqlalchemy"]]
        assert [re.findall(r"\d+", line)[0] for line in clients] == [str(pool)] * 3, clients
        assert clients[0] == f"new Pool({{ max: {pool} }})"
        assert clients[1] == f"maximumPoolSize={pool}"
        assert f"pool_size={pool}, max_overflow=0" in clients[2]
        # max_client_conn is the largest crowd PgBouncer served, every window finished: 500 clients through
        # PgBouncer 1.18.0 on the 1-core machine's pooler-memory run. That version has no
        # max_prepared_statements, so the fragment leaves the key out.
        assert ini["max_client_conn"] == "500" == str(config["max_client_conn"])
        assert config["crowd"]["machine"] == "amd-epyc-2c-24g-2, 1 server core"
        assert config["pgbouncer_version"] == "1.18.0" and not config["prepared_setting"]
        assert "max_prepared_statements" not in ini


def _crowd_facts(*rows: dict, recorded: str = "1.18.0") -> dict:
    return {
        "poolers": [{"machine": "m", "pooler": "pgbouncer", "version": recorded, "available": True}],
        "memory": [{"machine": "m", "windows": 3, **row} for row in rows],
    }


HEADS = {"m": {"server_cores": 2.0, "indicative": False}}


def test_the_crowd_is_the_most_clients_pgbouncer_served_in_every_window() -> None:
    facts = _crowd_facts(
        {"pooler": "pgbouncer", "clients": 100, "windows_ok": 3, "clients_served_min": 100},
        # A window that failed, or a client left unserved, is no crowd served.
        {"pooler": "pgbouncer", "clients": 900, "windows_ok": 2, "clients_served_min": 900},
        {"pooler": "pgbouncer", "clients": 800, "windows_ok": 3, "clients_served_min": 799},
        {"pooler": "pgpool", "clients": 700, "windows_ok": 3, "clients_served_min": 700},
        {"pooler": "pgbouncer", "clients": 300, "windows_ok": 3},
    )
    crowd = pgbouncer_crowd(facts, HEADS)
    assert crowd is not None
    assert (crowd["clients"], crowd["version"], crowd["machine"]) == (300, "1.18.0", "m, 2 server cores")
    # A machine the Machines page does not list (a published set) is never the basis.
    assert pgbouncer_crowd(facts, {}) is None
    # The row's own version stands before the machine's; on a tie in clients, the newest version.
    both = _crowd_facts(
        {"pooler": "pgbouncer", "clients": 300, "windows_ok": 3},
        {"pooler": "pgbouncer", "clients": 300, "windows_ok": 3, "pooler_version": "1.25.2"},
    )
    assert pgbouncer_crowd(both, HEADS)["version"] == "1.25.2"  # type: ignore[index]


@pytest.mark.parametrize(
    ("version", "has_key"), [("1.18.0", False), ("1.20.1", False), ("1.21.0", True), ("1.25.2", True)]
)
def test_max_prepared_statements_is_written_only_where_the_version_measured_has_it(
    version: str, has_key: bool
) -> None:
    crowd = {"clients": 300, "version": version, "machine": "m, 2 server cores", "indicative": False}
    config = configuration(12, crowd)
    ini = _ini(config["pgbouncer_ini"])
    assert config["prepared_setting"] is has_key
    assert ("max_prepared_statements" in ini) is has_key
    if has_key:
        assert ini["max_prepared_statements"] == str(PREPARED_CACHE_SIZE)
    assert ini["default_pool_size"] == "12" and ini["max_client_conn"] == "300"
    # Without a crowd measured through PgBouncer, neither figure is written.
    bare = _ini(configuration(12, None)["pgbouncer_ini"])
    assert "max_client_conn" not in bare and "max_prepared_statements" not in bare


def test_the_rendered_fragment_follows_the_advice_for_each_core_count(
    built_site: Path, fixture_advice: dict[str, dict]
) -> None:
    """The article's Markdown: one configuration per core count, only the default one shown without
    JavaScript, each with the advice's pool and the max_prepared_statements note in place of the key."""
    markdown = (built_site.parent / "docs" / "articles" / "pool-sizing.md").read_text()
    blocks = re.findall(
        r'<div class="connlab-advice__config" data-cores="(\d+)"( hidden)?>(.*?)</div>', markdown, re.S
    )
    assert [int(cores) for cores, _, _ in blocks] == list(CORE_CHOICES)
    assert [cores for cores, hidden, _ in blocks if not hidden] == ["8"]
    pools = {str(row["cores"]): str(row["pool"]) for row in fixture_advice["pool-sizing"]["rows"]}
    for cores, _, block in blocks:
        n = pools[cores]
        assert f"default_pool_size = {n}\n" in block
        assert f"new Pool({{ max: {n} }})" in block and f"maximumPoolSize={n}" in block
        assert f"pool_size={n}, max_overflow=0" in block
        assert "max_prepared_statements = " not in block
        assert "PgBouncer 1.18.0, the version measured, predates it" in block
        assert "project&#39;s rule" in block or "project's rule" in block


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
    assert figures["steady"]["value"] < 1
    # The only crowd measured (200 clients on amd-epyc-2c-24g-2) spent more than a tenth of its windows
    # connecting: the answer says why it is undecided instead of giving a figure or leaving the way out.
    assert "crowd" not in figures
    (crowd,) = row["undecided"]["crowd"]
    assert crowd["machine"] == "amd-epyc-2c-24g-2, 1 server core"
    assert crowd["reason"].startswith("at 200 clients (direct-select-only), connecting took ")
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
    # One line per pooler and version, least memory first, with the range over its machines.
    lines = poolers["memory_by_pooler"]
    assert [line["label"] for line in lines] == ["PgBouncer 1.18.0", "PgPool-II 4.3.5"]
    assert lines[0]["start_low"] == lines[0]["start_high"] == memory[0]["mib"]
    assert lines[0]["machines"] == ["amd-epyc-2c-24g-2, 1 server core"]


def test_the_memory_ranking_gives_each_pooler_one_line_with_its_machines_range() -> None:
    def reading(label: str, mib: float, machine: str) -> dict:
        return {
            "label": label,
            "pooler": label.split()[0].lower(),
            "mib": mib,
            "processes": 2,
            "machine": machine,
        }

    at_start = [reading("PgBouncer 1.18.0", 8.0, "a"), reading("pgcat 1.2.0", 9.0, "a"),
                reading("PgBouncer 1.18.0", 8.5, "b")]  # fmt: skip
    under_load = [reading("PgBouncer 1.18.0", 9.0, "a"), reading("PgBouncer 1.18.0", 11.0, "b")]
    lines = memory_by_pooler(at_start, under_load)
    assert [(line["label"], line["start_low"], line["start_high"]) for line in lines] == [
        ("PgBouncer 1.18.0", 8.0, 8.5), ("pgcat 1.2.0", 9.0, 9.0)
    ]  # fmt: skip
    assert (lines[0]["load_low"], lines[0]["load_high"], lines[0]["machines"]) == (9.0, 11.0, ["a", "b"])
    assert lines[1]["load_low"] is None


@pytest.mark.parametrize("slug", ADVISED_ARTICLES)
def test_the_article_opens_with_what_to_do_before_the_short_answer(built_site: Path, slug: str) -> None:
    markdown = (built_site.parent / "docs" / "articles" / f"{slug}.md").read_text()
    assert "## What to do" in markdown
    what_to_do_at = markdown.index("## What to do")
    # The short answer's box (connlab.site.render: _short_answer.md.j2) comes after it.
    assert what_to_do_at < markdown.index('class="short-answer')
    box = markdown[what_to_do_at : markdown.index('class="short-answer')]
    assert re.search(r"connlab-advice__number\">[^<]*\d", box), box[:400]
