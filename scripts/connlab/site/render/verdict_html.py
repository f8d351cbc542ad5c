"""The verdict tables written as HTML straight from the claims' verdicts, for machine pages and articles
alike: no generated table goes through a Markdown converter (a thousand machine pages' verdict tables made the
Markdown table parser the site's slowest step). The page carries each table as a raw HTML block, which
Markdown passes through as it is; Material's scroll wrappers are added to it like to any table
(connlab.site.render.wrapped_tables).

Each verdict is a word, a mark and a colour (the classes of site_src/assets/verdicts.css), never colour
alone; a cell gives the figure on the medians with the passes' range, a bound where pgbench saturated its
core ("at least 3.0"), why a claim cannot be evaluated, "unverified" where its machine records no
calibration or a run it reads calibrated off the machine's, "one reading" where that is all a verdict rests
on, and the days its experiments were measured. Every word and figure comes from the claims' JSON
(connlab.data.claims) and the answers' rows (connlab.data.answers).

Under 600 px wide the same tables are read as cards, one per claim (site_src/assets/verdicts.css): the claim,
then each other cell on a line of its own, labelled with its column's heading from the cell's data-label (a
machine's name for a machine's column). A table whose cards would be taller than five phone screens shows
its first claims and folds the rest into a <details> below it (shown_rows), so that no table is taller than
six. A figure with its range, a range of numbers and a date are each kept on one line (nowrap spans), never
broken mid-token.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping

from connlab.contract.names import VERDICT_COLUMNS_UP_TO
from connlab.site.layout import MACHINES_INDEX, page_url
from connlab.site.render.formats import is_missing, significant
from connlab.site.render.verdicts import VerdictTable

# Each verdict's class suffix (verdicts.css) and mark; a word beside it, so the page reads without colour.
MARKS = {
    "holds": ("holds", "✓"),
    "does not hold": ("fails", "✗"),
    "inconclusive": ("inconclusive", "~"),
    "cannot be evaluated": ("cannot", "–"),
    "not measured": ("not-run", "·"),
}
WORDS = {"not measured": "not run"}
# The order verdicts are listed in, the firmest first.
ORDER = ("holds", "does not hold", "inconclusive", "cannot be evaluated", "not measured")
# Past this many machines an article's table gives the median across them, not a column each.
MAX_COLUMNS = VERDICT_COLUMNS_UP_TO
# A verdict on a single reading says so in its cell, and on hover why that matters.
ONE_READING = (
    '<span class="verdict__one-reading" title="This verdict rests on a single reading (one pass or one '
    'window): no second reading shows how far it would move.">one reading</span>'
)


def unverified(reason: str) -> str:
    """The mark of a verdict that nothing shows came from one machine under one load, with the reason the
    claims give (connlab.data.claims.unverified_reason) on hover."""
    return f'<span class="verdict__unverified" title="{html.escape(reason)}">unverified</span>'


Verdict = Mapping[str, object]


# A word with a dash next to a digit: a range of numbers ("10–50", "(0.85–1.1)"), a date ("2026-11-30"), a
# machine's name ("intel-xeon-2c-24g"). A browser may break a line after a dash, which splits the token
# ("0.85– / 1.1"); each is kept whole in a span that does not wrap on a phone (verdicts.css). A hyphen
# between letters ("per-core") is left to break as print does.
UNBROKEN = re.compile(r"\S*(?:\d\S*[–-]|[–-]\S*\d)\S*")


def unbroken(escaped: str) -> str:
    """HTML text (no tags) with each word that has a dash next to a digit kept on one line."""
    return UNBROKEN.sub(lambda m: f'<span class="verdict__nowrap">{m.group(0)}</span>', escaped)


def text(value: object) -> str:
    """Contributed or data text shown literally, on one line, HTML escaped."""
    return html.escape(" ".join(str(value).split()), quote=False)


def prose(value: object) -> str:
    """Data text in a verdict table's cell: escaped, its ranges of numbers and dates each kept on one line."""
    return unbroken(text(value))


def mark(verdict: str, indicative: bool = False) -> str:
    """The verdict as a badge: its mark and its word, coloured by its class (italic when indicative)."""
    name, symbol = MARKS[verdict]
    extra = " verdict--indicative" if indicative else ""
    return (
        f'<span class="verdict verdict--{name}{extra}"><span class="verdict__mark" aria-hidden="true">'
        f"{symbol}</span> {WORDS.get(verdict, verdict)}</span>"
    )


