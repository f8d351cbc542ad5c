"""connlab.data.answers: the short answers and pool sizes are computed from the verdicts and facts, and the
built pages never say "not measured" beside data that exists."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from connlab.contract.facts_files import read_facts
from connlab.contract.names import VERDICT_COLUMNS_UP_TO
from connlab.data.answers.claim_rows import as_written, claim_row, findings
from connlab.data.answers.coverage import coverage
from connlab.data.answers.inputs import ANSWER_INPUTS_FILE, answer_facts
from connlab.data.answers.machines import NAMED_UP_TO
from connlab.data.answers.pool_size import pool_size
from connlab.data.answers.short_answers import short_answer
from connlab.data.answers.usl_across import PER_MACHINE_UP_TO, usl_across
from connlab.data.answers.write import write_answers
from connlab.data.chart_rows import LATENCY_WORKLOAD, latency_across


def _claim(verdicts: list[dict], claim_id: str = "peak-four-per-core", reading: str = "seed") -> dict:
    return {
        "id": claim_id,
        "claim": "The mixed workload peaks at four clients per server core.",
        "reading": reading,
        "seed": "16 on 4 cores",
        "value_label": "clients per core at the peak",
        "threshold": "between 2.83 and 5.66",
        "verdicts": verdicts,
    }


def _v(machine: str, verdict: str, value: float | None, low: float | None = None, high: float | None = None):
    return {"machine": machine, "verdict": verdict, "value": value, "low": low, "high": high, "reason": None}


def test_claim_row_counts_machines_by_verdict_and_shows_the_seed_figure_unjudged() -> None:
    claim = _claim(
        [
            _v("a", "holds", 4.0, 4.0, 4.0),
            _v("b", "does not hold", 8.0, 8.0, 8.0),
            _v("c", "inconclusive", 2.0, 1.0, 4.0),
            {**_v("d", "cannot be evaluated", None), "reason": "5 client counts"},
            _v("published-x", "holds", 4.0),
        ]
    )
    row = claim_row(claim, ["a", "b", "c", "d", "e"], "published-x", {"a": 1.0, "b": 8.0, "c": 2.0})
    assert row["spread"] == {"median": 4.0, "low": 2.0, "high": 8.0}
    # Each machine named with its server cores (the Machines page's), which its name hides.
    assert row["machines"] == {"names": ["a", "b", "c"], "more": 0, "count": 3, "cores": [1.0, 8.0, 2.0]}
    assert row["verdicts"]["does not hold"]["cores"] == [8.0]
    assert row["verdicts"]["holds"]["names"] == ["a"]
    assert row["verdicts"]["does not hold"]["names"] == ["b"]
    assert row["verdicts"]["cannot be evaluated"]["names"] == ["d"]
    assert row["seed_value"] == 4.0
    # A machine without a row is "not measured", and is never counted in the median.
    assert [c["verdict"] for c in row["cells"]][-1] == "not measured"


def test_names_stop_at_five_and_count_the_rest() -> None:
    machines = [f"m{i}" for i in range(8)]
    row = claim_row(_claim([_v(m, "holds", float(i)) for i, m in enumerate(machines)]), machines, None)
    assert row["machines"]["names"] == machines[:5]
    assert row["machines"]["more"] == 3
    assert row["spread"]["median"] == 3.5
    assert row["seed_value"] is None


def test_short_answer_leaves_out_a_claim_no_machine_could_answer() -> None:
    answered = claim_row(_claim([_v("a", "holds", 4.0)]), ["a"], None)
    unanswered = claim_row(
        _claim([{**_v("a", "cannot be evaluated", None), "reason": "x"}], "gentle-decline"),
        ["a"],
        None,
    )
    bullets = short_answer("too-many-connections", {r["id"]: r for r in (answered, unanswered)})
    assert [b["id"] for b in bullets] == ["peak-four-per-core"]
    assert bullets[0]["question"]


def test_short_answer_states_a_headline_that_pgbench_only_bounded_with_the_bound() -> None:
    """A headline that every machine could only bound (pgbench saturated its core) is still answered:
    the bullet says what the bound decides, in the verdict's own words, and gives no median."""
    reason = (
        "pgbench used 0.92 of its core, so the figure is at least 2.75, which cannot decide 'at least 18.9'"
    )
    bounded = claim_row(
        _claim(
            [
                {
                    **_v("a", "cannot be evaluated", None),
                    "bound": "at least 3.04",
                    "reason": reason,
                    "conditions": {"poolers": {"pgbouncer": "1.18.0"}},
                }
            ],
            "churn-speedup-2-per-core",
        ),
        ["a", "b"],
        "published-x",
        {"a": 1.0},
    )
    versions = {"published-x": {"pgbouncer": "1.25.2"}}
    (bullet,) = short_answer("pgbouncer-trade", {bounded["id"]: bounded}, versions, "published-x")
    assert bullet["spread"] is None
    assert bullet["bounded"] == [{"machine": "a", "server_cores": 1.0, "reason": reason, "indicative": False}]
    # The bound is a PgBouncer figure: it names the version it was measured with, and the seed's its own.
    assert [v["label"] for v in bullet["versions"]] == ["PgBouncer 1.18.0"]
    assert bullet["seed_versions"] == ["PgBouncer 1.25.2"]
    # Without a bound the claim is still left out.
    unbounded = {**bounded, "bounded": []}
    assert short_answer("pgbouncer-trade", {bounded["id"]: unbounded}) == []


