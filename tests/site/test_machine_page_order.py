"""Where an article's machine picker starts and where its links land, and what a machine's page opens with.

The picker's default is the machine with the most of the article's data (its measured windows of the
article's experiments), ties by name, not the first by name; a machine with the article's data is linked to
the article's section of its page, and the article's verdicts to that section's verdicts. A machine's page
opens with what it measured: the articles none of whose experiments it ran, the experiments it did not run
and the poolers not available on it are one line at its end, after every section it has data for.

Rendered from the committed facts (tests/fixtures/facts_before): four machines, each with other experiments.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest

from connlab.site.layout import default_option, machine_section_url, picker_options
from connlab.site.render.renderer import PageRenderer
from support.paths import FACTS_BEFORE

SLUGS = ["too-many-connections", "pool-sizing", "four-poolers", "pgbouncer-trade"]


@pytest.fixture(scope="module")
def renderer(tmp_path_factory: pytest.TempPathFactory) -> PageRenderer:
    data = tmp_path_factory.mktemp("data")
    shutil.copytree(FACTS_BEFORE, data, dirs_exist_ok=True)
    return PageRenderer(data, tmp_path_factory.mktemp("docs"))


def most_data(slug: str) -> tuple[str, dict[str, int]]:
    """The machine with the most windows of the article's experiments (ties by name), from the facts."""
    experiments = set(json.loads((FACTS_BEFORE / "claims" / f"{slug}.json").read_text())["experiments"])
    windows: dict[str, int] = {}
    for record in json.loads((FACTS_BEFORE / "facts" / "machines.json").read_text())["measured"]:
        if record["experiment"] in experiments:
            windows[record["machine"]] = windows.get(record["machine"], 0) + record["windows"]
    return min(windows, key=lambda m: (-windows[m], m)), windows


def test_the_default_is_the_machine_with_most_windows_ties_by_name() -> None:
    machines = [{"id": "a-box"}, {"id": "b-box"}, {"id": "c-box"}, {"id": "published-x", "published": True}]
    options = picker_options("articles/x.md", machines, {"b-box": 40, "c-box": 40, "a-box": 3}, "x")
    assert default_option(options) == {"id": "b-box", "url": "../../machines/b-box/#x", "default": True}
    assert [o["id"] for o in options] == ["a-box", "b-box", "c-box"]  # listed by name, as before
    # No data for the article at all: the first by name, at its page's top, no entry marked.
    bare = picker_options("articles/x.md", machines, {}, "x")
    assert default_option(bare) == {"id": "a-box", "url": "../../machines/a-box/"}
    assert not any("default" in option for option in bare)
    # An article's verdicts on a machine's page, where the machine has the article's section; else the top.
    assert machine_section_url("../../machines/b-box/#x") == "../../machines/b-box/#x-claims"
    assert machine_section_url("../../machines/a-box/") == "../../machines/a-box/"


@pytest.mark.parametrize("slug", SLUGS)
def test_each_articles_picker_defaults_to_the_machine_with_most_of_its_data(
    renderer: PageRenderer, slug: str
) -> None:
    expected, windows = most_data(slug)
    assert renderer.article_windows(slug) == windows
    page = f"articles/{slug}.md"
    options = picker_options(page, renderer.machines, renderer.article_windows(slug), slug)
    text = renderer.env.get_template("_machine_picker.md.j2").render(picker=options, page=page)
    # Without JavaScript the link opens the default machine, at the article's section of its page.
    link = re.search(r'<a class="connlab-picker__open md-button" href="([^"]+)">Open ([^<]+)</a>', text)
    assert link and link.groups() == (f"../../machines/{expected}/#{slug}", expected)
    listed = json.loads(re.search(r"data-machines='([^']*)'", text)[1])  # type: ignore[index]
    assert [o["id"] for o in listed if o.get("default")] == [expected]
    # Machines without the article's data lead to their page's top: it has no section for the article.
    for option in listed:
        anchored = option["url"].endswith(f"/#{slug}")
        assert anchored == bool(windows.get(option["id"])), option


def test_four_poolers_does_not_default_to_a_machine_that_ran_none_of_it() -> None:
    expected, windows = most_data("four-poolers")
    assert expected != "amd-epyc-2c-24g" and "amd-epyc-2c-24g" not in windows


def machine_page_html(renderer: PageRenderer, machine: str) -> str:
    markdown = renderer.render_machine_page(machine, SLUGS)
    page = renderer.fragments.convert(f"machines/{machine}.md", markdown)
    return renderer.chart_book.resolve({Path("page.html"): page})[Path("page.html")]


