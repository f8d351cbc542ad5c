"""No number typed into the site's prose that the data, the specs or the code should give: every number left
in a template once its Jinja, its code and its links are taken out is one of the kinds a writer may type
(an ordinal, a year, a version, a rule's number, a seed's published figure), or is listed below with why.

A measured figure, a spec's setting (clients, seconds, passes) or a threshold the code applies reaches a
page through a variable; a number found here that is none of these fails with its file, its line and the
words around it.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path

import yaml

from connlab import paths
from support.paths import REPO_ROOT

SITE_SRC = REPO_ROOT / "site_src"
TEMPLATES = sorted(path for path in SITE_SRC.rglob("*") if path.name.endswith((".md.j2", ".md")))

# What is not prose: Jinja (expressions, statements, comments), code (fenced, indented in a list or not, and
# inline), link targets, URLs and HTML tags.
NOT_PROSE = re.compile(
    r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}|^[ \t]*```.*?^[ \t]*```|`[^`\n]*`|\]\([^)]*\)|https?://\S+|<[^>\n]*>",
    re.S | re.M,
)
NUMBER = re.compile(r"(?<![\w.$-])\d+(?:[.,]\d+)*(?![\w-])")
# Numbers a writer types: list items and numbered headings; years; versions after a program's name; the
# article's own rules; a file mode; a core's index; an exit status.
ORDINAL = re.compile(r"^[ \t]*(?:#+[ \t]*)?$")
PROGRAMS = r"PgBouncer|PostgreSQL|Odyssey|PgPool-II|pgcat|pgbench|Python|Debian|Ubuntu"
BEFORE = {
    "version": re.compile(rf"(?:{PROGRAMS})(?: (?:before|from|since|up to))? $"),
    "rule": re.compile(r"\brules? (?:\d+ to )?$|\brule \d+\" to \"rule $|\brules \d+ to $"),
    "mode": re.compile(r"\bmode $"),
    "core index": re.compile(r"\bcore $"),
    "exit status": re.compile(r"\bstatus $"),
}
YEAR = re.compile(r"(?:19|20)\d\d")

# Numbers that stay typed, each with why: (template, number, a few words just before it).
KEPT = {
    ("contributing.md.j2", "8", "the rest: "): "a worked example of the half budget, on a 16-core machine",
    ("contributing.md.j2", "8", "the rest: 8 + "): "the same example",
    ("contributing.md.j2", "64", "machine measures "): "a worked example of 4x clients, on 16 cores",
    ("contributing.md.j2", "8", "one measures "): "the same example, on 2 cores",
    ("pool-sizing.md.j2", "0", "with κ = "): "the model's parameter at zero, a property of the formula",
    ("pool-sizing.md.j2", "2", "at (cores × "): "the quoted rule of thumb, as the seed quotes it",
    ("pool-sizing.md.j2", "2", "cores × "): "the same rule of thumb",
    ("pool-sizing.md.j2", "1", "predicted falls below "): "a ratio's neutral value",
    ("pgbouncer-trade.md.j2", "50", "crowd (here, "): "the seed's 400 clients on its 8 cores, per core",
    ("too-many-connections.md.j2", "20", "a pool of "): "the seed's own setup, as it describes it",
    ("pgbouncer-trade.md.j2", "8", "a multiple of its "): "the seed's machine's cores (SOURCES)",
    ("too-many-connections.md.j2", "10", "stayed within "): "the aggregation's threshold (SOURCES)",
}
# Kept numbers that a file of the project defines, and the text there that must still say them: a change
# there fails this test until the page says the same.
SOURCES = {
    ("pgbouncer-trade.md.j2", "8", "a multiple of its "): (
        "tests/fixtures/results/published-pgbouncer-tradeoffs/machine.yaml",
        r"^cores: 8$",
    ),
    ("too-many-connections.md.j2", "10", "stayed within "): (
        "experiments/clients-sweep/aggregate.sql",
        r"WHERE tps_share >= 0\.9$",
    ),
}


def published_figures() -> set[str]:
    """Every figure the seeds print, as the published folders hold them: their rows' values and client
    counts, and their machines' cores."""
    figures: set[str] = set()
    for folder in sorted(paths.RESULTS_DIR.glob("published-*")):
        with (folder / "published.csv").open(newline="") as handle:
            for row in csv.DictReader(handle):
                figures.update(_forms(row["value"]) | _forms(row["clients"]))
        machine = yaml.safe_load((folder / "machine.yaml").read_text())
        for field in ("cores", "threads", "server_cores"):
            if machine.get(field) is not None:
                figures.update(_forms(str(machine[field])))
    return figures