def test_a_pooler_figure_over_several_versions_gives_each_versions_own_figure() -> None:
    """PgBouncer 1.18 on two machines, 1.25.2 on a third: the short answer says which figure is from which
    version, each machine with its server cores; a claim about no pooler names none."""

    def cell(machine: str, value: float, version: str) -> dict:
        return {
            **_v(machine, "holds", value),
            "conditions": {"poolers": {"pgbouncer": version, "pgpool": "4.3.5"}},
        }

    row = claim_row(
        _claim(
            [cell("a", 0.0, "1.18.0"), cell("b", 0.0, "1.18.0"), cell("c", 1.0, "1.25.2")],
            "prepared-fails-without-tracking",
        ),
        ["a", "b", "c"],
        None,
        {"a": 1.0, "b": 8.0, "c": 8.0},
    )
    (bullet,) = short_answer("four-poolers", {row["id"]: row}, None, None, {"a": 1.0, "b": 8.0, "c": 8.0})
    assert [
        (v["label"], v["machines"]["names"], v["machines"]["cores"], v["spread"]["median"])
        for v in bullet["versions"]
    ] == [
        ("PgBouncer 1.18.0", ["a", "b"], [1.0, 8.0], 0.0),
        ("PgBouncer 1.25.2", ["c"], [8.0], 1.0),
    ]
    # Without a version in the verdict's conditions, the machine's own (machine.yaml) stands in.
    bare = claim_row(_claim([_v("a", "holds", 0.0)], "prepared-fails-without-tracking"), ["a"], None)
    (bullet,) = short_answer("four-poolers", {bare["id"]: bare}, {"a": {"pgbouncer": "1.18.0"}})
    assert [v["label"] for v in bullet["versions"]] == ["PgBouncer 1.18.0"]
    (direct,) = short_answer(
        "too-many-connections",
        {"peak-four-per-core": claim_row(_claim([_v("a", "holds", 4.0)]), ["a"], None)},
    )
    assert direct["versions"] == [] and direct["seed_versions"] == []


def test_findings_name_each_failed_seed_statement_with_both_figures() -> None:
    failed = claim_row(
        _claim([_v("a", "does not hold", 3.0, 2.8, 3.3), _v("b", "holds", 20.0)], "x"), ["a", "b"], "p"
    )
    held = claim_row(_claim([_v("a", "holds", 4.0)], "y"), ["a", "b"], None)
    project = claim_row(_claim([_v("a", "does not hold", 1.0)], "z", reading="project"), ["a"], None)
    found = findings([failed, held, project])
    assert [f["id"] for f in found["failed"]] == ["x"]
    assert found["failed"][0]["against"][0]["value"] == 3.0
    assert found["failed"][0]["against_more"] is None
    assert [f["id"] for f in found["held"]] == ["y"]


def test_findings_name_a_few_machines_and_count_the_rest() -> None:
    """A statement that failed on many machines names NAMED_UP_TO of them, each with its figure, and counts
    the rest with the median and range of their figures and how many had each verdict."""
    machines = [f"m{index:02d}" for index in range(NAMED_UP_TO + 3)]
    verdicts = [_v(m, "does not hold", float(index)) for index, m in enumerate(machines)]
    verdicts[-1] = _v(machines[-1], "inconclusive", 100.0)
    [found] = findings([claim_row(_claim(verdicts, "x"), machines, "p")])["failed"]
    assert [c["machine"] for c in found["against"]] == machines[:NAMED_UP_TO]
    assert found["against_more"] == {
        "count": 3,
        "spread": {"median": NAMED_UP_TO + 1.0, "low": float(NAMED_UP_TO), "high": 100.0},
        "verdicts": {"does not hold": 2, "inconclusive": 1},
    }


