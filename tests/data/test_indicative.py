"""Quick runs indicate, full runs decide: a verdict on quick- or tiny-profile windows is marked indicative
where the claims are judged (connlab.data.claims.is_indicative), shown with its mark in the verdict table, and
never counted in a short answer's figure or verdicts, a median across machines or the findings' headings
(connlab.data.answers)."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from connlab.data.answers.claim_rows import claim_row, findings
from connlab.data.answers.short_answers import short_answer
from connlab.data.claims import Claim, Runs, check_claim, is_indicative, summarise
from connlab.site.render.verdict_html import article_verdicts
from connlab.site.render.verdicts import VerdictTable

# A headline claim of too-many-connections: its short answer reads it.
HEADLINE = "gentle-decline"


def _claim(verdicts: list[dict], claim_id: str = HEADLINE) -> dict:
    return {
        "id": claim_id,
        "claim": "Throughput declines gently past the peak.",
        "reading": "seed",
        "seed": "0.48 at the furthest point",
        "value_label": "share of the peak",
        "threshold": "at least 0.4",
        "verdicts": verdicts,
    }


def _v(machine: str, verdict: str, value: float | None, profile: str) -> dict:
    return {
        "machine": machine,
        "verdict": verdict,
        "value": value,
        "low": None,
        "high": None,
        "reason": None,
        "conditions": {"profile": profile},
        "indicative": is_indicative(profile),
    }


@pytest.mark.parametrize(
    ("profile", "indicative"),
    [("full", False), ("quick", True), ("tiny", True), ("published", False), (None, False)],
)
def test_only_a_quick_or_tiny_run_is_indicative(profile: str | None, indicative: bool) -> None:
    """A source's printed figure ('published') and a claim over tables of its own (no profile): no run."""
    assert is_indicative(profile) is indicative


def _judged(runs: dict[tuple[str, str], Runs]) -> dict:
    con = duckdb.connect()
    con.execute(
        "CREATE SCHEMA clients_sweep; CREATE SCHEMA connect_cost; "
        "CREATE TABLE clients_sweep.t AS SELECT * FROM (VALUES ('full-box', 0.6), ('quick-box', 0.3), "
        "('mixed-box', 0.3)) AS t(machine, value); "
        "CREATE TABLE connect_cost.t AS SELECT * FROM (VALUES (1)) AS t(x)"
    )
    claim = Claim(
        id="c",
        claim="The claim.",
        seed="What the source measured.",
        reading="seed",
        value_label="a value",
        threshold={"op": ">=", "value": 0.5},  # type: ignore[arg-type]
        client_bound="not-a-bias",
        query="SELECT machine, value FROM clients_sweep.t WHERE (SELECT count(*) FROM connect_cost.t) > 0",
    )
    machines = ["full-box", "quick-box", "mixed-box"]
    return check_claim(con, claim, Path("demo.claims.yaml"), machines, machines, runs=runs, facts={})


def test_a_verdict_is_indicative_where_any_experiment_it_reads_ran_quick() -> None:
    """The profile of the experiments the claim reads is what counts: a machine that ran one of them quick
    and the other full gives an indicative verdict; the summary counts only the deciding machines."""
    runs = {
        ("full-box", "clients-sweep"): Runs(first=None, last=None, client_saturated=0, profile="full"),
        ("full-box", "connect-cost"): Runs(first=None, last=None, client_saturated=0, profile="full"),
        ("quick-box", "clients-sweep"): Runs(first=None, last=None, client_saturated=0, profile="quick"),
        ("mixed-box", "clients-sweep"): Runs(first=None, last=None, client_saturated=0, profile="full"),
        ("mixed-box", "connect-cost"): Runs(first=None, last=None, client_saturated=0, profile="tiny"),
    }
    result = _judged(runs)
    flags = {v["machine"]: (v["verdict"], v["indicative"]) for v in result["verdicts"]}
    assert flags == {
        "full-box": ("holds", False),
        "quick-box": ("does not hold", True),
        "mixed-box": ("does not hold", True),
    }
    assert result["summary"] == "holds on 1 of 1 machine; indicative: does not hold on 2 of 2 machines"


def test_the_summary_of_quick_runs_only_says_indicative_only() -> None:
    verdicts = [_v("q1", "holds", 1.0, "quick"), _v("q2", "does not hold", 0.1, "quick")]
    assert summarise(verdicts, ["q1", "q2"]) == (
        "indicative only (no full-profile run): holds on 1 of 2 machines, does not hold on 1"
    )


def test_the_headline_figure_and_counts_are_the_full_machines_the_quick_one_listed_apart() -> None:
    row = claim_row(
        _claim([_v("full", "inconclusive", 0.37, "full"), _v("quick", "holds", 0.7, "quick")]),
        ["full", "quick"],
        None,
    )
    (bullet,) = short_answer("too-many-connections", {row["id"]: row})
    assert bullet["spread"] == {"median": 0.37, "low": 0.37, "high": 0.37}
    assert bullet["machines"]["names"] == ["full"] and not bullet["indicative"]
    assert list(bullet["verdicts"]) == ["inconclusive"]
    assert bullet["indicative_verdicts"] == {
        "holds": {"names": ["quick"], "more": 0, "count": 1, "cores": [None]}
    }
    assert (bullet["indicative_count"], bullet["indicative_profile"]) == (1, "quick")