def _forms(text: str) -> set[str]:
    """A figure as prose may write it: as stored, and with thousands separators."""
    if not re.fullmatch(r"-?\d+(\.\d+)?", text.strip()):
        return set()
    value = float(text)
    plain = f"{value:g}" if value != int(value) else str(int(value))
    return {text.strip(), plain, f"{value:,.0f}" if value == int(value) else plain}


def typed_numbers(path: Path) -> Iterator[tuple[int, str, str, str]]:
    """(line, number, the prose before it on its line, the prose after it) for each number in the
    template's prose."""
    text = path.read_text(encoding="utf-8")
    prose = NOT_PROSE.sub(lambda match: re.sub(r"[^\n]", " ", match.group()), text)  # lines kept
    for match in NUMBER.finditer(prose):
        start_of_line = prose.rfind("\n", 0, match.start()) + 1
        end_of_line = prose.find("\n", match.end())
        line = prose.count("\n", 0, match.start()) + 1
        before = re.sub(r"\s+", " ", prose[start_of_line : match.start()])
        after = prose[match.end() : end_of_line if end_of_line >= 0 else len(prose)]
        yield line, match.group(), before, after


def why_typed(path: Path, number: str, before: str, after: str, published: set[str]) -> str | None:
    """Why the number may stay typed, or None."""
    if ORDINAL.match(before) and after.startswith("."):
        return "an ordinal"
    if YEAR.fullmatch(number):
        return "a year"
    for kind, pattern in BEFORE.items():
        if pattern.search(before):
            return kind
    # A small count (10 clients, 50) is too common to tell a seed's from a spec's; a figure with three digits
    # or a decimal is the seed's.
    distinctive = "." in number or len(re.sub(r"\D", "", number)) >= 3
    if distinctive and (number in published or number.replace(",", "") in published):
        return "a seed's published figure"
    for (name, kept, words), why in KEPT.items():
        if path.name == name and number == kept and before.endswith(words):
            return why
    return None


def test_no_template_types_a_number_the_data_or_the_code_should_give() -> None:
    published = published_figures()
    found, used = [], set()
    for path in TEMPLATES:
        for line, number, before, after in typed_numbers(path):
            if why_typed(path, number, before, after, published) is None:
                found.append(f"{path.relative_to(SITE_SRC)}:{line}: {number} after {before[-40:]!r}")
            used.update(key for key in KEPT if (path.name, number) == key[:2] and before.endswith(key[2]))
    assert found == [], "typed numbers:\n" + "\n".join(found)
    assert used == set(KEPT), f"listed as kept but no longer in a template: {sorted(set(KEPT) - used)}"


def test_a_kept_number_is_what_its_source_still_says() -> None:
    for key, (source, pattern) in SOURCES.items():
        assert re.search(pattern, (REPO_ROOT / source).read_text(), re.M), (
            f"{key}: {source} no longer says it"
        )


def test_the_check_finds_a_typed_number_and_passes_what_it_should(tmp_path: Path) -> None:
    """The check itself: a spec's number typed into prose is found; Jinja, code, ordinals, versions, years,
    rules and published figures are not."""
    page = tmp_path / "page.md.j2"
    page.write_text(
        "1. **First**: {{ plan.profile.duration_s }} s windows, `make run EXP=x SERVER_CORES=16`,\n"
        '   PgBouncer before 1.21, in 2024, rule 4, [a](b/3.md) and <a href="#s2">a link</a>.\n'
        "   ```bash\n   make run PROFILE=full   # 15 s\n   ```\n"
        "Three passes of 15 seconds, and 151,419 tps as the seed printed.\n"
    )
    flagged = [
        (line, number)
        for line, number, before, after in typed_numbers(page)
        if why_typed(page, number, before, after, {"151419", "151,419"}) is None
    ]
    assert flagged == [(6, "15")]
