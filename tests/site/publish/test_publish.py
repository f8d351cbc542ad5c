"""connlab.site.publish.build: MkDocs builds the human pages and the shell; each machine page is the
shell stamped with its fragment, written again only when either changed; a machine gone leaves the site;
machine pages are in the search index by their title, summary line, headings and own table words.
connlab.site.publish.hooks:
what MkDocs is asked through its hooks, and the versions they were written for."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml
from mkdocs.exceptions import PluginError

from connlab.errors import LabError
from connlab.site.layout import (
    MACHINE_PAGES_DIR,
    RAW_CHANGED,
    RAW_SUBDIR,
    SHELL_MARKDOWN,
    SHELL_PAGE,
    code_block,
    machine_fragment,
    stamped_sources,
)
from connlab.site.publish.build import STAMPED_INDEX, publish, stamp, summary_line, sync_raw
from connlab.site.publish.hooks import (
    WRITTEN_FOR,
    machine_links,
    with_code_blocks,
    without_instant_navigation,
)
from connlab.site.render.code_blocks import write_code_blocks
from connlab.site.render.fragments import markdown_extensions
from connlab.site.render.renderer import PageRenderer
from support.built_site import TEST_SITE_URL
from support.paths import REPO_ROOT

REPO = REPO_ROOT
HOOKS = REPO / "scripts" / "connlab" / "site" / "publish" / "hooks.py"
CONFIG = f"""site_name: Test
theme:
  name: material
plugins:
  - search
hooks:
  - {HOOKS}
