"""What the first screens say, on the site built from the pinned fixture results: a list is never promised
("in short:") and left empty; every machine in a short answer, the "What to do" box and the findings is named
with its server cores (a name such as amd-epyc-2c-24g hides that its server ran on 1 core), in a number that
agrees with its noun; every pooler figure in them names the version measured (PgBouncer 1.18 predates
transaction-mode prepared statements: "0 ✓ holds" without it reads as a finding about PgBouncer); and a
machine's page gives one pool size, not two."""

from __future__ import annotations

import json
import re
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import pytest

from connlab.contract.names import MACHINES_JSON

VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)


class Regions(HTMLParser):
    """The text of every element whose class list holds `css_class`, and of each list item in them."""

    def __init__(self, css_class: str) -> None:
        super().__init__(convert_charrefs=True)
        self.css_class = css_class
        self.regions: list[str] = []
        self.items: list[str] = []
        self._depth = 0  # open elements inside the region being read; 0: outside every region
        self._item_depth: int | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            return
        if self._depth:
            self._depth += 1
            if tag == "li" and self._item_depth is None:
                self._item_depth = self._depth
                self.items.append("")
            return
        classes = (dict(attrs).get("class") or "").split()
        if self.css_class in classes:
            self._depth = 1
            self.regions.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID or not self._depth:
            return
        if self._item_depth is not None and self._depth == self._item_depth:
            self._item_depth = None
        self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._depth:
            self.regions[-1] += data
            if self._item_depth is not None:
                self.items[-1] += data


def regions(html: str, css_class: str) -> Regions:
    parser = Regions(css_class)
    parser.feed(html)
    parser.close()
    return parser


def plain(html: str) -> str:
    """A fragment's text, tags dropped and white space made single."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def articles(site: Path) -> dict[str, str]:
    found = {
        page.parent.name: page.read_text(encoding="utf-8")
        for page in sorted(site.glob("articles/*/index.html"))
    }
    assert len(found) >= 4, site
    return found


# The findings: the list under "Where the source article held here, and where it did not".
FINDINGS = re.compile(r'<h2 id="where-the-source-article-held-here[^"]*".*?</h2>\s*(<ul>.*?</ul>)', re.S)


def first_screens(site: Path) -> dict[str, str]:
    """Each article's short answer, its "What to do" box and its findings, as text, by "slug: part"."""
    found = {}
    for slug, html in articles(site).items():
        found[f"{slug}: short answer"] = "\n".join(regions(html, "short-answer--article").regions)
        found[f"{slug}: what to do"] = "\n".join(regions(html, "connlab-advice").regions)
        found[f"{slug}: findings"] = "\n".join(plain(m.group(1)) for m in FINDINGS.finditer(html))
    assert any(found[f"{slug}: short answer"].strip() for slug in articles(site))
    return found


def measured_machines(site: Path) -> list[str]:
    machines = json.loads((site.parent / "data" / MACHINES_JSON).read_text())
    found = [str(m["id"]) for m in machines if not m.get("published")]
    assert found
    return found


# ----------------------------------------------------------------------------------------------------------
# "in short:" and then a list with something in it.

IN_SHORT = re.compile(r"(?i)in short:")
# The paragraph ends there and a list follows whose first item has text.
LIST_FOLLOWS = re.compile(r"\s*</p>\s*<(?:ul|ol)\b[^>]*>\s*<li\b[^>]*>(?:\s|<[^>]+>)*[^\s<]")


def empty_in_short(html: str) -> list[str]:
    return [
        plain(html[max(0, m.start() - 120) : m.end() + 160])
        for m in IN_SHORT.finditer(html)
        if not LIST_FOLLOWS.match(html, m.end())
    ]


def test_the_in_short_check_finds_a_promise_left_empty() -> None:
    empty = (
        "<p>Each machine's answer is on its page; in short:\n<code>max_connections</code> then covers it.</p>"
    )
    assert empty_in_short(empty)
    assert empty_in_short("<p>in short:</p>\n<ul>\n<li></li>\n</ul>")
    assert empty_in_short("<p>in short:</p>\n<ul>\n<li><strong>a pool of 4</strong></li></ul>") == []


@pytest.mark.mkdocs
def test_no_page_says_in_short_and_lists_nothing(built_site: Path) -> None:
    offences = {
        str(page.relative_to(built_site)): found
        for page in sorted(built_site.rglob("*.html"))
        if (found := empty_in_short(page.read_text(encoding="utf-8")))
    }
    assert offences == {}


# ----------------------------------------------------------------------------------------------------------
# Every machine with its server cores, in a number that agrees with its noun.

# What follows a machine's name: ", 1 server core", " (8 server cores", " with 1 server core".
WITH_CORES = re.compile(r"(?:, | \(| with )\d+(?:\.\d+)? server cores?\b")
CORES = re.compile(r"\b(\d+(?:\.\d+)?) server (cores?)\b")


def without_cores(text: str, machines: list[str]) -> list[str]:
    """Each mention of a machine not followed by its server cores, in its context."""
    found = []
    for machine in machines:
        for m in re.finditer(rf"(?<![\w-]){re.escape(machine)}(?![\w-])", text):
            if not WITH_CORES.match(text, m.end()):
                found.append(" ".join(text[max(0, m.start() - 60) : m.end() + 40].split()))
    return found


def disagreeing(text: str) -> list[str]:
    """'1 server cores', '8 server core'."""
    return [m.group(0) for m in CORES.finditer(text) if (float(m.group(1)) == 1) != (m.group(2) == "core")]


