"""Every page's text as a reader sees it (a real HTML parser's text of the built page, scripts, styles and
code left out): no raw Markdown table, no "(s)" left to the reader, no sentence glued to the next, "the
source article" and never "seed", and the source repository linked from every page where the build has one
(a setting, or the clone's origin remote: connlab.site.repository) and from none where it has none."""

from __future__ import annotations

import re
from collections.abc import Callable
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import pytest

from connlab.site.repository import browsable, origin_remote, repository_name
from support.built_site import TEST_REPO_PAGE

# Elements whose text is not prose: scripts, styles, code and drawings.
NOT_PROSE = frozenset({"script", "style", "pre", "code", "svg", "template", "noscript"})
# Elements that end a line of text: their text never runs into the next element's.
BLOCKS = frozenset(
    {"address", "article", "aside", "blockquote", "br", "caption", "dd", "details", "div", "dl", "dt"}
    | {"figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "label"}
    | {"li", "main", "nav", "ol", "option", "p", "section", "select", "summary", "table", "td", "th", "tr"}
    | {"ul", "button", "input"}
)
VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)


class PageText(HTMLParser):
    """A page's visible prose, a line per block, and the text of each table cell."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self._open: list[str] = []
        self._skipping = 0
        self._parts: list[str] = []
        self._cell: list[str] | None = None
        self.cells: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in BLOCKS:
            self._parts.append("\n")
        if tag in ("td", "th"):
            self._cell = []
        if tag in VOID:
            return
        self._open.append(tag)
        if tag in NOT_PROSE:
            self._skipping += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in BLOCKS:
            self._parts.append("\n")
        if tag in ("td", "th") and self._cell is not None:
            self.cells.append("".join(self._cell).strip())
            self._cell = None
        if tag in VOID or tag not in self._open:
            return
        # Close what the page left open inside it, as a browser does.
        while self._open:
            closed = self._open.pop()
            if closed in NOT_PROSE:
                self._skipping -= 1
            if closed == tag:
                break

    def handle_data(self, data: str) -> None:
        if self._skipping:
            return
        self._parts.append(data)
        if self._cell is not None:
            self._cell.append(data)

    @property
    def text(self) -> str:
        return "".join(self._parts)


def page_text(html: str) -> PageText:
    parser = PageText()
    parser.feed(html)
    parser.close()
    return parser


def pages(site: Path) -> list[Path]:
    found = sorted(site.rglob("*.html"))
    assert len(found) > 5 and any(p.parent.parent.name == "machines" for p in found), site
    return found


def prose(parsed: PageText) -> str:
    return parsed.text


def offences(site: Path, found: re.Pattern[str], text_of: Callable[[PageText], str] = prose) -> list[str]:
    """Each page's matches as "page: …context…", for a failure a reader can act on."""
    lines = []
    for page in pages(site):
        text = text_of(page_text(page.read_text(encoding="utf-8")))
        for match in found.finditer(text):
            context = text[max(0, match.start() - 40) : match.end() + 40].replace("\n", "⏎")
            lines.append(f"{page.relative_to(site)}: …{context}…")
    return lines


# A Markdown table's separator row, as Python-Markdown leaves it when the table is not a block of its own.
RAW_TABLE = re.compile(r"\|\s*:?-{3,}:?\s*\|")
# A separator row read as a table's body row: two tables with no blank line between them.
SEPARATOR_CELL = re.compile(r"^:?-{3,}:?$")


@pytest.mark.mkdocs
def test_no_page_shows_a_markdown_table_as_text(built_site: Path) -> None:
    assert offences(built_site, RAW_TABLE) == []
    merged = [
        str(page.relative_to(built_site))
        for page in pages(built_site)
        if any(SEPARATOR_CELL.match(cell) for cell in page_text(page.read_text(encoding="utf-8")).cells)
    ]
    assert merged == []


@pytest.mark.mkdocs
def test_no_page_leaves_a_plural_to_the_reader(built_site: Path) -> None:
    """ "1 core(s)": the number is on the page, so is the word that agrees with it."""
    assert offences(built_site, re.compile(r"\w\(s\)")) == []


# What a full stop or a colon without a space after it may belong to: an address, a file name, a version or
# a decimal, a wait event (IO:WALSync, Lock:tuple). Each is read as one neutral word, so that a sentence
# glued to one ("as measured:machine.yaml") still shows.
NOT_SENTENCES = re.compile(
    r"\b[a-z][a-z0-9+.-]*://[^\s<>\"]+"  # an address
    # a file name
    r"|[\w/-]+(?:\.[\w-]+)*\.(?:yaml|yml|csv|json|sql|sh|ini|conf|md|py|html|js|txt|log|j2|svg|gz)\b"
    r"|\b\d+(?:\.\d+)+"  # a version or a decimal
    r"|\b[A-Z][A-Za-z]*:[A-Za-z]+"  # a wait event
)
NEUTRAL = "name"


def neutral(text: str) -> str:
    return NOT_SENTENCES.sub(NEUTRAL, text)


# A sentence run into the next: "request.The", "none).Where"; "as measured:machine", where a lowercase
# word's colon has no space after it.
GLUED = re.compile(r"[a-z0-9)][.:][A-Z][a-z]|\b[a-z]{2,}\)?:[a-z]{2,}")