not_in_nav: |
  /machines/*.md
nav:
  - index.md
  - machines.md
"""


def fragment(name: str, line: str = "a fast box") -> str:
    home = '<p><a href="../../">home</a></p>'
    return f'<h1 id="{name}">{name}</h1>\n<p><strong>{name}</strong>: {line}.</p>\n{home}\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "mkdocs.yml").write_text(CONFIG)
    docs = tmp_path / "docs"
    (docs / "machines").mkdir(parents=True)
    (docs / "index.md").write_text("# Home\n\nSee [the machines](machines.md).\n")
    (docs / "machines.md").write_text("# Machines\n\n| machine |\n|---|\n| [a-box](machines/a-box.md) |\n")
    (docs / SHELL_PAGE).write_text(SHELL_MARKDOWN)
    (stamped_sources(docs) / MACHINE_PAGES_DIR).mkdir(parents=True)
    for name in ("a-box", "b-box"):
        (stamped_sources(docs) / machine_fragment(name)).write_text(fragment(name))
    return tmp_path


def build(project: Path) -> str:
    return publish(project / "mkdocs.yml", project / "docs", project / "site", project / "staging")


def page(project: Path, name: str) -> str:
    return (project / "site" / "machines" / name / "index.html").read_text()


@pytest.mark.mkdocs
def test_a_machine_page_is_the_shell_with_its_title_and_content(project: Path) -> None:
    assert build(project).endswith("2 machine page(s) stamped")
    a_box = page(project, "a-box")
    assert "<title>a-box - Test</title>" in a_box
    assert fragment("a-box") in a_box
    assert "connlab-machine-page" not in a_box and "_shell" not in a_box
    # The theme, navigation and assets around it, linked from the machine page's depth.
    assert 'href="../../assets/stylesheets/' in a_box and 'class="md-nav' in a_box
    # The shell itself is not a page of the site; the Machines page links to the machine page.
    assert not (project / "site" / "machines" / "_shell").exists()
    assert 'href="a-box/"' in (project / "site" / "machines" / "index.html").read_text()


@pytest.mark.mkdocs
def test_only_a_changed_fragment_is_stamped_again_and_a_gone_machine_leaves(project: Path) -> None:
    build(project)
    b_box = project / "site" / "machines" / "b-box" / "index.html"
    before = b_box.stat().st_mtime_ns
    (stamped_sources(project / "docs") / machine_fragment("a-box")).write_text(
        fragment("a-box", "a faster box")
    )
    assert build(project).endswith("1 machine page(s) stamped")
    assert "a faster box" in page(project, "a-box") and b_box.stat().st_mtime_ns == before
    (stamped_sources(project / "docs") / machine_fragment("b-box")).unlink()
    build(project)
    assert not (project / "site" / "machines" / "b-box").exists()
    assert set(json.loads((project / "site" / STAMPED_INDEX).read_text())) == {"a-box"}


@pytest.mark.mkdocs
def test_machine_pages_are_in_the_search_index_by_summary_headings_and_own_table_words(project: Path) -> None:
    """One entry per machine page (connlab.site.publish.search): its summary line, its headings' words, and
    its tables' words that no page MkDocs built holds ("machine" is in the Machines page's table) and that
    are no figure."""
    section = (
        '<h2 id="s">Where throughput peaks</h2>\n'
        "<table><tr><th>machine</th><td>LWLock 1,234</td></tr></table>\n"
    )
    (stamped_sources(project / "docs") / machine_fragment("a-box")).write_text(fragment("a-box") + section)
    build(project)
    index = json.loads((project / "site" / "search" / "search_index.json").read_text())
    machines = [doc for doc in index["docs"] if doc["location"].startswith("machines/a-box")]
    text = "a-box: a fast box. Where throughput peaks LWLock"
    assert machines == [{"location": "machines/a-box/", "title": "a-box", "text": text}]
    assert any(doc["location"] == "machines/" for doc in index["docs"])  # the Machines page itself


@pytest.mark.mkdocs
def test_a_link_to_a_machine_without_a_page_stops_the_build_with_one_line(project: Path) -> None:
    (project / "docs" / "index.md").write_text("# Home\n\nSee [c-box](machines/c-box.md).\n")
    with pytest.raises(LabError, match=r"index\.md: a link to machines/c-box\.md, a machine without a page"):
        build(project)


@pytest.mark.mkdocs
def test_a_broken_link_stops_the_build_with_one_line(project: Path) -> None:
    (project / "docs" / "index.md").write_text("# Home\n\nSee [nothing](nowhere.md).\n")
    with pytest.raises(LabError, match="mkdocs: Aborted with 1 warnings in strict mode"):
        build(project)


def test_links_to_machine_pages_are_written_as_mkdocs_would_link_them(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (stamped_sources(docs) / MACHINE_PAGES_DIR).mkdir(parents=True)
    (stamped_sources(docs) / machine_fragment("a-box")).write_text("")
    text = "[a-box](machines/a-box.md) and [b](../machines/a-box.md)"
    assert machine_links(text, "machines.md", docs).startswith('<a href="a-box/">a-box</a> and ')
    assert machine_links("[x](../machines/a-box.md)", "articles/a.md", docs) == (
        '<a href="../../machines/a-box/">x</a>'
    )
    # A link to a section of a machine's page keeps its anchor.
    assert machine_links("[x](../machines/a-box.md#tmc-versions)", "articles/a.md", docs) == (
        '<a href="../../machines/a-box/#tmc-versions">x</a>'
    )
    with pytest.raises(PluginError, match="a machine without a page"):
        machine_links("[x](machines/c.md)", "index.md", docs)


def test_links_to_raw_files_beside_the_docs_are_written_as_mkdocs_would_link_them(tmp_path: Path) -> None:
    """The raw downloads live beside the docs folder, where MkDocs does not look: a link to one is written
    as MkDocs would have written it, and a link to one render did not copy stops the build."""
    docs = tmp_path / "docs"
    (stamped_sources(docs) / RAW_SUBDIR / "a-box").mkdir(parents=True)
    (stamped_sources(docs) / RAW_SUBDIR / "a-box" / "machine.yaml").write_text("id: a-box\n")
    link = "[machine.yaml](../raw/a-box/machine.yaml)"
    assert (
        machine_links(link, "articles/a.md", docs)
        == '<a href="../../raw/a-box/machine.yaml">machine.yaml</a>'
    )
    assert (
        machine_links("[m](raw/a-box/machine.yaml)", "index.md", docs)
        == '<a href="raw/a-box/machine.yaml">m</a>'
    )
    with pytest.raises(PluginError, match=r"articles/a\.md: a link to \.\./raw/a-box/run\.csv, a raw file"):
        machine_links("[run](../raw/a-box/run.csv)", "articles/a.md", docs)


def test_stamping_replaces_the_shells_title_and_content_only() -> None:
    shell = (
        '<html><head><title>connlab-machine-page-title - S</title></head><body><a href="../x/">x</a>'
        '<h1 id="connlab-machine-page-title">connlab-machine-page-title</h1>\n'
        "<p>connlab-machine-page-content</p><footer>f</footer></body></html>"
    )
    assert stamp(shell, "a<b", "<h1>A</h1>") == (
        '<html><head><title>a&lt;b - S</title></head><body><a href="../x/">x</a><h1>A</h1>'
        "<footer>f</footer></body></html>"
    )
    assert summary_line(fragment("a-box")) == "a-box: a fast box."
    assert summary_line("<h1>x</h1>") == ""


def test_the_hooks_are_those_of_the_versions_they_were_written_for() -> None:
    """publish.hooks uses MkDocs' hook API as these versions have it: moving to others is a decision,
    made by reading their changes and updating WRITTEN_FOR with pyproject.toml."""
    assert {package: version(package) for package in WRITTEN_FOR} == WRITTEN_FOR
    pinned = (REPO / "pyproject.toml").read_text()
    assert all(f'"{package}=={pin}"' in pinned for package, pin in WRITTEN_FOR.items())


# An address on this machine as a page would give its own (`make serve` and `mkdocs serve` serve at
# http://127.0.0.1:8000/, which mkdocs.yml once gave as the site's). The bare 127.0.0.1 is left to the
# seeds' scripts the articles quote (listen_addresses=127.0.0.1).
LOCAL_ADDRESS = re.compile(r"https?://(?:127\.0\.0\.1|localhost)|127\.0\.0\.1:\d")


def built_files(site: Path) -> list[Path]:
    """What a reader or a crawler of the site reads: its pages, its sitemap and its search index."""
    return [*sorted(site.rglob("*.html")), site / "sitemap.xml", site / "search" / "search_index.json"]


@pytest.mark.mkdocs
def test_the_default_build_names_no_address_and_loads_pages_plainly(built_site: Path) -> None:
    """Without SITE_URL no page, the sitemap or the search index names http://127.0.0.1 (nor any address: no
    canonical link, no sitemap entry), and Material's instant navigation is off (it needs the sitemap's
    entries)."""
    files = built_files(built_site)
    assert all(path.is_file() for path in files) and len(files) > 3
    naming = [
        str(path.relative_to(built_site)) for path in files if LOCAL_ADDRESS.search(path.read_text("utf-8"))
    ]
    assert naming == []
    home = (built_site / "index.html").read_text(encoding="utf-8")
    assert 'rel="canonical"' not in home
    assert "<loc>" not in (built_site / "sitemap.xml").read_text(encoding="utf-8")
    assert '"navigation.sections"' in home and '"navigation.instant"' not in home


@pytest.mark.mkdocs
def test_a_build_with_site_url_writes_it_as_canonical_link_and_in_the_sitemap(
    built_site_with_url: Path,
) -> None:
    """`make site SITE_URL=...`: each page's canonical link is its address under SITE_URL (a machine page's
    too, stamped from the shell), the sitemap lists them, and instant navigation is on."""
    home = (built_site_with_url / "index.html").read_text(encoding="utf-8")
    assert f'<link rel="canonical" href="{TEST_SITE_URL}">' in home
    assert '"navigation.instant"' in home
    machine = sorted((built_site_with_url / "machines").glob("*/index.html"))[0]
    assert (
        f'<link rel="canonical" href="{TEST_SITE_URL}machines/{machine.parent.name}/">'
        in machine.read_text(encoding="utf-8")
    )
    locs = re.findall(
        r"<loc>([^<]+)</loc>", (built_site_with_url / "sitemap.xml").read_text(encoding="utf-8")
    )
    assert TEST_SITE_URL in locs and all(loc.startswith(TEST_SITE_URL) for loc in locs)
    # Every machine page is listed, and the shell, never published, is not.
    pages = {
        f"{TEST_SITE_URL}machines/{page.parent.name}/" for page in machine.parent.parent.glob("*/index.html")
    }
    assert pages <= set(locs) and not [loc for loc in locs if "_shell" in loc]


