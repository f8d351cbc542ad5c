"""connlab.site.publish: MkDocs builds clean when what wraps every page changed, else only the pages whose
Markdown changed plus the navigation's; stale machine pages and charts go; machine pages stay out of
search."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import ClassVar

import markdown
import psutil
import pytest
from material.plugins.search.plugin import Parser as SearchParser
from material.plugins.search.plugin import SearchPlugin
from mkdocs.config import load_config
from mkdocs.structure.pages import Page

from conftest import site_config
from connlab.interrupts import WorkerPool
from connlab.site import publish as publish_module
from connlab.site import workers as site_workers
from connlab.site.publish import CHROME_FILE, publish

CONFIG = """site_name: Test
docs_dir: docs
site_dir: site
theme:
  name: material
plugins:
  - search
not_in_nav: |
  /machines/*.md
nav:
  - index.md
  - machines.md
"""
MACHINE_PAGE = "---\nsearch:\n  exclude: true\n---\n\n# {name}\n\nThe figures of {name}.\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "mkdocs.yml").write_text(CONFIG)
    docs = tmp_path / "docs"
    (docs / "machines").mkdir(parents=True)
    (docs / "charts").mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the machines](machines.md).\n")
    (docs / "machines.md").write_text(
        "# Machines\n\n[a-box](machines/a-box.md), [b-box](machines/b-box.md)\n"
    )
    for name in ("a-box", "b-box"):
        (docs / "machines" / f"{name}.md").write_text(MACHINE_PAGE.format(name=name))
        (docs / "charts" / f"{name}.csv").write_text("clients,tps\n1,2\n")
    return tmp_path


def built(project: Path, page: str) -> Path:
    return project / "site" / page / "index.html"


def age(path: Path, seconds: float) -> None:
    """Set a file's time back, so that a rebuild shows as a newer time."""
    past = time.time() - seconds
    os.utime(path, (past, past))


@pytest.mark.mkdocs
def test_a_second_build_rebuilds_only_what_changed(project: Path) -> None:
    config = project / "mkdocs.yml"
    assert publish(config) == "clean"
    assert (project / "site" / CHROME_FILE).is_file()
    # The sources older than their pages, as after any build; the pages older than now.
    for source in (project / "docs").rglob("*.md"):
        age(source, 120)
    for page in ("machines/a-box", "machines/b-box", "machines", ""):
        age(built(project, page), 60)
    a_box, b_box = built(project, "machines/a-box"), built(project, "machines/b-box")
    before = {page: page.stat().st_mtime for page in (a_box, b_box)}

    (project / "docs" / "machines" / "b-box.md").write_text(MACHINE_PAGE.format(name="b-box, measured again"))
    assert publish(config) == "incremental"
    assert a_box.stat().st_mtime == before[a_box], "an unchanged machine page was built again"
    assert b_box.stat().st_mtime > before[b_box] and "measured again" in b_box.read_text()
    # The navigation's pages are built every time: the menu and the search index read them.
    assert built(project, "machines").stat().st_mtime > before[a_box]


@pytest.mark.mkdocs
def test_what_wraps_every_page_changing_makes_a_clean_build(project: Path) -> None:
    config = project / "mkdocs.yml"
    publish(config)
    (project / "docs" / "index.md").write_text("# Start here\n\nSee [the machines](machines.md).\n")
    assert publish(config) == "clean"  # a navigation title changed: every page's menu shows it
    config.write_text(CONFIG.replace("site_name: Test", "site_name: Renamed"))
    assert publish(config) == "clean"
    assert "Renamed" in built(project, "machines/a-box").read_text()


@pytest.mark.mkdocs
def test_the_projects_code_mkdocs_runs_changing_makes_a_clean_build(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page's HTML depends on the project's code MkDocs runs on it too (the Markdown extensions, the
    chart preloads): a page whose Markdown did not change must still be built again when that code did."""
    assert Path(publish_module.preloads.__file__) in publish_module.PAGE_CODE
    hook = tmp_path / "hook.py"
    hook.write_text("# one way\n")
    monkeypatch.setattr(publish_module, "PAGE_CODE", (*publish_module.PAGE_CODE, hook))
    config = project / "mkdocs.yml"
    publish(config)
    assert publish(config) == "incremental"
    hook.write_text("# another way\n")
    assert publish(config) == "clean"


@pytest.mark.mkdocs
def test_a_removed_machine_and_chart_leave_the_site(project: Path) -> None:
    config = project / "mkdocs.yml"
    publish(config)
    (project / "docs" / "machines" / "b-box.md").unlink()
    (project / "docs" / "charts" / "b-box.csv").unlink()
    (project / "docs" / "machines.md").write_text("# Machines\n\n[a-box](machines/a-box.md)\n")
    assert publish(config) == "incremental"
    assert not (project / "site" / "machines" / "b-box").exists()
    assert not (project / "site" / "charts" / "b-box.csv").exists()
    assert (project / "site" / "charts" / "a-box.csv").is_file() and built(
        project, "machines/a-box"
    ).is_file()


@pytest.mark.mkdocs
def test_machine_pages_stay_out_of_the_search_index(project: Path) -> None:
    publish(project / "mkdocs.yml")
    index = json.loads((project / "site" / "search" / "search_index.json").read_text())
    locations = [doc["location"] for doc in index["docs"]]
    assert any(location.startswith("machines/") for location in locations)  # the Machines page itself
    assert not [location for location in locations if location.startswith("machines/a-box")]


@pytest.mark.mkdocs
def test_a_broken_link_stops_the_build_with_one_line(project: Path) -> None:
    (project / "docs" / "index.md").write_text("# Home\n\nSee [nothing](nowhere.md).\n")
    with pytest.raises(Exception, match="mkdocs: Aborted with 1 warnings in strict mode"):
        publish(project / "mkdocs.yml")
    assert not (project / "site" / CHROME_FILE).exists()


def _many_machines(project: Path, count: int) -> None:
    """Machine pages that link to an anchor of a navigation page, as the real ones link to articles."""
    (project / "docs" / "index.md").write_text("# Home\n\n## Figures\n\nSee [the machines](machines.md).\n")
    for number in range(count):
        (project / "docs" / "machines" / f"m-{number:02d}.md").write_text(
            MACHINE_PAGE.format(name=f"m-{number:02d}") + "\nSee [the figures](../index.md#figures).\n"
        )


class RecordingPool(WorkerPool):
    """The process pool, noting each worker's share of the pages."""

    shards: ClassVar[list[list[str]]] = []

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        self.shards.append(args[1])
        return super().submit(fn, *args, **kwargs)


def _site_files(site: Path) -> dict[str, bytes]:
    # The sitemap's gzip header carries the time it was written; the chrome digest hashes the configuration
    # file, which names the site folder.
    return {
        str(path.relative_to(site)): path.read_bytes()
        for path in sorted(site.rglob("*"))
        if path.is_file() and path.name not in ("sitemap.xml.gz", CHROME_FILE)
    }


@pytest.mark.mkdocs
def test_machine_pages_built_in_workers_are_the_pages_built_in_one_process(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _many_machines(project, 8)
    config = project / "mkdocs.yml"
    monkeypatch.setattr(site_workers, "MIN_PAGES_FOR_WORKERS", 10_000)
    publish(config)
    one_process = _site_files(project / "site")
    config.write_text(CONFIG.replace("site_dir: site", "site_dir: site-workers"))
    monkeypatch.setattr(site_workers, "MIN_PAGES_FOR_WORKERS", 2)
    monkeypatch.setattr(site_workers.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(publish_module, "WorkerPool", RecordingPool)
    RecordingPool.shards.clear()
    publish(config)
    shards = RecordingPool.shards
    workers = _site_files(project / "site-workers")
    machine_pages = ["machines/a-box.md", "machines/b-box.md", *(f"machines/m-{n:02d}.md" for n in range(8))]
    assert len(shards) == 2 and sorted(name for shard in shards for name in shard) == machine_pages
    assert workers.keys() == one_process.keys()
    assert [name for name in workers if workers[name] != one_process[name]] == []


def test_a_broken_anchor_on_a_machine_page_stops_a_build_in_workers(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _many_machines(project, 4)
    config = project / "mkdocs.yml"
    config.write_text(CONFIG + "validation:\n  links:\n    anchors: warn\n")
    (project / "docs" / "machines" / "m-02.md").write_text(
        "# m-02\n\nSee [it](../index.md#no-such-heading).\n"
    )
    monkeypatch.setattr(site_workers, "MIN_PAGES_FOR_WORKERS", 2)
    monkeypatch.setattr(site_workers.os, "cpu_count", lambda: 2)
    with pytest.raises(Exception, match="mkdocs: Aborted with 1 warnings in strict mode"):
        publish(project / "mkdocs.yml")
    assert not (project / "site" / CHROME_FILE).exists()


SITE_BUILD = """
import sys
from pathlib import Path
from connlab.cli import one_line_errors
from connlab.site import publish, workers
workers.MIN_PAGES_FOR_WORKERS = 2
one_line_errors(lambda: publish.publish(Path(sys.argv[1])))()
"""


# Machine pages in the Ctrl-C test: about five seconds of conversion on two cores.
MACHINES_TO_INTERRUPT = 300


@pytest.mark.mkdocs
def test_ctrl_c_during_a_build_in_workers_stops_everything_and_the_next_build_is_clean(
    project: Path,
) -> None:
    """SIGINT to the whole process group, as a terminal sends Ctrl-C, while the workers convert pages: exit
    status 130 with one line, no process left running, and the next build starts clean (a page may have
    been half written)."""
    config = project / "mkdocs.yml"
    assert publish(config) == "clean"
    # Emphasised cells: a table of plain cells is written at once (connlab.site.fast_tables), and the workers
    # must still be converting when the signal comes.
    # Enough of them that the workers, once they have written a page, still have seconds of work left: the
    # signal goes when the first page is written, not after a fixed wait, which a faster build outran.
    table = "| a | b |\n|---|---:|\n" + "".join(f"| *row* {n} | {n} |\n" for n in range(1000))
    machines = project / "docs" / "machines"
    for number in range(MACHINES_TO_INTERRUPT):
        (machines / f"m-{number:03d}.md").write_text(MACHINE_PAGE.format(name=f"m-{number:03d}") + table)
    build = subprocess.Popen(
        [sys.executable, "-c", SITE_BUILD, str(config)],
        start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    written = project / "site" / "machines"
    deadline = time.monotonic() + 60
    while not any(written.glob("m-*/index.html")) and time.monotonic() < deadline:
        time.sleep(0.01)
    os.killpg(build.pid, signal.SIGINT)
    output, _ = build.communicate(timeout=60)
    assert build.returncode == 130, output
    assert output.strip().splitlines()[-1] == "interrupted; rerun the same command to finish", output
    assert "Traceback" not in output
    time.sleep(1.0)
    left = [p for p in psutil.process_iter(["pid", "status"]) if _in_group(p, build.pid)]
    assert all(p.info["status"] == psutil.STATUS_ZOMBIE for p in left), left
    assert not (project / "site" / CHROME_FILE).exists()
    assert publish(config) == "clean"