def test_the_cores_check_finds_a_bare_name_and_a_plural_that_disagrees() -> None:
    machines = ["amd-epyc-2c-24g", "amd-epyc-2c-24g-2"]
    assert without_cores("✗ does not hold on amd-epyc-2c-24g-2.", machines)
    assert without_cores("amd-epyc-2c-24g 4; amd-epyc-2c-24g-2 (1 server core) 4", machines) == [
        "amd-epyc-2c-24g 4; amd-epyc-2c-24g-2 (1 server core) 4"
    ]
    named = (
        "on amd-epyc-2c-24g (1 server core), amd-epyc-2c-24g-2, 1 server core: 4; on x with 8 server cores"
    )
    assert without_cores(named, machines) == []
    assert disagreeing("1 server cores; 8 server core; 0.5 server cores; 1 server core") == [
        "1 server cores",
        "8 server core",
    ]


@pytest.mark.mkdocs
def test_every_machine_on_the_first_screens_says_its_server_cores(built_site: Path) -> None:
    machines = measured_machines(built_site)
    screens = first_screens(built_site)
    assert {part: found for part, text in screens.items() if (found := without_cores(text, machines))} == {}
    assert {part: found for part, text in screens.items() if (found := disagreeing(text))} == {}
    # The short answers name machines at all (else the check above checks nothing).
    assert any(m in screens["pool-sizing: short answer"] for m in machines)


# ----------------------------------------------------------------------------------------------------------
# Every pooler figure with the version measured.

# How the pages name each pooler, and a version after the name: "PgBouncer 1.18.0", "pgcat commit 4a7a6a8".
POOLERS = ("PgBouncer", "PgPool-II", "Odyssey", "pgcat")
VERSION = r" (?:\d+(?:\.\d+)+|commit [0-9a-f]{7,})"


def without_version(items: list[str]) -> list[str]:
    """Each list item (one figure and its context) that names a pooler but no version of it."""
    found = []
    for item in items:
        text = " ".join(item.split())
        for pooler in POOLERS:
            if re.search(rf"\b{re.escape(pooler)}\b", text) and not re.search(
                rf"\b{re.escape(pooler)}{VERSION}", text
            ):
                found.append(f"{pooler}: {text[:200]}")
    return found


def test_the_version_check_finds_a_pooler_figure_without_its_version() -> None:
    assert without_version(
        ["PgPool-II's resident memory before the first query, MiB: 5.4 on the one machine"]
    )
    assert without_version(["PgPool-II's throughput ÷ PgBouncer's: 0.66, measured with PgPool-II 4.3.5"]) == [
        "PgBouncer: PgPool-II's throughput ÷ PgBouncer's: 0.66, measured with PgPool-II 4.3.5"
    ]
    assert (
        without_version(["PgBouncer's speed-up: 3.0, measured with PgBouncer 1.18.0; pgcat commit 4a7a6a8"])
        == []
    )


@pytest.mark.mkdocs
def test_every_pooler_figure_on_the_first_screens_names_its_version(built_site: Path) -> None:
    found = {}
    for slug, html in articles(built_site).items():
        items = regions(html, "short-answer--article").items + regions(html, "connlab-advice").items
        if missing := without_version(items):
            found[slug] = missing
    assert found == {}
    # The four-poolers short answer names the versions measured, and its first screen which ran where.
    four = articles(built_site)["four-poolers"]
    assert re.search(rf"PgPool-II{VERSION}", "\n".join(regions(four, "short-answer--article").items))
    coverage = plain(four[four.index("What was measured here") :][:3000])
    assert re.search(rf"PgBouncer{VERSION} on \S+ \(\d+ server cores?\)", coverage), coverage[:600]
    assert re.search(rf"The source article ran .*PgBouncer{VERSION}", coverage), coverage[:600]


# ----------------------------------------------------------------------------------------------------------
# One pool size per machine page.

# The sentences a machine's page gives a pool size in (its lead, Too many connections' and PgBouncer's trade's
# conclusions for the machine).
POOL_SIZE_SENTENCES = (
    re.compile(r"One pool size for this machine: (\d+)"),
    re.compile(r"Starting pool size: (\d+)"),
    re.compile(r"A pool near [\d.]+ connections per server core \((\d+) here\)"),
)


def pool_sizes(text: str) -> list[tuple[str, int]]:
    return [(m.group(0), int(m.group(1))) for pattern in POOL_SIZE_SENTENCES for m in pattern.finditer(text)]


def test_the_pool_size_check_reads_each_sentence_that_gives_one() -> None:
    text = (
        "One pool size for this machine: 4 server connections. … Starting pool size: 8 (8.0 per server core)"
    )
    assert {size for _, size in pool_sizes(text)} == {4, 8}
    assert pool_sizes("A pool near 4.0 connections per server core (4 here), anywhere from 4 to 8") == [
        ("A pool near 4.0 connections per server core (4 here)", 4)
    ]


@pytest.mark.mkdocs
def test_a_machine_page_gives_one_pool_size(built_site: Path) -> None:
    pages = sorted(built_site.glob("machines/*/index.html"))
    assert pages
    found = {}
    for page in pages:
        sizes = pool_sizes(plain(page.read_text(encoding="utf-8")))
        if len({size for _, size in sizes}) > 1:
            found[page.parent.name] = sizes
    assert found == {}