@pytest.mark.mkdocs
def test_the_sitemap_lists_the_machine_pages_and_not_the_shell(project: Path) -> None:
    def locs() -> list[str]:
        xml = (project / "site" / "sitemap.xml").read_text(encoding="utf-8")
        assert gzip.decompress((project / "site" / "sitemap.xml.gz").read_bytes()).decode() == xml
        return re.findall(r"<loc>([^<]+)</loc>", xml)

    address = "https://example.org/lab/"
    publish(project / "mkdocs.yml", project / "docs", project / "site", project / "staging", address)
    assert sorted(locs()) == [
        address + page for page in ("", "machines/", "machines/a-box/", "machines/b-box/")
    ]
    (stamped_sources(project / "docs") / machine_fragment("b-box")).unlink()
    publish(project / "mkdocs.yml", project / "docs", project / "site", project / "staging", address)
    assert sorted(locs()) == [address + page for page in ("", "machines/", "machines/a-box/")]
    # Without an address MkDocs lists no page, and no machine page is added.
    build(project)
    assert locs() == []


def test_instant_navigation_and_its_extensions_are_what_a_site_without_address_drops() -> None:
    features = [
        "navigation.instant",
        "navigation.instant.progress",
        "navigation.sections",
        "content.tabs.link",
    ]
    assert without_instant_navigation(features) == ["navigation.sections", "content.tabs.link"]
    assert without_instant_navigation(["navigation.instantly"]) == ["navigation.instantly"]