def paragraphs_text(page: str) -> list[str]:
    """Each block's text (paragraphs, headings, cells), scripts left out."""
    page = re.sub(r"<script\b.*?</script>", "", page, flags=re.S)
    blocks = re.split(r"<(?:p|h[1-6]|tr|li)\b[^>]*>", page)
    return [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", b)).split()) for b in blocks]


def test_a_machine_page_opens_with_what_it_measured_and_ends_with_what_it_did_not_run(
    renderer: PageRenderer,
) -> None:
    # amd-epyc-2c-24g ran the sweeps and connection experiments, none of Four poolers' or PgBouncer's trade's.
    page = machine_page_html(renderer, "amd-epyc-2c-24g")
    headings = re.findall(r'<h2 class="connlab-from" id="([^"]+)"', page)
    assert headings == ["too-many-connections", "pool-sizing"]  # the site's order; nothing else
    blocks = paragraphs_text(page)
    not_run = [i for i, b in enumerate(blocks) if b.startswith("Not run here:")]
    assert len(not_run) == 1, "one line names what was not run"
    line = blocks[not_run[0]]
    assert not_run[0] == max(i for i, b in enumerate(blocks) if b), "the line is the page's last"
    # It names the experiments not run, the articles with nothing from here and the poolers missing.
    for experiment in ("pooler-churn", "pooler-memory", "pgbouncer-trade", "too-many-clients"):
        assert experiment in line
    assert "Four poolers compared and PgBouncer's trade have nothing from this machine" in line
    assert "Poolers not available on this machine: odyssey, pgcat." in line
    assert 'id="not-run"' in page
    # Before it, no section of what was not run, no pooler "not available", no verdict row of a claim whose
    # experiment was not run here (a line under the table counts them).
    before = " ".join(blocks[: not_run[0]])
    assert not re.search(r"\b(odyssey|pgcat)\b[^.]*not available on this machine", before)
    assert "From Four poolers compared" not in before and "From PgBouncer's trade" not in before
    tables = [t for t in re.findall(r"<table\b.*?</table>", page, re.S) if "<th>amd-epyc-2c-24g<br>" in t]
    assert tables, "the machine's verdict tables"
    for table in tables:
        for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]:
            last = re.split(r"<td[^>]*>", row)[-1]
            assert not last.startswith('<span class="verdict verdict--not-run"'), row[:200]
    assert "3 more of this article's claims rest on experiments not run here" in before
    # Each article's sections have anchors of their own, the verdicts one the articles link to.
    for anchor in ("pool-sizing-claims", "too-many-connections-claims", "pool-sizing-littles-law"):
        assert f'id="{anchor}"' in page, anchor


def test_a_machine_that_ran_the_pooler_experiments_lists_its_poolers_and_not_the_missing_ones(
    renderer: PageRenderer,
) -> None:
    page = machine_page_html(renderer, "amd-epyc-2c-24g-2")
    assert re.findall(r'<h2 class="connlab-from" id="([^"]+)"', page) == [
        "too-many-connections",
        "four-poolers",
        "pgbouncer-trade",
    ]
    blocks = paragraphs_text(page)
    (line,) = [b for b in blocks if b.startswith("Not run here:")]
    assert "Pool sizing, measured has nothing from this machine" in line
    assert "odyssey, pgcat" in line
    # The poolers table has the ones measured here; the missing ones only on the last line.
    table_rows = [b for b in blocks if re.match(r"(odyssey|pgcat|pgbouncer|pgpool) ", b)]
    assert {row.split()[0] for row in table_rows} >= {"pgbouncer", "pgpool"}
    assert all(not row.startswith(("odyssey ", "pgcat ")) for row in table_rows)
    missing = [
        b for b in blocks if "not available on this machine" in b and re.search(r"\b(odyssey|pgcat)\b", b)
    ]
    assert missing == [line]


def test_every_link_from_an_article_to_a_machine_section_finds_it(renderer: PageRenderer) -> None:
    """The articles' links to machine pages land on a section those pages have."""
    ids = {
        str(m["id"]): set(re.findall(r'\bid="([^"]+)"', machine_page_html(renderer, str(m["id"]))))
        for m in renderer.machines
        if not m.get("published")
    }
    found = 0
    for slug in SLUGS:
        text = renderer.render(f"{slug}.md.j2", f"articles/{slug}.md", slug)
        links = re.findall(r'href="\.\./\.\./machines/([^/"#]+)/#([^"]+)"', text)
        links += re.findall(r"\]\(\.\./machines/([^/)#]+)\.md#([^)]+)\)", text)  # Markdown, for MkDocs' hook
        for machine, anchor in links:
            found += 1
            assert anchor in ids[machine], (slug, machine, anchor)
    assert found > 0