def figure(value: object, low: object = None, high: object = None) -> str:
    """'0.50 (0.48–0.51)': the value on the medians and the passes' range, where the range shows anything."""
    shown = significant(value, 2)
    if is_missing(low) or is_missing(high):
        return shown
    low_text, high_text = significant(low, 2), significant(high, 2)
    if low_text == high_text == shown:
        return shown
    return f"{shown} ({low_text}–{high_text})"


def _figure(value: object, low: object = None, high: object = None) -> str:
    """figure() in a table's cell: on one line, never broken inside the value or its range."""
    return f'<span class="verdict__nowrap">{figure(value, low, high)}</span>'


def _small(parts: Iterable[str]) -> str:
    kept = [part for part in parts if part]
    return f"<br><small>{' · '.join(kept)}</small>" if kept else ""


# Beside a verdict on quick- or tiny-profile windows (connlab.data.claims.is_indicative): a first look.
INDICATIVE = (
    '<em class="verdict__indicative" title="Measured on a quick (or tiny) profile\'s windows: shown, never '
    'counted in a short answer, a median across machines or the findings.">indicative</em>'
)


def is_indicative(verdict: Verdict, column: bool = False) -> bool:
    """The verdict's own flag (the claims computed it from the profile of the windows it reads); the
    column's, the least thorough profile of the article's experiments, only where a verdict has none."""
    return bool(verdict["indicative"]) if "indicative" in verdict else column


def cell(verdict: Verdict, indicative: bool = False) -> str:
    """One machine's verdict: the badge ('indicative' beside it where it rests on quick- or tiny-profile
    windows), then the figure (a bound says so) or why there is none, then in small print its note, 'one
    reading' where it rests on one, and the days it was measured. indicative: the column's flag, for a
    verdict that carries none of its own."""
    name = str(verdict["verdict"])
    flagged = name != "not measured" and is_indicative(verdict, indicative)
    body = mark(name, flagged) + (f" {INDICATIVE}" if flagged else "")
    if name == "cannot be evaluated":
        body += f": {prose(verdict.get('reason') or '')}"
    elif not is_missing(verdict.get("value")):
        bound = verdict.get("bound")
        shown = _figure(verdict["value"], verdict.get("low"), verdict.get("high"))
        body += f" {text(bound)} {shown}" if bound else f" {shown}"
    if name == "not measured":
        return body
    note = verdict.get("note")
    readings = verdict.get("readings")
    measured_on = verdict.get("measured_on")
    return body + _small(
        [
            prose(note) if note else "",
            unverified(str(verdict["unverified"])) if verdict.get("unverified") else "",
            ONE_READING if readings == 1 else "",
            f"measured {prose(measured_on)}" if measured_on else "",
        ]
    )


def machine_link(machine: str, urls: Mapping[str, str]) -> str:
    """The machine's name, a link to its page where the page has one (the picker's URLs)."""
    if machine in urls:
        return f'<a href="{html.escape(urls[machine])}">{html.escape(machine)}</a>'
    return text(machine)


def names(group: Mapping[str, object], urls: Mapping[str, str]) -> str:
    """'a, b, c and 2 more': the machines of one verdict, as connlab.data.answers named them."""
    listed = ", ".join(machine_link(str(m), urls) for m in group["names"])  # type: ignore[attr-defined]
    more = group.get("more")
    return f"{listed} and {more} more" if more else listed


# The heading of the column with the source article's own figure.
SOURCE_HEAD = "the source article's figure"