SWEEP = {
    "peaks": [
        {
            "machine": "m",
            "workload": "mixed",
            "peak_clients": 4,
            "near_peak_min_clients": 4,
            "near_peak_max_clients": 8,
            "peak_clients_per_core": 4.0,
            "server_cores": 1.0,
        }
    ]
}
FIT = {
    "fits": [
        {
            "machine": "m",
            "experiment": "clients-sweep",
            "workload": "mixed",
            "basis": "medians",
            "anchored": False,
            "n_star": 11.1,
            "r_squared": 0.85,
            "warning": None,
            "measured_peak_clients": 4,
        }
    ]
}
TRADE = {
    "pool_spread": [
        {"machine": "m", "best_pool_size": 8, "builtin": "tpcb-like", "clients": 200, "worst_over_best": 0.6}
    ]
}


def test_pool_size_trusts_the_measured_sweep_and_flags_a_source_more_than_twice_away() -> None:
    size = pool_size("m", SWEEP, FIT, TRADE)
    assert size is not None
    assert (size["pool_size"], size["low"], size["high"], size["from"]) == (4, 4, 8, "sweep")
    far = {s["kind"]: s["far"] for s in size["sources"]}
    assert far == {"sweep": False, "usl": True, "pooler": False}
    assert size["disagree"] is True


def test_pool_size_falls_back_to_the_pooler_runs_and_is_none_without_data() -> None:
    size = pool_size("m", {}, {}, TRADE)
    assert size is not None and (size["pool_size"], size["from"]) == (8, "pooler")
    assert pool_size("other", SWEEP, FIT, TRADE) is None


def test_coverage_names_poolers_measured_and_missing() -> None:
    facts = {"measured": [{"machine": "a", "experiment": "pooler-memory"}]}
    poolers = [
        {
            "machine": "a",
            "pooler": "pgbouncer",
            "version": "1.18.0",
            "available": True,
            "seed_version": "1.25.2",
        },
        {"machine": "a", "pooler": "odyssey", "available": False},
        {"machine": "b", "pooler": "pgbouncer", "available": False},
    ]
    found = coverage(facts, ["a", "b"], ["pooler-memory"], poolers)
    assert found["ran"] == ["a"] and found["did_not_run"] == ["b"]
    assert found["ran_named"] == {"names": ["a"], "more": 0, "count": 1}
    many = [f"m{i:02d}" for i in range(NAMED_UP_TO + 3)]
    idle = coverage(facts, ["a", *many], ["pooler-memory"], poolers)["did_not_run_named"]
    assert idle == {"names": many[:NAMED_UP_TO], "more": 3, "count": len(many)}
    assert [{k: p[k] for k in ("pooler", "available", "missing")} for p in found["poolers"]] == [
        {"pooler": "odyssey", "available": [], "missing": ["a"]},
        {"pooler": "pgbouncer", "available": ["a"], "missing": []},
    ]
    # Which version was measured where, beside the seed's, as the page names them; machines with their cores.
    bouncer = found["poolers"][1]
    assert bouncer["label"] == "PgBouncer" and bouncer["seed_version"] == "PgBouncer 1.25.2"
    assert bouncer["versions"] == [
        {"label": "PgBouncer 1.18.0", "machines": {"names": ["a"], "more": 0, "count": 1}}
    ]
    with_cores = coverage(facts, ["a", "b"], ["pooler-memory"], poolers, {"a": 1.0, "b": 8.0})
    assert with_cores["ran_named"]["cores"] == [1.0]
    assert with_cores["poolers"][1]["versions"][0]["machines"]["cores"] == [1.0]


