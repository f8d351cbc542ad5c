"""The verdict tables as HTML from the claims' verdicts: each cell's word, mark, figure, bound, reason,
readings and dates; the claim's reading and operating point; a column per machine or the median past five;
each cell's label for a phone's card, figures and dates kept whole, and a long table's claims folded."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from typing import Any

import pytest

from connlab.site.render.verdict_html import (
    SHOWN_PX,
    across_verdicts,
    article_verdicts,
    cell,
    machine_verdicts,
    mark,
    phone_px,
    shown_rows,
    unbroken,
)
from connlab.site.render.verdicts import build_table, with_machines


def verdict(name: str, value: float | None = None, **fields: Any) -> dict[str, Any]:
    return {
        "verdict": name,
        "value": value,
        "low": None,
        "high": None,
        "reason": None,
        "bound": None,
        "readings": None,
        "measured_on": None,
        **fields,
    }


def words(html_text: str) -> str:
    """What a reader sees: the tags taken out, the marks left in."""
    return re.sub(r"<[^>]+>", "", html_text)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (verdict("holds", 4.0), "✓ holds 4.0"),
        (verdict("holds", 59.42), "✓ holds 59"),
        (verdict("does not hold", 1500.0), "✗ does not hold 1,500"),
        (verdict("holds", 0.5, low=0.48, high=0.51), "✓ holds 0.50 (0.48–0.51)"),
        (verdict("inconclusive", 0.53, low=0.451, high=0.641), "~ inconclusive 0.53 (0.45–0.64)"),
        (verdict("holds", 4.0, low=4.0, high=4.0), "✓ holds 4.0"),  # no range to show
        (
            verdict("holds", 0.97, note="windows at 400 clients left out"),
            "✓ holds 0.97windows at 400 clients left out",
        ),
        (verdict("not measured"), "· not run"),
        (
            verdict(
                "cannot be evaluated",
                reason="pgbench used 0.94 of its core: the figure is the load generator's",
            ),
            "– cannot be evaluated: pgbench used 0.94 of its core: the figure is the load generator's",
        ),
        (verdict("holds", 3.2, low=3.1, high=3.4, bound="at least"), "✓ holds at least 3.2 (3.1–3.4)"),
        (verdict("holds", 1012.0, readings=1), "✓ holds 1,012one reading"),
        (verdict("holds", 2.0, readings=2), "✓ holds 2.0"),
        (verdict("holds", 2.0, measured_on="2026-12-01"), "✓ holds 2.0measured 2026-12-01"),
        (
            verdict("holds", 2.0, readings=1, measured_on="2026-11-30 to 2026-12-01"),
            "✓ holds 2.0one reading · measured 2026-11-30 to 2026-12-01",
        ),
    ],
)
def test_a_cell_says_the_verdict_in_words_with_its_figure_bound_reason_readings_and_dates(
    given: dict[str, Any], expected: str
) -> None:
    assert words(cell(given)) == expected


def test_a_verdict_is_a_word_a_mark_and_a_colour_class() -> None:
    assert mark("does not hold") == (
        '<span class="verdict verdict--fails"><span class="verdict__mark" aria-hidden="true">✗</span> '
        "does not hold</span>"
    )
    assert 'class="verdict verdict--holds verdict--indicative"' in mark("holds", indicative=True)


def test_contributed_text_is_escaped() -> None:
    shown = cell(verdict("cannot be evaluated", reason="<script>alert(1)</script> | *x*"))
    assert "<script>" not in shown and "&lt;script&gt;alert(1)&lt;/script&gt; | *x*" in shown


CLAIM = {
    "id": "churn",
    "claim": "PgBouncer falls with churn.",
    "seed": "PgBouncer fell as churn rose.",
    "reading": "conjecture",
    "reading_label": "Seed's expectation, untested by the seed",
    "operating_point": "10 to 50 clients, the project's choice",
    "value_label": "throughput, higher ÷ lower",
    "threshold": "at least 1",
    "summary": "holds on 1 of 1 machine",
}


def claims_file(cells: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "source": "published-seed",
        "claims": [{**CLAIM, "verdicts": [{"machine": m, **v} for m, v in cells.items()]}],
    }


class Tables(HTMLParser):
    """Every table's header and body cells, as text."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict[str, list]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "br" and self._cell is not None:
            self._cell.append(" ")
        elif tag == "table":
            self.tables.append({"head": [], "rows": []})
        elif tag == "tr":
            self.tables[-1]["rows"].append([])
        elif tag in ("th", "td"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("th", "td") and self._cell is not None:
            text = " ".join("".join(self._cell).split())
            table = self.tables[-1]
            (table["head"] if tag == "th" else table["rows"][-1]).append(text)
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def parse(html_text: str) -> list[dict[str, list]]:
    parser = Tables()
    parser.feed(html_text)
    for table in parser.tables:
        table["rows"] = [row for row in table["rows"] if row]
    return parser.tables


def test_a_machine_table_has_the_legend_first_the_claims_reading_and_its_own_column() -> None:
    claims = claims_file(
        {
            "box": verdict("holds", 3.2, low=3.1, bound="at least", high=3.4, measured_on="2026-12-01"),
            "published-seed": verdict("holds", 1.78),
        }
    )
    shared = build_table(claims, [], ["published-seed"])
    columns = [
        {"machine": "box", "server_cores": 1, "profile": "full", "indicative": False, "date": "2026-12-01"}
    ]
    by_machine = [{v["machine"]: v for v in claims["claims"][0]["verdicts"]}]
    page = machine_verdicts(with_machines(shared, claims, columns, by_machine))
    assert page.index('class="verdict-legend"') < page.index("<table>")
    (table,) = parse(page)
    assert table["head"] == [
        "claim",
        "the source article's figure",
        "box 1 server core · full profile · 2026-12-01",
    ]
    (row,) = table["rows"]
    assert row[0] == (
        "PgBouncer falls with churn. Seed's expectation, untested by the seed: throughput, higher ÷ lower. "
        "Operating point: 10 to 50 clients, the project's choice"
    )
    # A conjecture's threshold is not called the source article's figure.
    assert row[1] == "1.8 threshold at least 1; PgBouncer fell as churn rose."
    assert row[2] == "✓ holds at least 3.2 (3.1–3.4) measured 2026-12-01"


def answers_for(count: int) -> tuple[dict[str, Any], list[str]]:
    machines = [f"m{i}" for i in range(count)]
    cells = [
        {
            "machine": m,
            **verdict("holds" if i < count - 1 else "does not hold", float(i), measured_on="2026-12-01"),
        }
        for i, m in enumerate(machines)
    ]
    row = {
        "id": "churn",
        "claim": CLAIM["claim"],
        "reading": "conjecture",
        "seed_text": CLAIM["seed"],
        "value_label": CLAIM["value_label"],
        "threshold": CLAIM["threshold"],
        "seed_value": None,
        "cells": cells,
        "spread": {"median": (count - 1) / 2, "low": 0.0, "high": float(count - 1)},
        "verdicts": {
            "holds": {
                "names": machines[: min(5, count - 1)],
                "more": max(0, count - 1 - 5),
                "count": count - 1,
            },
            "does not hold": {"names": machines[-1:], "more": 0, "count": 1},
        },
    }
    heads = [
        {"machine": m, "server_cores": 2, "profile": "quick", "indicative": True, "date": "2026-12-01"}
        for m in machines
    ]
    absent = {"names": ["idle-box"], "more": 0, "count": 1}
    return {"columns": heads, "rows": [row], "coverage": {"did_not_run_named": absent}}, machines


def test_an_article_table_has_a_column_per_machine_up_to_five() -> None:
    answers, machines = answers_for(5)
    urls = {m: f"../../machines/{m}/" for m in machines}
    page = article_verdicts(build_table({"claims": []}, [], []), answers, [CLAIM], urls, "articles/x.md")
    (table,) = parse(page)
    assert (
        len(table["head"]) == 2 + 5
        and table["head"][2] == "m0 2 server cores · quick profile, indicative · 2026-12-01"
    )
    (row,) = table["rows"]
    assert row[0].startswith("PgBouncer falls with churn. Seed's expectation, untested by the seed")
    # A cell without a flag of its own takes its column's: a quick profile, indicative.
    assert row[6] == "✗ does not hold indicative 4.0 measured 2026-12-01"
    assert "verdict--indicative" in page and '<a href="../../machines/m0/">m0</a>' in page
    assert "Without a column: idle-box, which ran none of this article's experiments." in page


def test_the_machines_without_a_column_are_named_as_the_answers_named_them() -> None:
    """A few named and the rest counted: a line that linked each of a thousand idle machines was a sixth of
    an article."""
    answers, _ = answers_for(2)
    answers["coverage"] = {"did_not_run_named": {"names": ["a", "b"], "more": 998, "count": 1000}}
    urls = {"a": "../../machines/a/"}
    page = article_verdicts(build_table({"claims": []}, [], []), answers, [CLAIM], urls, "articles/x.md")
    assert 'Without a column: <a href="../../machines/a/">a</a>, b and 998 more, which ran none' in page
    answers["coverage"] = {"did_not_run_named": {"names": [], "more": 0, "count": 0}}
    page = article_verdicts(build_table({"claims": []}, [], []), answers, [CLAIM], urls, "articles/x.md")
    assert "Without a column" not in page


def test_an_article_table_past_five_machines_gives_the_median_and_names_each_verdicts_machines() -> None:
    answers, _ = answers_for(7)
    page = article_verdicts(build_table({"claims": []}, [], []), answers, [CLAIM], {}, "articles/x.md")
    (table,) = parse(page)
    assert table["head"] == ["claim", "the source article's figure", "measured on 7 machines (Machines)"]
    assert '<a href="../../machines/">Machines</a>' in page
    (row,) = table["rows"]
    assert row[2] == "median 3.0 (0–6.0) ✓ holds on 6: m0, m1, m2, m3, m4 and 1 more ✗ does not hold on 1: m6"


def test_claims_across_machines_have_a_table_of_their_own() -> None:
    across = {
        **CLAIM,
        "scope": "across",
        "across": verdict("inconclusive", 1.1, low=0.9, high=1.3, note="4 machines"),
    }
    (table,) = parse(across_verdicts([across, CLAIM]))
    assert table["head"] == ["claim across machines", "what was compared", "verdict"]
    (row,) = table["rows"]
    assert row[1] == "4 machines" and row[2] == "~ inconclusive 1.1 (0.90–1.3) 4 machines"
    assert across_verdicts([CLAIM]) == ""


def test_an_unverified_verdict_says_so_with_the_claims_reason_as_its_tooltip() -> None:
    """The reason (connlab.data.claims.unverified_reason) is the mark's title, escaped as text."""
    reason = "A run this verdict reads calibrated at 6,000 tps, this machine at 10,000 tps: <further> apart."
    shown = cell(verdict("holds", 2.0, unverified=reason))
    assert words(shown) == "✓ holds 2.0unverified"
    assert f'title="{html.escape(reason)}"' in shown
    assert "unverified" not in cell(verdict("holds", 2.0, unverified=None))
    assert "unverified" not in cell(verdict("holds", 2.0))


def test_a_verdict_on_one_reading_says_so_in_its_cell_with_a_tooltip_and_past_five_machines() -> None:
    shown = cell(verdict("holds", 2.0, readings=1))
    assert words(shown) == "✓ holds 2.0one reading"
    assert 'title="This verdict rests on a single reading' in shown
    # Two readings or more, or none said: no such words.
    assert "one reading" not in cell(verdict("holds", 2.0, readings=3))
    assert "one reading" not in cell(verdict("holds", 2.0))
    # Past five machines the answers write each row's count of such verdicts, not its cells.
    answers, _ = answers_for(7)
    del answers["rows"][0]["cells"]
    answers["rows"][0]["single_readings"] = 2
    page = article_verdicts(build_table({"claims": []}, [], []), answers, [CLAIM], {}, "articles/x.md")
    (row,) = parse(page)[0]["rows"]
    assert row[2].endswith("does not hold on 1: m6 one reading on 2 machines")
    answers["rows"][0]["single_readings"] = 1
    page = article_verdicts(build_table({"claims": []}, [], []), answers, [CLAIM], {}, "articles/x.md")
    assert parse(page)[0]["rows"][0][2].endswith("one reading on 1 machine")
    answers["rows"][0]["single_readings"] = 0
    page = article_verdicts(build_table({"claims": []}, [], []), answers, [CLAIM], {}, "articles/x.md")
    assert "one reading" not in parse(page)[0]["rows"][0][2]


def test_each_cell_past_the_claim_is_labelled_with_its_column_for_a_phones_card() -> None:
    """Under 600 px a row is a card (verdicts.css): the claim, then each cell on a line labelled with its
    column's name from data-label, a machine's column with the machine's name (its link and small print are
    in the heading only)."""
    answers, machines = answers_for(2)
    urls = {m: f"../../machines/{m}/" for m in machines}
    page = article_verdicts(build_table({"claims": []}, [], []), answers, [CLAIM], urls, "articles/x.md")
    row = re.search(r"<tbody>\n<tr>(.*)</tr>", page).group(1)  # type: ignore[union-attr]
    labels = re.findall(r"<td(?: data-label=\"([^\"]*)\")?>", row)
    assert [html.unescape(label) for label in labels] == ["", "the source article's figure", "m0", "m1"]
    answers, _ = answers_for(7)
    page = article_verdicts(build_table({"claims": []}, [], []), answers, [CLAIM], {}, "articles/x.md")
    assert '<td data-label="measured on 7 machines">' in page


def test_a_figure_its_range_and_a_date_are_each_kept_on_one_line() -> None:
    """A browser may break a line after a dash: "(0.8 / 5– / 1.1)", "2026 / -11- / 30" on a phone. Each such
    token is in a span that does not wrap; a hyphen between letters is left to break."""
    dates = "2026-11-30 to 2026-12-01"
    shown = cell(verdict("holds", 0.85, low=0.8, high=1.1, measured_on=dates, note="per-core 10–50"))
    nowrap = re.findall(r'<span class="verdict__nowrap">([^<]*)</span>', shown)
    assert nowrap == ["0.85 (0.80–1.1)", "10–50", "2026-11-30", "2026-12-01"]
    assert words(shown) == "✓ holds 0.85 (0.80–1.1)per-core 10–50 · measured 2026-11-30 to 2026-12-01"
    assert unbroken("the peak (intel-xeon-2c-24g) per-core") == (
        'the peak <span class="verdict__nowrap">(intel-xeon-2c-24g)</span> per-core'
    )


def rows_of(count: int, reason: str) -> dict[str, Any]:
    answers, _ = answers_for(4)
    (row,) = answers["rows"]
    cannot = verdict("cannot be evaluated", reason=reason)
    answers["rows"] = [
        {**row, "id": f"c{i}", "claim": f"Claim {i}.", "cells": [cannot] * 4} for i in range(count)
    ]
    return answers


def test_a_table_taller_than_five_phone_screens_shows_its_first_claims_and_folds_the_rest() -> None:
    """The claims' cards estimated (phone_px) past five phone screens: those within four show, at least
    three, and the rest are a table of their own, with the same headings, in a <details> "N more claims"."""
    long_reason = "pgbench used 0.94 of its core, so the figure measures the load generator " * 3
    answers = rows_of(12, long_reason)
    page = article_verdicts(build_table({"claims": []}, [], []), answers, [], {}, "articles/x.md")
    first, folded = parse(page)
    assert folded["head"] == first["head"]
    shown = [row[0].split(" ")[:2] for row in first["rows"]]
    assert 3 <= len(shown) < 12 and len(shown) + len(folded["rows"]) == 12
    assert shown == [["Claim", f"{i}."] for i in range(len(shown))]
    assert f'<details class="verdict-table__more">\n<summary>{12 - len(shown)} more claims</summary>' in page
    order = ['<div class="verdict-table">', "</table>", "<details", "</details>"]
    assert sorted(order, key=page.index) == order and page.index("</details>") < page.rindex("</div>")
    # What shows stays within four screens' estimate; the whole would not have fitted in five.
    labels = ["", "the source article's figure", *(f"m{i}" for i in range(4))]
    rows = [["x" * 60, "y" * 60, *[long_reason] * 4]] * 12
    assert sum(phone_px(row, labels) for row in rows[: shown_rows(rows, labels)]) <= SHOWN_PX
    # A table that fits in five screens shows every claim, unfolded.
    page = article_verdicts(build_table({"claims": []}, [], []), rows_of(3, "short"), [], {}, "articles/x.md")
    assert "<details" not in page and len(parse(page)[0]["rows"]) == 3


def test_a_fold_shows_at_least_three_claims_and_says_one_claim() -> None:
    labels = ["", "figure"]
    tall = [["word " * 1000, "x"]] * 4
    assert shown_rows(tall, labels) == 3
    answers = rows_of(4, "word " * 1000)
    page = article_verdicts(build_table({"claims": []}, [], []), answers, [], {}, "articles/x.md")
    assert "<summary>1 more claim</summary>" in page