LEGEND = (
    '<div class="verdict-legend">\n<p><strong>How to read the verdicts.</strong> Each claim is checked on '
    "every machine from the medians of its passes and the range the passes allow: {holds} when the value "
    "and its whole range meet the claim's threshold; {fails} when neither does; {inconclusive} when the "
    "range straddles the threshold; {cannot} when the machine's data cannot answer the claim (the cell "
    "says why, for example that pgbench saturated its own core, so the figure measures the load "
    "generator); {not_run} when the machine did not run the claim's experiment. The figure is the value "
    "on the medians, the passes' range in brackets; “at least” or “at most” marks a bound, where pgbench "
    "saturated its core and only what the bound decides is judged; “one reading” marks a verdict that "
    "rests on a single reading; each cell gives the days its experiments were measured. Quick runs "
    "indicate, full runs decide: a verdict marked <em>indicative</em> rests on a quick (or tiny) profile's "
    "windows, a first look; it is shown, but never counted in a short answer's figure or verdicts, a "
    "median across machines or the findings' headings (a column's heading names its profile). “The source "
    "article's figure” is the figure the source article printed, which sets the threshold where the claim "
    "is the source article's statement; a “project's reading” is a test of our own, kept apart from the "
    "source article's statement, and an “expectation” is what the source article expected without testing "
    "it.</p>\n"
    "</div>\n"
).format(
    holds=mark("holds"),
    fails=mark("does not hold"),
    inconclusive=mark("inconclusive"),
    cannot=mark("cannot be evaluated"),
    not_run=mark("not measured"),
)


def _claim_cell(claim: Mapping[str, object]) -> str:
    """The claim's sentence, then what kind of reading it is, what its value means, and an operating point
    that is the project's choice."""
    label = claim.get("reading_label") or claim.get("reading")
    parts = [f"{text(label)}: {prose(claim['value_label'])}."]
    if claim.get("operating_point"):
        parts.append(f"Operating point: {prose(claim['operating_point'])}")
    return prose(claim["claim"]) + "".join(f"<br><small>{part}</small>" for part in parts)


def _seed_cell(claim: Mapping[str, object], seed_value: object) -> str:
    """The seed's own figure (its published set's value: shown, never judged), the threshold, and what the
    seed said."""
    shown = "" if is_missing(seed_value) else f"<strong>{significant(seed_value, 2)}</strong><br>"
    own = " (the source article's figure)" if claim.get("reading") == "seed" else ""
    return f"{shown}<small>threshold {prose(claim['threshold'])}{own}; {prose(claim['seed'])}</small>"


def _summary_cell(row: Mapping[str, object], urls: Mapping[str, str]) -> str:
    """Past MAX_COLUMNS machines: the median across them and the machines of each verdict."""
    parts = []
    spread = row.get("spread")
    if isinstance(spread, Mapping):
        shown = _figure(spread["median"], spread["low"], spread["high"])
        parts.append(f"median {shown}, {INDICATIVE} only" if row.get("indicative") else f"median {shown}")
    # The deciding verdicts first, then the indicative ones (quick runs only), each in ORDER.
    for key, indicative in (("verdicts", False), ("indicative_verdicts", True)):
        groups = row.get(key) or {}
        assert isinstance(groups, Mapping)
        for verdict in (v for v in ORDER if v in groups):
            group = groups[verdict]
            said = f"{mark(verdict, indicative)}{f' {INDICATIVE}' if indicative else ''}"
            parts.append(f"{said} on {group['count']}: {names(group, urls)}")
    single = int(row.get("single_readings") or 0)  # type: ignore[call-overload]
    if single:
        parts.append(f"<small>{ONE_READING} on {single} machine{'' if single == 1 else 's'}</small>")
    return "<br>".join(parts)


# How tall a claim's card is on a phone (390 x 844, verdicts.css), estimated from its text: a line of a card
# holds about 50 characters (13 px text in a 340 px card; fewer are counted, so that a card is rather
# overestimated, words not filling their lines), each line 21 px, and a card's border, padding and margin
# add 30 px. A table whose cards come to more than FULL_PX shows the first claims within SHOWN_PX (at least
# MIN_SHOWN) and folds the rest into a <details>: with the machines' key and the fold's line, no table is
# taller than six phone screens (tests/browser/test_verdict_cards_browser.py), and a table that fits in five
# shows every claim, so that a fold never hides one or two claims of a table that nearly fits.
PHONE_SCREEN_PX = 844
PHONE_LINE_CHARS = 45
PHONE_LINE_PX = 21
CARD_PX = 30
FULL_PX = 5 * PHONE_SCREEN_PX
SHOWN_PX = 4 * PHONE_SCREEN_PX
MIN_SHOWN = 3
TAG = re.compile(r"<[^>]+>")