def _raw(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


def test_raw_files_are_copied_whole_first_then_only_the_machines_render_listed(tmp_path: Path) -> None:
    """The site's raw downloads: all of them where the site has none; after that only the folders of the
    machines render listed as changed (a machine gone loses its folder), and the list goes once copied."""
    docs, site = tmp_path / "docs" / "raw", tmp_path / "site" / "raw"
    _raw(docs, {"a/machine.yaml": "a", "a/x/run.csv": "1", "b/machine.yaml": "b", RAW_CHANGED: '["a"]'})
    assert sync_raw(docs, site) == 3
    assert sorted(str(p.relative_to(site)) for p in site.rglob("*") if p.is_file()) == [
        "a/machine.yaml", "a/x/run.csv", "b/machine.yaml"
    ]  # fmt: skip
    assert not (docs / RAW_CHANGED).exists()
    # Changed without being listed: not compared, so not copied.
    _raw(docs, {"b/machine.yaml": "b, changed", "a/x/run.csv": "1, changed"})
    assert sync_raw(docs, site) == 0
    assert (site / "b" / "machine.yaml").read_text() == "b"
    shutil.rmtree(docs / "b")
    _raw(docs, {RAW_CHANGED: '["a", "b"]'})
    assert sync_raw(docs, site) == 1
    assert (site / "a" / "x" / "run.csv").read_text() == "1, changed"
    assert not (site / "b").exists() and not (docs / RAW_CHANGED).exists()


SCRIPT = 'for c in 1 2 4; do\n    pgbench -c "$c" -T 5 postgres  # a comment & <angle>\ndone'


def _box(body: str) -> str:
    return '??? example "Check it yourself"\n\n    Run it.\n\n' + "\n".join(
        "    " + line if line else line for line in body.splitlines()
    )


def _pre(page_html: str) -> str:
    found = re.search(r'<details class="example">.*?</details>', page_html, re.S)
    assert found, page_html[-2000:]
    return found.group(0)


@pytest.mark.mkdocs
def test_a_stamped_script_is_the_block_mkdocs_would_have_converted(project: Path) -> None:
    """An article's script is a placeholder in its Markdown and is put in after MkDocs built the page, as
    render converted it with mkdocs.yml's Markdown extensions: the page holds what MkDocs' own conversion of
    the fenced block gives, plain text with no span per word, and neither the Markdown nor the search index
    went through it."""
    names, options = markdown_extensions()
    extensions = [{name: options[name]} if name in options else name for name in names]
    config = yaml.safe_load(CONFIG.replace(f"  - {HOOKS}", f"  - '{HOOKS}'"))
    config |= {
        "markdown_extensions": extensions,
        "nav": ["index.md", "fenced.md", "stamped.md", "machines.md"],
    }
    (project / "mkdocs.yml").write_text(yaml.safe_dump(config))
    renderer = PageRenderer(project / "data", project / "docs")
    docs = project / "docs"
    (docs / "fenced.md").write_text("# Fenced\n\n" + _box(f"```text\n{SCRIPT}\n```") + "\n")
    placeholder = renderer._code_function(stamped=True)(SCRIPT, "text")
    assert re.fullmatch(r"<!-- connlab-code [0-9a-f]{64} -->", placeholder)
    (docs / "stamped.md").write_text("# Stamped\n\n" + _box(placeholder) + "\n")
    write_code_blocks(renderer.code_blocks, stamped_sources(docs))
    build(project)
    fenced = (project / "site" / "fenced" / "index.html").read_text()
    stamped = (project / "site" / "stamped" / "index.html").read_text()
    assert 'class="highlight"' in _pre(stamped) and "connlab-code" not in stamped
    assert _pre(stamped) == _pre(fenced)
    assert "<span class=" not in _pre(stamped)
    index = json.loads((project / "site" / "search" / "search_index.json").read_text())
    assert any("pgbench" in doc["text"] for doc in index["docs"] if doc["location"].startswith("fenced/"))
    assert not any(
        "pgbench" in doc["text"] for doc in index["docs"] if doc["location"].startswith("stamped/")
    )


def test_a_placeholder_is_replaced_alone_or_in_its_paragraph_and_one_without_a_file_stops_the_build(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    key = "a" * 64
    (stamped_sources(docs) / code_block(key)).parent.mkdir(parents=True)
    (stamped_sources(docs) / code_block(key)).write_text('<div class="highlight">x</div>\n')
    for wrapped in (f"<p><!-- connlab-code {key} --></p>", f"<!-- connlab-code {key} -->"):
        assert with_code_blocks(f"<main>{wrapped}</main>", "a.md", docs) == (
            '<main><div class="highlight">x</div></main>'
        )
    with pytest.raises(PluginError, match=r"articles/a\.md: a script render did not convert"):
        with_code_blocks(f"<!-- connlab-code {'b' * 64} -->", "articles/a.md", docs)


def test_code_blocks_are_converted_once_and_those_no_page_names_are_removed(tmp_path: Path) -> None:
    stamped = tmp_path / "docs-stamped"
    write_code_blocks({"k1": "```bash\necho one\n```"}, stamped)
    first = stamped / code_block("k1")
    assert 'class="highlight"' in first.read_text()
    written = first.stat().st_mtime_ns
    write_code_blocks({"k1": "```bash\necho one\n```", "k2": "```bash\necho two\n```"}, stamped)
    assert first.stat().st_mtime_ns == written  # the same key: the same block, not converted again
    write_code_blocks({"k2": "```bash\necho two\n```"}, stamped)
    assert not first.exists() and (stamped / code_block("k2")).is_file()