def test_coverage_names_every_build_the_rows_ran_not_only_machine_yamls() -> None:
    """Issue 55: a second PgBouncer build staged for pgbouncer-versions is on no PATH, so machine.yaml records
    1.18.0 only; the rows record 1.25.2 (main.measured by pooler kind), and the page names both builds."""
    facts = {
        "measured": [
            {"machine": "a", "experiment": "pgbouncer-versions",
             "pooler_versions": ["pgbouncer 1.18.0", "pgbouncer 1.25.2"]},
            {"machine": "a", "experiment": "pooler-memory", "pooler_versions": ["pgbouncer 1.18.0"]},
        ]
    }  # fmt: skip
    poolers = [{"machine": "a", "pooler": "pgbouncer", "version": "1.18.0", "available": True}]
    found = coverage(facts, ["a"], ["pgbouncer-versions", "pooler-memory"], poolers)
    (bouncer,) = found["poolers"]
    assert [v["label"] for v in bouncer["versions"]] == ["PgBouncer 1.18.0", "PgBouncer 1.25.2"]
    assert all(v["machines"]["names"] == ["a"] for v in bouncer["versions"])


# -- over the built site ---------------------------------------------------------------------------------

NOT_MEASURED = re.compile(r"not measured yet|no measurements yet|has not been measured", re.IGNORECASE)
TAGS = re.compile(r"<[^>]+>")


def _blocks(html: str) -> list[str]:
    """The page's text split at its headings: a "not measured" sentence and the data it denies share one."""
    main = html.split('<article class="md-content__inner', 1)[-1]
    return [TAGS.sub(" ", part) for part in re.split(r"<h[1-3][ >]", main)]


def _offending(html: str) -> bool:
    verdict = re.compile(r"[✓✗~]\s*(holds|does not hold|inconclusive)")
    return any(NOT_MEASURED.search(block) and verdict.search(block) for block in _blocks(html))


def test_the_check_tells_a_denial_beside_data_from_one_without() -> None:
    assert _offending("<h2>Q</h2><p>Not measured yet.</p><td>✓ holds 4.0</td>")
    assert not _offending("<h2>Q</h2><p>Not measured yet.</p><h2>R</h2><td>✓ holds 4.0</td>")


@pytest.mark.mkdocs
def test_no_page_says_not_measured_beside_data(built_site: Path) -> None:
    """A section that says something is not measured yet shows no measured verdict: the sentence is made
    from whether the data exists, so it never stands beside a verdict table that has data."""
    pages = sorted(built_site.rglob("index.html"))
    assert pages
    offending = [str(p.relative_to(built_site)) for p in pages if _offending(p.read_text(encoding="utf-8"))]
    assert offending == []


@pytest.mark.mkdocs
def test_raw_file_links_reach_the_files(built_site: Path) -> None:
    """Each machine page and article links raw files the site holds: a page's links, resolved from its URL."""
    links = []
    for page in sorted(
        [*built_site.glob("machines/*/index.html"), *built_site.glob("articles/*/index.html")]
    ):
        for href in re.findall(r'href="([^"#]*raw/[^"#]+)"', page.read_text(encoding="utf-8")):
            links.append((page, href))
    assert links, "no page links a raw file"
    missing = [
        f"{page.relative_to(built_site)}: {href}"
        for page, href in links
        if not (page.parent / href).resolve().is_file()
    ]
    assert missing == []


def test_the_verdict_table_past_five_machines_gives_the_median_and_names_each_verdicts_machines(
    tmp_path: Path,
) -> None:
    from connlab.site.render.renderer import PageRenderer
    from connlab.site.render.verdicts import VerdictTable

    machines = [f"m{i}" for i in range(7)]
    cells = [_v(m, "holds" if i < 6 else "does not hold", float(i)) for i, m in enumerate(machines)]
    row = claim_row(_claim(cells), machines, None)
    heads = [
        {"machine": m, "server_cores": 1, "profile": "full", "indicative": False, "date": None}
        for m in machines
    ]
    renderer = PageRenderer(tmp_path / "data", tmp_path / "docs")
    text = renderer.env.get_template("_verdicts.md.j2").render(
        verdicts=VerdictTable(columns=[], source=None),
        answers={"columns": heads, "rows": [row], "coverage": {}},
        claims=[],
        view="article",
        picker=[],
        page="articles/x.md",
    )
    # The figure and its range stay on one line (a no-wrap span): read as words.
    words = re.sub(r"<[^>]+>", "", text)
    assert "measured on 7 machines" in words and "median 3.0 (0–6.0)" in words
    assert "holds</span> on 6: m0, m1, m2, m3, m4 and 1 more" in text
    assert "does not hold</span> on 1: m6" in text
    assert "m5<br>" not in text  # no column per machine