@pytest.mark.mkdocs
def test_every_sentence_is_spaced_from_the_next(built_site: Path) -> None:
    assert offences(built_site, GLUED, lambda parsed: neutral(parsed.text)) == []


def test_the_glue_check_finds_glue_and_spares_names() -> None:
    def glued(text: str) -> list[str]:
        return GLUED.findall(neutral(text))

    assert glued("an application that connects per request.The source article's own figures")
    assert glued("so it has none).Where throughput has flattened")
    assert glued("The raw files, as measured:machine.yaml, pg-versions/full.csv")
    spared = (
        "See https://example.org/a.B/c:D and raw/a-box/machine.yaml. PostgreSQL 15.18 (Debian 15.18-0) waits "
        "on IO:WALSync, Client:ClientRead and Lock:tuple; running=N;Type:Event=N. It ends: Then 1.5.2."
    )
    assert glued(spared) == []


SEED = re.compile(r"(?i)\bseeds?\b")


@pytest.mark.mkdocs
def test_pages_say_the_source_article_not_seed(built_site: Path) -> None:
    """A reader was never told what a seed is: the pages say "the source article"."""
    assert offences(built_site, SEED) == []


# Material's link to the repository, in the header (and again in the menu a phone opens).
REPOSITORY_LINK = re.compile(r'<a href="(?P<url>[^"]*)"[^>]*class="md-source"')


def repository_links(site: Path) -> dict[str, set[str]]:
    return {
        str(page.relative_to(site)): set(REPOSITORY_LINK.findall(page.read_text(encoding="utf-8")))
        for page in pages(site)
    }


@pytest.mark.mkdocs
def test_every_page_links_the_clones_repository_or_none_does(built_site: Path) -> None:
    """Without REPO_URL the build links to the clone's origin remote, from every page (the machine pages,
    stamped from the shell, too); a clone without one links to nothing."""
    remote = origin_remote()
    expected = {browsable(remote)} if remote and browsable(remote) else set()
    links = repository_links(built_site)
    assert {page: found for page, found in links.items() if found != expected} == {}
    if not expected:
        home = (built_site / "index.html").read_text(encoding="utf-8")
        assert "git clone" not in home


@pytest.mark.mkdocs
def test_a_build_with_repo_url_links_every_page_to_it(built_site_with_url: Path) -> None:
    """REPO_URL as a clone over ssh gives it: every page links its https address, named owner/name in the
    header; the home page's `make all` and the contributing page's `git clone` name it; no page links to
    an editor, and the header asks the host's API for nothing (no data-md-component="source")."""
    links = repository_links(built_site_with_url)
    assert {page: found for page, found in links.items() if found != {TEST_REPO_PAGE}} == {}
    home = (built_site_with_url / "index.html").read_text(encoding="utf-8")
    assert repository_name(TEST_REPO_PAGE) == "lab/connection-lab"
    assert "lab/connection-lab" in page_text(home).text
    assert 'data-md-component="source"' not in home and "md-content__button" not in home
    assert f"git clone {TEST_REPO_PAGE} connection-lab" in code_text(home)
    contributing = code_text(
        (built_site_with_url / "contributing" / "index.html").read_text(encoding="utf-8")
    )
    assert contributing.count(f"git clone {TEST_REPO_PAGE} connection-lab") == 2
    assert "<this repository>" not in contributing


def code_text(html: str) -> str:
    """A page's text with its code blocks' (highlighted: a span per token) as a reader copies it."""
    return unescape(re.sub(r"<[^>]+>", "", html))


@pytest.mark.parametrize(
    ("remote", "page"),
    [
        ("git@github.example:owner/repo.git", "https://github.example/owner/repo"),
        ("ssh://git@git.example:2222/owner/repo.git", "https://git.example/owner/repo"),
        ("https://user:secret@git.example/owner/repo.git", "https://git.example/owner/repo"),
        ("https://git.example/owner/repo/", "https://git.example/owner/repo"),
        ("git://git.example/owner/repo", "https://git.example/owner/repo"),
        ("/srv/git/repo.git", None),
        ("../repo", None),
        ("file:///srv/git/repo.git", None),
    ],
)
def test_a_remote_is_given_as_the_address_a_browser_opens(remote: str, page: str | None) -> None:
    assert browsable(remote) == page


def test_the_origin_is_read_from_the_clones_config(tmp_path: Path) -> None:
    """From the config file, a clone's or a worktree's (no git process: a render starts none)."""
    assert origin_remote(tmp_path) == ""
    git = tmp_path / "main" / ".git"
    git.mkdir(parents=True)
    (git / "config").write_text(
        '[core]\n\tbare = false\n[remote "upstream"]\n\turl = https://a.example/x/y\n'
        '[remote "origin"]\n\turl = git@b.example:x/y.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
    )
    assert origin_remote(tmp_path / "main") == "git@b.example:x/y.git"
    worktree = tmp_path / "tree"
    (git / "worktrees" / "tree").mkdir(parents=True)
    (git / "worktrees" / "tree" / "commondir").write_text("../..\n")
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {git / 'worktrees' / 'tree'}\n")
    assert origin_remote(worktree) == "git@b.example:x/y.git"
    (git / "config").write_text("[core]\n\tbare = false\n")
    assert origin_remote(tmp_path / "main") == ""