def _in_group(process: psutil.Process, group: int) -> bool:
    try:
        return os.getpgid(process.pid) == group
    except (ProcessLookupError, psutil.Error):
        return False


@pytest.mark.mkdocs
def test_search_still_strips_its_attributes_where_a_page_has_them(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search plugin is skipped only on a page out of the index that carries no data-search-*
    attribute: an indexed page's sections are indexed, and a page with such an attribute loses it."""
    docs = project / "docs"
    marked = '<p data-search-exclude="1">not indexed</p>\n'
    (docs / "index.md").write_text(f"# Home\n\n{marked}\nSee [the machines](machines.md).\n")
    (docs / "machines" / "a-box.md").write_text(MACHINE_PAGE.format(name="a-box") + f"\n{marked}")
    handled: list[str] = []
    on_page_context = SearchPlugin.on_page_context

    def counted(self: SearchPlugin, context: object, *, page: Page, **kwargs: object) -> object:
        handled.append(page.file.src_uri)
        return on_page_context(self, context, page=page, **kwargs)

    monkeypatch.setattr(SearchPlugin, "on_page_context", counted)
    publish(project / "mkdocs.yml")
    assert sorted(handled) == ["index.md", "machines.md", "machines/a-box.md"]  # not b-box's
    for page in ("", "machines/a-box/"):
        html = (project / "site" / page / "index.html").read_text()
        assert "not indexed" in html and "data-search-exclude" not in html, page
    index = json.loads((project / "site" / "search" / "search_index.json").read_text())
    locations = {entry["location"] for entry in index["docs"]}
    assert "" in locations and not any("a-box" in location for location in locations)
    assert not any("not indexed" in entry["text"] for entry in index["docs"])


def _search_sections(html: str) -> list[tuple[object, ...]]:
    """What Material's search parser makes of a page's HTML: each section's id, title, text (its runs of
    white space made one space, as the search splits words) and exclusion."""
    parser = SearchParser()
    parser.feed(html)
    parser.close()
    words = lambda parts: re.sub(r"\s+", " ", "".join(parts))  # noqa: E731
    return [(s.id, words(s.title), words(s.text), s.is_excluded()) for s in parser.data]


@pytest.mark.process
def test_pages_lighter_for_search_index_as_the_pages_themselves(docs_from_fixtures: Path) -> None:
    """Every indexed page the site's templates make: the search parser's sections are the same with the
    spans taken out of the code blocks, which must be most of the tags there are."""
    config = site_config()
    converter = markdown.Markdown(extensions=config.markdown_extensions, extension_configs=config.mdx_configs)
    pages = [page for page in sorted(docs_from_fixtures.rglob("*.md")) if "machines" not in page.parts[-2:-1]]
    spans_before = spans_after = 0
    for page in pages:
        html = converter.reset().convert(page.read_text(encoding="utf-8"))
        lighter = publish_module.lighter_for_search(html)
        assert _search_sections(lighter) == _search_sections(html), page
        spans_before, spans_after = spans_before + html.count("<span"), spans_after + lighter.count("<span")
    assert len(pages) >= 5 and spans_after < spans_before / 5


def test_odd_code_blocks_index_as_before() -> None:
    html = (
        '<h2 id="a">A <span class="x">title</span></h2>\n<pre class="p"><span></span><code>'
        '<span class="k">set</span><span class="w"> </span>-e\n\n  <span class="s">"x &amp; y"</span>\n'
        '</code></pre>\n<p>between <span data-search-exclude="1">kept out</span></p>\n'
        "<pre><code>plain\n</code></pre><pre>  <span>a</span>  <span>b</span>\t</pre>"
        '<pre><span data-search-exclude="1">raw</span> <span class="k">kept</span></pre>'
    )
    lighter = publish_module.lighter_for_search(html)
    assert "kept out" in lighter and 'class="x"' in lighter and '<span class="k">set' not in lighter
    assert '<span class="k">kept' in lighter
    assert _search_sections(lighter) == _search_sections(html)


def test_odd_tables_index_as_before() -> None:
    plain = (
        '<h2 id="m">Machines</h2>\n<table>\n<thead>\n<tr>\n<th>machine</th>\n<th align="right">cores</th>\n'
        '</tr>\n</thead>\n<tbody>\n<tr>\n<td><a href="a/"><strong>a-1</strong></a></td>\n<td>2<br>'
        "<small>(1 + 1)</small></td>\n</tr>\n<tr><td><code>x &amp; y</code></td><td><p>para</p></td></tr>\n"
        "</tbody>\n</table>\n<p>after</p>"
    )
    kept = [
        '<table><tr><td><h3 id="t">in a cell</h3></td></tr></table>',
        '<table><tr><td data-search-exclude="1">out</td><td>in</td></tr></table>',
        "<table><tr><td><table><tr><td>inner</td></tr></table></td><td>outer</td></tr></table>",
    ]
    lighter = publish_module.lighter_for_search(plain)
    assert "<td" not in lighter and "<strong" not in lighter and "<code>x &amp; y</code>" in lighter
    assert _search_sections(lighter) == _search_sections(plain)
    for html in kept:
        assert publish_module.lighter_for_search(html) == html
        assert _search_sections(html + plain) == _search_sections(
            publish_module.lighter_for_search(html + plain)
        )


@pytest.mark.mkdocs
def test_an_indexed_page_with_code_keeps_its_highlighting_and_loses_search_attributes(project: Path) -> None:
    docs = project / "docs"
    code = '```bash\nset -e  # <span data-search-exclude="x">\necho "$HOME"\n```\n'
    marked = '<p data-search-exclude="1">not indexed</p>\n'
    (docs / "index.md").write_text(f"# Home\n\n{code}\n{marked}\nSee [the machines](machines.md).\n")
    config = project / "mkdocs.yml"
    config.write_text(config.read_text() + "markdown_extensions:\n  - pymdownx.superfences\n  - md_in_html\n")
    publish(config)
    html = (project / "site" / "index.html").read_text()
    assert '<span class="nb">echo</span>' in html, "the page's code lost its highlighting"
    assert "not indexed" in html and 'data-search-exclude="1"' not in html
    index = json.loads((project / "site" / "search" / "search_index.json").read_text())
    text = " ".join(entry["text"] for entry in index["docs"])
    assert "echo" in text and "not indexed" not in text


@pytest.mark.mkdocs
def test_a_page_with_a_table_and_no_code_is_indexed_from_its_lighter_form(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Machines page has tables and no code block: it too is indexed without its tables' inner tags,
    and written with them."""
    docs = project / "docs"
    table = "| machine | cores |\n|---|---:|\n| **a-box** | 2 |\n| b-box | 16 |\n"
    (docs / "machines.md").write_text(f"# Machines\n\n{table}\n[a-box](machines/a-box.md)\n")
    config = project / "mkdocs.yml"
    config.write_text(config.read_text() + "markdown_extensions:\n  - tables\n")
    lightened: list[str] = []
    lighter = publish_module.lighter_for_search

    def watched(html: str) -> str:
        lightened.append(html)
        return lighter(html)

    monkeypatch.setattr(publish_module, "lighter_for_search", watched)
    publish(config)
    assert any("<td>b-box</td>" in html for html in lightened), "the table's page was indexed as it is"
    assert "<td><strong>a-box</strong></td>" in built(project, "machines").read_text()
    index = json.loads((project / "site" / "search" / "search_index.json").read_text())
    text = " ".join(entry["text"] for entry in index["docs"])
    assert "a-box" in text and "16" in text


def test_highlighting_is_kept_and_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A code block's highlighting comes from the cache once made, the same text as Pygments makes it, and a
    different block or setting is highlighted anew."""
    import pymdownx.highlight as pymdownx_highlight
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import BashLexer

    monkeypatch.setattr(pymdownx_highlight, "highlight", highlight)
    cache = tmp_path / "highlight"
    monkeypatch.setattr(publish_module, "HIGHLIGHT_CACHE_DIR", cache)
    publish_module._highlighting_kept()
    kept = pymdownx_highlight.highlight
    assert kept is not highlight
    code = "pgbench -c 8 -T 10 bench\n"
    first = kept(code, BashLexer(), HtmlFormatter(wrapcode=True))
    assert first == highlight(code, BashLexer(), HtmlFormatter(wrapcode=True))
    (entry,) = cache.iterdir()
    entry.write_text("kept")
    assert kept(code, BashLexer(), HtmlFormatter(wrapcode=True)) == "kept"  # read back, not highlighted
    assert kept(code, BashLexer(), HtmlFormatter(wrapcode=False)) != "kept"
    assert kept("psql -c 'select 1'\n", BashLexer(), HtmlFormatter(wrapcode=True)) != "kept"
    assert len(list(cache.iterdir())) == 3
    publish_module._highlighting_kept()  # once only: not wrapped twice
    assert pymdownx_highlight.highlight is kept


def test_the_theme_files_come_from_the_cache_once_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The theme's static files are the ones MkDocs finds; once listed they are read back from the cache
    (a name written there is what the next build finds), and a theme folder outside the installed packages
    is listed every time."""
    from mkdocs.structure.files import Files

    monkeypatch.setattr(Files, "add_files_from_theme", Files.add_files_from_theme)
    (tmp_path / "docs").mkdir()
    config_file = tmp_path / "mkdocs.yml"
    config_file.write_text("site_name: t\ndocs_dir: docs\ntheme:\n  name: material\n", encoding="utf-8")
    config = load_config(str(config_file))
    env = config.theme.get_env()
    found = Files([])
    found.add_files_from_theme(env, config)
    expected = sorted(file.src_uri for file in found)
    assert any(name.startswith("assets/stylesheets/") for name in expected), expected

    cache = tmp_path / "theme-files"
    monkeypatch.setattr(publish_module, "THEME_FILES_DIR", cache)
    publish_module._theme_files_listed()
    listed = Files([])
    listed.add_files_from_theme(env, config)
    assert sorted(file.src_uri for file in listed) == expected
    (entry,) = cache.iterdir()
    entry.write_text(json.dumps([expected[0]]), encoding="utf-8")
    again = Files([])
    again.add_files_from_theme(env, config)
    assert [file.src_uri for file in again] == [expected[0]]  # read back, not listed
    wrapped = Files.add_files_from_theme
    publish_module._theme_files_listed()  # once only: not wrapped twice
    assert Files.add_files_from_theme is wrapped

    custom = tmp_path / "custom"
    custom.mkdir()
    config.theme.dirs.insert(0, str(custom))
    elsewhere = Files([])
    elsewhere.add_files_from_theme(config.theme.get_env(), config)
    assert sorted(file.src_uri for file in elsewhere) == expected