def _sim_points(machine: str, counts: int) -> list[dict]:
    return [{"machine": machine, "workload": "tpcb-like", "clients": 2**i} for i in range(counts)]


def test_the_simulator_defaults_to_the_full_profile_then_the_most_points() -> None:
    """The simulator's machines, most thorough first: full over quick whatever the points, then the most
    measured client counts of the simulated workload (not merely the most experiments)."""
    sizing = {
        "simulator_points": _sim_points("quick-many", 12)
        + _sim_points("full-few", 5)
        + _sim_points("full-more", 8),
        "fits": [],
    }
    columns = [
        {"machine": "quick-many", "profile": "quick", "experiments": 20},
        {"machine": "full-few", "profile": "full", "experiments": 20},
        {"machine": "full-more", "profile": "full", "experiments": 2},
    ]
    usl = usl_across(sizing, {"columns": columns}, [])
    assert usl["machines"] == ["full-more", "full-few", "quick-many"]
    assert usl["machines_total"] == 3


def test_the_simulator_lists_the_most_thorough_machines_up_to_its_limit_and_counts_the_rest() -> None:
    """Past PER_MACHINE_UP_TO fitted machines the selector keeps that many, the most thorough first; the
    total counts every machine, so that the page can say how many are left to their own pages."""
    machines = [f"box-{i:02d}" for i in range(PER_MACHINE_UP_TO + 2)]
    # Each machine one more client count than the one before: the last two measured the least.
    sizing = {
        "simulator_points": [p for i, m in enumerate(machines) for p in _sim_points(m, 40 - i)],
        "fits": [],
    }
    columns = [{"machine": m, "profile": "full", "experiments": 1} for m in machines]
    usl = usl_across(sizing, {"columns": columns}, [])
    assert usl["machines"] == machines[:PER_MACHINE_UP_TO]
    assert usl["machines_total"] == len(machines)
    few = usl_across({**sizing, "simulator_points": _sim_points("box-00", 5)}, {"columns": columns}, [])
    assert (few["machines"], few["machines_total"]) == (["box-00"], 1)


def test_answer_facts_are_the_listed_facts_whole_and_kept_by_file_status(tmp_path: Path) -> None:
    """Each article's listed facts as read_facts puts them back together; a machine's file is parsed again
    only when its status changed; a fact the list leaves out is an error that names it."""
    facts_dir, cache = tmp_path / "facts", tmp_path / ANSWER_INPUTS_FILE
    (facts_dir / "too-many-connections").mkdir(parents=True)
    (facts_dir / "too-many-connections.json").write_text(
        json.dumps({"peaks": [{"machine": "published-x", "tps": 9}], "settings": [{"n": 1}]})
    )
    for machine, tps in (("b", 2), ("a", 1)):
        own = {"peaks": [{"machine": machine, "tps": tps}], "wait_points": [{"machine": machine}]}
        (facts_dir / "too-many-connections" / f"{machine}.json").write_text(json.dumps(own))
    found = answer_facts(facts_dir, cache)
    whole = read_facts(facts_dir, "too-many-connections")
    assert found["too-many-connections"] == {"peaks": whole["peaks"]}
    assert [row["tps"] for row in found["too-many-connections"].get("peaks")] == [9, 1, 2]
    assert found["pool-sizing"] == {}
    with pytest.raises(KeyError, match="wait_points"):
        found["too-many-connections"].get("wait_points")
    # The cache answers for an unchanged file; a file written again is read again.
    entries = json.loads(cache.read_text())
    entries["too-many-connections/a.json"][1]["peaks"][0]["tps"] = 100
    cache.write_text(json.dumps(entries))
    assert [row["tps"] for row in answer_facts(facts_dir, cache)["too-many-connections"]["peaks"]] == [
        9,
        100,
        2,
    ]
    (facts_dir / "too-many-connections" / "a.json").write_text(
        json.dumps({"peaks": [{"machine": "a", "tps": 3}]})
    )
    (facts_dir / "too-many-connections" / "b.json").unlink()
    assert [row["tps"] for row in answer_facts(facts_dir, cache)["too-many-connections"]["peaks"]] == [9, 3]
    assert list(json.loads(cache.read_text())) == ["too-many-connections/a.json"]