def phone_px(row: list[str], labels: list[str]) -> int:
    """The estimated height of a row's card on a phone: each cell's lines (its label before its first), each
    piece between line breaks taking whole lines."""
    lines = 0
    for content, label in zip(row, labels, strict=True):
        for index, piece in enumerate(content.split("<br>")):
            plain = html.unescape(TAG.sub("", piece))
            if label and index == 0:
                plain = f"{label}: {plain}"
            lines += max(1, -(-len(plain) // PHONE_LINE_CHARS))
    return CARD_PX + lines * PHONE_LINE_PX


def shown_rows(rows: list[list[str]], labels: list[str]) -> int:
    """How many of a table's rows show before its fold: all where their cards fit in FULL_PX, else those
    within SHOWN_PX, and at least MIN_SHOWN."""
    heights = [phone_px(row, labels) for row in rows]
    if sum(heights) <= FULL_PX:
        return len(rows)
    shown, total = 0, 0
    for height in heights:
        if shown >= MIN_SHOWN and total + height > SHOWN_PX:
            break
        shown, total = shown + 1, total + height
    return shown


def _td(content: str, label: str) -> str:
    return f'<td data-label="{html.escape(label)}">{content}</td>' if label else f"<td>{content}</td>"


def _table(head: list[str], rows: list[list[str]], labels: list[str] | None = None) -> str:
    """A table as a raw HTML block (blank lines around it, so Markdown takes it as one block). labels: each
    column's name for a phone's card (a cell's data-label); the first column, the card's title, has none."""
    names = labels or [""] * len(head)
    head_html = "".join(f"<th>{h}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(_td(c, label) for c, label in zip(row, names, strict=True)) + "</tr>\n"
        for row in rows
    )
    return f"<table>\n<thead>\n<tr>{head_html}</tr>\n</thead>\n<tbody>\n{body}</tbody>\n</table>\n"


def _folded(head: list[str], rows: list[list[str]], labels: list[str]) -> str:
    """The verdict table in its block: where its cards would be taller than a phone's five screens, the
    first claims (shown_rows) and the rest folded under "N more claims" (a table of its own, with the same
    headings)."""
    shown = shown_rows(rows, labels)
    tables = _table(head, rows[:shown], labels)
    rest = rows[shown:]
    if rest:
        claims = "claim" if len(rest) == 1 else "claims"
        tables += (
            f'<details class="verdict-table__more">\n<summary>{len(rest)} more {claims}</summary>\n'
            + _table(head, rest, labels)
            + "</details>\n"
        )
    return f'<div class="verdict-table">\n{tables}</div>\n'


def _label(machine: str) -> str:
    return " ".join(machine.split())


def _heading(machine: str, label: str, urls: Mapping[str, str]) -> str:
    return f"{machine_link(machine, urls)}<br><small>{text(label)}</small>"


def _others(table: VerdictTable) -> str:
    """The other published sets' verdicts on these claims, judged by the same rules, listed apart."""
    if not table.other_rows:
        return ""
    head = ["claim", *(f"<strong>{text(m)}</strong>" for m in table.others)]
    rows = [
        [prose(row["claim"]["claim"])]
        + [cell(row["cells"][m]) if m in row["cells"] else mark("not measured") for m in table.others]
        for row in table.other_rows
    ]
    labels = ["", *(_label(str(m)) for m in table.others)]
    return (
        "\n<p>Other published articles have figures that bear on some of these claims; they are judged by "
        "the same rules:</p>\n\n" + _folded(head, rows, labels)
    )


def _block(head: list[str], rows: list[list[str]], labels: list[str]) -> str:
    return f"\n{LEGEND}\n{_folded(head, rows, labels)}"


# Where a machine page's table leaves out the claims whose experiments the machine did not run: the page's
# last line names those experiments (site_src/partials/_machine_page.md.j2).
NOT_RUN_ANCHOR = "#not-run"


def _not_run_line(count: int, shown: int) -> str:
    claims = "claim rests" if count == 1 else "claims rest"
    more = "" if not shown else " more"
    return (
        f'\n<p class="connlab-not-run">{count}{more} of this article\'s {claims} on experiments not run here '
        f'(<a href="{NOT_RUN_ANCHOR}">the last line</a> names them).</p>\n'
    )


def machine_verdicts(table: VerdictTable) -> str:
    """A machine page's verdict table: the legend, then a row per claim with the seed's figure and the
    machine's own column (never a summary across machines: the page must not change when one is added).
    A claim none of whose columns ran its experiments has no row: a line under the table counts them (the
    page's last line names the experiments); with no row left, the line alone."""
    heads = [_heading(c.machine, c.heading, {}) for c in table.columns]
    rows = []
    not_run = 0
    for row in table.rows:
        if row["cells"] and all(c["verdict"] == "not measured" for c in row["cells"]):
            not_run += 1
            continue
        claim = row["claim"]
        source = row["source_cell"]
        seed_value = source["value"] if source and source["verdict"] in ORDER[:3] else None
        rows.append(
            [_claim_cell(claim), _seed_cell(claim, seed_value)]
            + [cell(c, column.indicative) for c, column in zip(row["cells"], table.columns, strict=True)]
        )
    if not rows:
        return (_not_run_line(not_run, 0) if not_run else "") + _others(table) + "\n"
    line = _not_run_line(not_run, len(rows)) if not_run else ""
    labels = ["", SOURCE_HEAD, *(_label(c.machine) for c in table.columns)]
    return _block(["claim", SOURCE_HEAD, *heads], rows, labels) + line + _others(table) + "\n"


def _article_heading(column: Mapping[str, object], urls: Mapping[str, str]) -> str:
    cores = column.get("server_cores")
    profile = f"{column.get('profile')} profile" + (", indicative" if column.get("indicative") else "")
    cores_text = (
        "server cores unknown"
        if is_missing(cores)
        else f"{float(cores):g} server core{'' if cores == 1 else 's'}"  # type: ignore[arg-type]
    )
    label = f"{cores_text} · {profile} · {column.get('date') or 'undated'}"
    return _heading(str(column["machine"]), label, urls)


def article_verdicts(
    table: VerdictTable,
    answers: Mapping[str, object],
    claims: list[Mapping[str, object]],
    urls: Mapping[str, str],
    page: str,
) -> str:
    """An article's verdict table from connlab.data.answers' rows: a column per machine up to MAX_COLUMNS,
    past that the median with the machines of each verdict named; the machines that ran none of the
    article's experiments on a line below. page: the article's Markdown name, for the link to the Machines
    page (raw HTML: MkDocs does not rewrite its links)."""
    machines_url = page_url(page, MACHINES_INDEX)
    by_id = {str(c["id"]): c for c in claims}
    columns = list(answers.get("columns") or [])  # type: ignore[call-overload]
    few = len(columns) <= MAX_COLUMNS
    if few:
        heads = [_article_heading(c, urls) for c in columns]
        labels = [_label(str(c["machine"])) for c in columns]
    else:
        heads = [f'measured on {len(columns)} machines (<a href="{html.escape(machines_url)}">Machines</a>)']
        labels = [f"measured on {len(columns)} machines"]
    rows = []
    for row in answers.get("rows") or []:  # type: ignore[attr-defined]
        # The claim as the claims' JSON has it (its reading's label, its operating point), else the row's own.
        claim = by_id.get(str(row["id"])) or {**row, "seed": row["seed_text"]}
        measured = (
            [cell(c, bool(col.get("indicative"))) for c, col in zip(row["cells"], columns, strict=True)]
            if few
            else [_summary_cell(row, urls)]
        )
        rows.append([_claim_cell(claim), _seed_cell(claim, row.get("seed_value")), *measured])
    result = _block(["claim", SOURCE_HEAD, *heads], rows, ["", SOURCE_HEAD, *labels])
    coverage = answers.get("coverage") or {}
    absent = coverage.get("did_not_run_named") or {}  # type: ignore[attr-defined]
    if absent.get("count"):
        listed = names(absent, urls)
        result += f"\n<p>Without a column: {listed}, which ran none of this article's experiments.</p>\n"
    return result + _others(table) + "\n"


def across_verdicts(claims: list[Mapping[str, object]]) -> str:
    """Claims judged over the measured machines together (scope: across), each with its verdict and range."""
    rows = [
        [
            prose(c["claim"])
            + f"<br><small>{prose(c['value_label'])}, {prose(c['threshold'])}. "
            + f"The source article: {prose(c['seed'])}</small>",
            prose((c["across"] or {}).get("note") or "–"),  # type: ignore[union-attr]
            cell(c["across"]),  # type: ignore[arg-type]
        ]
        for c in claims
        if c.get("scope") == "across"
    ]
    if not rows:
        return ""
    head = ["claim across machines", "what was compared", "verdict"]
    return "\n" + _folded(head, rows, ["", *head[1:]]) + "\n"