def test_a_median_never_mixes_profiles_and_quick_alone_is_labelled() -> None:
    quick_only = claim_row(
        _claim(
            [_v("q1", "holds", 0.5, "quick"), _v("q2", "holds", 0.7, "quick"), _v("q3", "holds", 0.9, "tiny")]
        ),
        ["q1", "q2", "q3"],
        None,
    )
    assert quick_only["indicative"] and quick_only["spread"] == {"median": 0.7, "low": 0.5, "high": 0.9}
    assert quick_only["verdicts"] == {} and quick_only["indicative_profile"] == "tiny and quick"


def _short_answer_text(tmp_path: Path, rows: list[dict]) -> str:
    from connlab.site.render.renderer import PageRenderer

    bullets = short_answer("too-many-connections", {row["id"]: row for row in rows})
    renderer = PageRenderer(tmp_path / "data", tmp_path / "docs")
    page = renderer.env.get_template("_short_answer.md.j2").render(
        answers={"short_answer": bullets, "measured": ["full", "quick"]},
        picker=[],
        seed_id="published-x",
        machines=[],
    )
    return " ".join(re.sub(r"<[^>]+>", "", page).split())


def test_the_short_answer_uses_the_full_machine_and_says_the_quick_one_is_indicative(tmp_path: Path) -> None:
    row = claim_row(
        _claim([_v("full", "inconclusive", 0.37, "full"), _v("quick", "holds", 0.7, "quick")]),
        ["full", "quick"],
        None,
    )
    text = _short_answer_text(tmp_path, [row])
    assert "0.37** on the one full-profile machine with the data" in text
    assert "~ inconclusive on full. And indicative on 1 quick-run machine: ✓ holds on quick." in text
    assert "0.7" not in text.replace("0.37", "")  # the quick figure is in no median


def test_a_quick_only_headline_says_indicative_only_in_words(tmp_path: Path) -> None:
    row = claim_row(
        _claim([_v("q1", "holds", 0.5, "quick"), _v("q2", "does not hold", 0.3, "quick")]),
        ["q1", "q2"],
        None,
    )
    text = _short_answer_text(tmp_path, [row])
    assert (
        "0.40**, indicative only: measured on quick runs of 2 machines (the median; 0.30 to 0.50); "
        "no full-profile run yet" in text
    )
    assert "Indicative on 2 quick-run machines: ✓ holds on q1; ✗ does not hold on q2." in text


def test_no_findings_heading_is_decided_by_a_quick_verdict() -> None:
    """A statement that fails only on a quick machine is not 'did not hold'; one judged only on quick
    machines is under neither heading, but listed as indicative."""
    held_on_full = claim_row(
        _claim([_v("full", "holds", 0.6, "full"), _v("quick", "does not hold", 0.3, "quick")], "a"),
        ["full", "quick"],
        None,
    )
    quick_only = claim_row(_claim([_v("quick", "does not hold", 0.3, "quick")], "b"), ["full", "quick"], None)
    failed_on_full = claim_row(
        _claim([_v("full", "does not hold", 0.3, "full"), _v("quick", "holds", 0.6, "quick")], "c"),
        ["full", "quick"],
        None,
    )
    found = findings([held_on_full, quick_only, failed_on_full])
    assert [f["id"] for f in found["held"]] == ["a"]
    assert [f["id"] for f in found["failed"]] == ["c"]
    assert [c["machine"] for c in found["failed"][0]["against"]] == ["full"]
    assert [f["id"] for f in found["indicative"]] == ["b"]


def test_the_verdict_table_marks_the_quick_verdict(tmp_path: Path) -> None:
    row = claim_row(
        _claim([_v("full", "holds", 0.6, "full"), _v("quick", "holds", 0.7, "quick")]),
        ["full", "quick"],
        None,
    )
    heads = [
        {"machine": m, "server_cores": 1, "profile": p, "indicative": p != "full", "date": "2026-12-01"}
        for m, p in (("full", "full"), ("quick", "quick"))
    ]
    page = article_verdicts(
        VerdictTable(columns=[], source=None),
        {"columns": heads, "rows": [row], "coverage": {}},
        [],
        {},
        "articles/x.md",
    )
    cells = re.findall(r"<td[^>]*>(.*?)</td>", page)
    full_cell, quick_cell = cells[-2], cells[-1]
    assert "indicative" not in full_cell
    assert "verdict--indicative" in quick_cell and re.sub(r"<[^>]+>", "", quick_cell).startswith(
        "✓ holds indicative 0.70"
    )
    assert "a verdict marked <em>indicative</em> rests on a quick (or tiny) profile" in page