def test_past_the_tables_columns_the_answers_write_no_cells_but_count_the_single_readings() -> None:
    """Each claim's verdict on every machine is the claims file's: past VERDICT_COLUMNS_UP_TO machines the
    article's table shows none of them, so the rows, the findings and the short answer leave them out and
    keep what the table says of them (how many rest on one reading)."""
    machines = [f"m{i}" for i in range(VERDICT_COLUMNS_UP_TO + 2)]
    verdicts = [{**_v(m, "does not hold" if i else "holds", float(i)), "readings": 1 if i < 3 else None}
                for i, m in enumerate(machines)]  # fmt: skip
    row = claim_row(_claim(verdicts), machines, None)
    assert row["single_readings"] == 3
    written = as_written({"rows": [row], "findings": findings([row])}, cells=False)
    assert "cells" not in written["rows"][0] and "cells" not in written["findings"]["failed"][0]  # type: ignore[index]
    assert written["rows"][0] == {k: v for k, v in row.items() if k != "cells"}  # type: ignore[index]
    # The machines a finding names, each with its figure, stay.
    assert [c["machine"] for c in written["findings"]["failed"][0]["against"]] == machines[1:6]  # type: ignore[index]
    assert as_written([row], cells=True) == [row]


def test_the_answers_take_the_claims_as_judged_or_read_them_from_their_files(tmp_path: Path) -> None:
    """Handed the claims the aggregation has just written, the answers are the same as read from the
    files; handed other claims, they follow those, not the files."""
    data, claims_dir = tmp_path / "data", tmp_path / "data" / "claims"
    claims_dir.mkdir(parents=True)
    judged = {
        "pool-sizing": {
            "source": None,
            "experiments": [],
            "claims": [_claim([_v("a", "holds", 4.0), _v("b", "does not hold", 9.0)])],
        }
    }
    (claims_dir / "pool-sizing.json").write_text(json.dumps(judged["pool-sizing"]))
    answers = data / "answers" / "pool-sizing.json"
    write_answers(data, data / "facts", claims_dir, ["a", "b"])
    from_files = answers.read_bytes()
    answers.unlink()
    write_answers(data, data / "facts", claims_dir, ["a", "b"], judged=judged)
    assert answers.read_bytes() == from_files
    judged["pool-sizing"]["claims"][0]["verdicts"][1]["verdict"] = "holds"
    write_answers(data, data / "facts", claims_dir, ["a", "b"], judged=judged)
    (row,) = json.loads(answers.read_text())["rows"]
    assert row["verdicts"]["holds"]["names"] == ["a", "b"]


def test_of_the_sweeps_points_the_answers_keep_the_latency_charts_workload(tmp_path: Path) -> None:
    """too-many-connections' points are read for the latency chart only (ANSWER_ROWS): the other workloads'
    rows are neither cached nor handed over, and the chart's rows are those of every point."""
    facts_dir, cache = tmp_path / "facts", tmp_path / ANSWER_INPUTS_FILE
    (facts_dir / "too-many-connections").mkdir(parents=True)
    (facts_dir / "too-many-connections.json").write_text(json.dumps({"points": []}))
    points = [
        {"machine": "a", "workload": workload, "clients": 1, "clients_per_core": 1.0,
         "latency_avg_median": 1.0, "latency_p95_median": 2.0, "latency_p99_median": 3.0}
        for workload in (LATENCY_WORKLOAD, "select-only", "tpcb-like")
    ]  # fmt: skip
    (facts_dir / "too-many-connections" / "a.json").write_text(json.dumps({"points": points}))
    kept = answer_facts(facts_dir, cache)["too-many-connections"]["points"]
    assert kept == points[:1]
    assert "select-only" not in cache.read_text()
    assert latency_across({"points": kept}, ["a"]) == latency_across({"points": points}, ["a"])
    assert latency_across({"points": kept}, ["a"])


def test_every_headline_is_the_source_articles_own_claim() -> None:
    """A short answer leads with what the source article said, at its operating point and on its threshold:
    a project's reading (a looser threshold, 'the furthest point measured') is listed with the verdicts,
    labelled, never beside the source's figure in the headline."""
    from connlab.data.answers.short_answers import HEADLINES
    from connlab.paths import ARTICLES_SRC_DIR

    for slug, headlines in HEADLINES.items():
        claims = yaml.safe_load((ARTICLES_SRC_DIR / f"{slug}.claims.yaml").read_text())["claims"]
        readings = {claim["id"]: claim.get("reading", "seed") for claim in claims}
        for claim_id, _, _ in headlines:
            assert readings[claim_id] == "seed", (slug, claim_id)
