"""build/docs -> build/site: MkDocs, rebuilding only the machine pages whose Markdown changed.

A clean MkDocs build converts every page again, and with a thousand machines' pages that is most of a build.
MkDocs can skip a page whose output is newer than its Markdown (a "dirty" build), and the renderer rewrites
only pages whose text changed, so an unchanged machine page keeps its time. A skipped page is only right when
everything around its text is unchanged too: the site's configuration, MkDocs and its theme, and the
navigation (the titles of the pages it lists). Their digest is kept beside the site; when it differs, or a
page the navigation lists could be stale, the build is clean. The pages in the navigation are always built
again (they are few, and the search index holds only the pages built), and the site's files whose source is
gone (a machine removed, a chart no longer drawn) are removed, which a dirty build does not do.

Converting a machine page's Markdown is most of MkDocs' time (a quarter of a second each here), and MkDocs
converts one page after another. When many machine pages are due (a cold build), worker processes across
the cores build them first, each a share of them, with MkDocs itself and the same configuration; the build
that follows finds them up to date and builds the rest. A worker also reads the navigation's pages, so that
a machine page's links to their anchors are still checked. A clean build empties the site first and then
builds as an incremental one does into the empty folder, which writes every file.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import shutil
import sys
import sysconfig
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.metadata import version
from pathlib import Path
from typing import Any

import jinja2
import mkdocs.commands.build as mkdocs_build
import pymdownx.highlight as pymdownx_highlight
from mkdocs import utils as mkdocs_utils
from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import Abort, ConfigurationError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page
from mkdocs.utils import clean_directory

from connlab.contract.cache import digest, read_json, read_text, source_digest, write_atomically
from connlab.errors import LabError
from connlab.interrupts import WorkerPool
from connlab.paths import CACHE_DIR, DOCS_DIR, REPO_ROOT, SITE_DIR
from connlab.site import charts_first, fast_tables, paragraph_memo, preloads, wrapped_tables
from connlab.site.charts_first import with_scripts_after_charts
from connlab.site.pages import CHARTS_SUBDIR, COMPILED_CHARTS_SUBDIR, MACHINE_PAGES_DIR
from connlab.site.preloads import with_chart_preloads
from connlab.site.workers import page_workers

CONFIG_FILE = REPO_ROOT / "mkdocs.yml"
# Raised (sys.audit) when MkDocs builds in this interpreter: the tests' process markers see a build that
# starts no process by this event.
MKDOCS_AUDIT_EVENT = "connlab.mkdocs.build"


def load_site_config(config_file: Path) -> MkDocsConfig:
    """The site's mkdocs.yml with the docs and site folders of this build (CONNLAB_BUILD_DIR moves both; the
    file names the default ones, for `mkdocs serve`), or another configuration file as it stands."""
    if config_file == CONFIG_FILE:
        return load_config(str(config_file), strict=True, docs_dir=str(DOCS_DIR), site_dir=str(SITE_DIR))
    return load_config(str(config_file), strict=True)


# The digest of what every page is wrapped in, kept in the site after a build.
CHROME_FILE = ".connlab-chrome"
# Everything a page's wrapping depends on besides its own text and the configuration file.
THEME_PACKAGES = ("mkdocs", "mkdocs-material", "pymdown-extensions", "markdown")
# The project's code that MkDocs runs on every page (this module's hooks, the Markdown extensions mkdocs.yml
# names): a change to it changes pages whose Markdown did not change.
PAGE_CODE = (
    Path(__file__),
    *(
        Path(str(code.__file__))
        for code in (charts_first, fast_tables, paragraph_memo, preloads, wrapped_tables)
    ),
)
DIRTY_WARNING = "A 'dirty' build is being performed"


class _DirtyWarningFilter(logging.Filter):
    """MkDocs warns that a dirty build may leave navigation stale; this module rules that out (the chrome
    digest), and under --strict the warning alone would stop the build."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(DIRTY_WARNING)


def _title_line(page: Path) -> str:
    """A page's first heading: the title the navigation shows for it."""
    with page.open(encoding="utf-8") as handle:
        return next((line.strip() for line in handle if line.startswith("# ")), "")


def chrome_digest(config_file: Path, docs_dir: Path, nav_pages: list[Path]) -> str:
    """What wraps every page: the configuration, the theme's packages, the project's code MkDocs runs and
    the navigation's titles."""
    return digest(
        config_file.read_text(encoding="utf-8"),
        os.environ.get("CONNLAB_SITE_URL", ""),
        *(f"{name} {version(name)}" for name in THEME_PACKAGES),
        source_digest(*PAGE_CODE),
        *(f"{page.relative_to(docs_dir)}\0{_title_line(page)}" for page in nav_pages),
    )


def _output_of(page: Path, config: MkDocsConfig) -> Path:
    """Where MkDocs writes a page, as MkDocs itself names it (directory URLs or not)."""
    source = str(page.relative_to(config.docs_dir))
    return Path(File(source, config.docs_dir, config.site_dir, config.use_directory_urls).abs_dest_path)


def remove_stale(docs_dir: Path, site_dir: Path) -> list[Path]:
    """The site's machine pages, chart files and compiled charts whose source is gone from build/docs."""
    stale: list[Path] = []
    machines = site_dir / MACHINE_PAGES_DIR
    if machines.is_dir():
        kept = {page.stem for page in (docs_dir / MACHINE_PAGES_DIR).glob("*.md")}
        stale += [folder for folder in machines.iterdir() if folder.is_dir() and folder.name not in kept]
    for subdir in (CHARTS_SUBDIR, COMPILED_CHARTS_SUBDIR):
        made = docs_dir / subdir
        if (site_dir / subdir).is_dir():
            names = {file.name for file in made.iterdir()} if made.is_dir() else set()
            stale += [file for file in (site_dir / subdir).iterdir() if file.name not in names]
    for path in stale:
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    return stale


def _due_machine_pages(config: MkDocsConfig, machine_pages: Path) -> list[str]:
    """The machine pages MkDocs would build (output missing or older than the Markdown), as MkDocs names
    their sources."""
    due = []
    for page in sorted(machine_pages.glob("*.md")):
        source = str(page.relative_to(config.docs_dir))
        if File(source, config.docs_dir, config.site_dir, config.use_directory_urls).is_modified():
            due.append(source)
    return due


@contextmanager
def _only_building(shard: set[str], read: set[str]) -> Iterator[None]:
    """Within MkDocs' own build: read (convert) the pages in `read`, write those in `shard` and nothing
    else: no other page, no static file, no theme template."""
    is_modified, build_page = File.is_modified, mkdocs_build._build_page
    copy_static, build_template = Files.copy_static_files, mkdocs_build._build_theme_template

    def shard_page(page, *args, **kwargs):  # type: ignore[no-untyped-def]
        if page.file.src_uri in shard:
            build_page(page, *args, **kwargs)

    File.is_modified = lambda file: file.src_uri in read  # type: ignore[method-assign]
    mkdocs_build._build_page = shard_page
    Files.copy_static_files = lambda *args, **kwargs: None  # type: ignore[method-assign]
    mkdocs_build._build_theme_template = lambda *args, **kwargs: None
    try:
        yield
    finally:
        File.is_modified = is_modified  # type: ignore[method-assign]
        mkdocs_build._build_page = build_page
        Files.copy_static_files = copy_static  # type: ignore[method-assign]
        mkdocs_build._build_theme_template = build_template


# The theme's templates compiled, kept between builds.
THEME_BYTECODE_DIR = CACHE_DIR / "jinja-theme"


def _theme_templates_kept(config: MkDocsConfig) -> None:
    """MkDocs compiles the theme's templates (Material's main.html and its partials) on every build, a sixth
    of an incremental build's time with nothing else to convert but the navigation's pages. Jinja keeps
    them compiled under build/cache, checking each against its source before using it."""

    def keep(env: jinja2.Environment, **_: Any) -> jinja2.Environment:
        THEME_BYTECODE_DIR.mkdir(parents=True, exist_ok=True)
        env.bytecode_cache = jinja2.FileSystemBytecodeCache(str(THEME_BYTECODE_DIR))
        return env

    config.plugins.events["env"].append(keep)


# Code blocks as Pygments highlights them, by their code and the lexer's and formatter's settings.
HIGHLIGHT_CACHE_DIR = CACHE_DIR / "highlight"


@functools.cache
def _pygments_version() -> str:
    # Read from the package's metadata once: asked for each code block, it was 2% of a machine page's build.
    return version("pygments")


def _highlighting_kept() -> None:
    """Pygments highlights every code block of the pages MkDocs converts, and the articles' check-it-yourself
    scripts, the same from one build to the next, were a sixth of an incremental build. The highlighting is
    a pure function of the code and the lexer's and formatter's settings: kept under build/cache by those."""
    original = pymdownx_highlight.highlight
    if getattr(original, "connlab_kept", False):
        return

    def kept(code: str, lexer: Any, formatter: Any, outfile: Any = None) -> Any:
        if outfile is not None:
            return original(code, lexer, formatter, outfile)
        key = digest(
            _pygments_version(),
            code,
            f"{type(lexer).__module__}.{type(lexer).__qualname__}",
            repr(sorted(lexer.options.items())),
            f"{type(formatter).__module__}.{type(formatter).__qualname__}",
            repr(sorted(formatter.options.items())),
        )
        path = HIGHLIGHT_CACHE_DIR / f"{key}.html"
        cached = read_text(path)
        if cached is None:
            cached = original(code, lexer, formatter)
            write_atomically(path, cached)
        return cached

    kept.connlab_kept = True  # type: ignore[attr-defined]
    pymdownx_highlight.highlight = kept


# The names of the theme's static files among its folders' files, by the theme's packages and folders.
THEME_FILES_DIR = CACHE_DIR / "theme-files"


class _ListedTemplates:
    """The one call Files.add_files_from_theme makes of the theme's Jinja environment, answered from a list
    (names None: asked of the environment, and the answer recorded)."""

    def __init__(self, env: jinja2.Environment, names: list[str] | None) -> None:
        self.env, self.names = env, names

    def list_templates(self, filter_func: Callable[[str], bool] | None = None) -> list[str]:
        if self.names is None:
            self.names = self.env.list_templates(filter_func=filter_func)
        return self.names


def _theme_files_listed() -> None:
    """MkDocs finds the theme's static files (43 for Material) by listing every file of the theme's folders
    (14,510, nearly all of them icons) and testing each name against a dozen patterns: a ninth of a second of
    every build. The names found depend on nothing but the installed packages and those patterns: kept
    under build/cache by them. Whether each is overridden by the docs is still decided on every build, by
    MkDocs, as before. A theme folder outside the installed packages (a custom_dir) is listed every time."""
    original = Files.add_files_from_theme
    if getattr(original, "connlab_kept", False):
        return
    installed = Path(sysconfig.get_paths()["purelib"]).resolve()

    def listed(self: Files, env: jinja2.Environment, config: MkDocsConfig) -> None:
        dirs = [Path(folder).resolve() for folder in config.theme.dirs]
        if not all(folder.is_relative_to(installed) for folder in dirs):
            return original(self, env, config)
        key = digest(
            *(version(package) for package in THEME_PACKAGES),
            *map(str, dirs),
            *config.theme.static_templates,
            *mkdocs_utils.markdown_extensions,
        )
        cached = THEME_FILES_DIR / f"{key}.json"
        names = read_json(cached)
        templates = _ListedTemplates(env, names if isinstance(names, list) else None)
        original(self, templates, config)  # type: ignore[arg-type]
        if names != templates.names:
            write_atomically(cached, json.dumps(templates.names))

    listed.connlab_kept = True  # type: ignore[attr-defined]
    Files.add_files_from_theme = listed  # type: ignore[method-assign]


def _chart_requests_preloaded(config: MkDocsConfig) -> None:
    """Every page MkDocs writes starts its charts' requests from its head (connlab.site.preloads), and runs
    its other scripts once its charts are drawn (connlab.site.charts_first)."""
    config.plugins.events["post_page"] += [with_chart_preloads, with_scripts_after_charts]


SEARCH_PLUGIN = "material/search"


def _search_skips_unindexed_pages(config: MkDocsConfig) -> None:
    """Material's search plugin strips `data-search-*` attributes from every page's HTML with a regular
    expression that has no literal to look for first: 3 ms over a machine page, a thousand times in a cold
    build, on pages that carry none and that the index leaves out anyway. A page out of the index without
    such an attribute now skips the plugin, whose handler does nothing else for it."""
    plugin = config.plugins.get(SEARCH_PLUGIN)
    handlers = config.plugins.events["page_context"]
    for index, handler in enumerate(handlers):
        if getattr(handler, "__self__", None) is plugin and plugin is not None:
            handlers[index] = functools.partial(_unless_unindexed, handler)


def _unless_unindexed(handler: Callable[..., Any], context: Any, *, page: Page, **kwargs: Any) -> Any:
    search = page.meta.get("search") or {}
    content = page.content or ""
    if search.get("exclude") and "data-search-" not in content:
        return None
    if search.get("exclude") or ("<pre" not in content and "<table" not in content):
        return handler(context, page=page, **kwargs)
    # The plugin indexes the page without the tags that only wrap text, then strips its attributes from the
    # page as it is written.
    page.content = lighter_for_search(content)
    try:
        result = handler(context, page=page, **kwargs)
    finally:
        page.content = content
    page.content = SEARCH_ATTRIBUTES.sub("", content)
    return result


# The attributes Material's search plugin strips from every page it handles (its own expression).
SEARCH_ATTRIBUTES = re.compile(r"\s?data-search-\w+=\"[^\"]+\"")
_CODE_BLOCK = re.compile(r"<pre\b[^>]*>.*?</pre>", re.S)
_SPAN_TAG = re.compile(r"</?span\b[^>]*>")
_TABLE = re.compile(r"(<table\b[^>]*>)(.*?)(</table>)", re.S)
# A machine picker's options: a tag per machine around its name.
_SELECT = re.compile(r"(<select\b[^>]*>)(.*?)(</select>)", re.S)
_OPTION_TAG = re.compile(r"</?option\b[^>]*>")
# Inside a table: every tag but those whose text the search index keeps as markup (Material's `keep`).
_TABLE_INNER_TAG = re.compile(r"</?(?!(?:p|code|pre|li|ol|ul|sub|sup)\b)[a-zA-Z][a-zA-Z0-9]*\b[^>]*>")
# What the search parser does more with than keep the text: headings (sections), skipped elements, and
# elements marked for it. A block holding one is left whole.
_SEARCH_MARKUP = re.compile(r"<(?:h[1-6]|script|style|object)\b|data-search-")


def lighter_for_search(html: str) -> str:
    """The page as the search index reads it, with the tags that only wrap text taken out: the `<span>` tags
    inside its `<pre>` blocks, the `<option>` tags of its `<select>`s, and inside its tables every tag but the
    table's own and those the index keeps. An article's check-it-yourself scripts are nine tenths of its
    tags, one span per highlighted token, its machine picker an option per machine, and the Machines page a
    row per machine; the search plugin parses every tag with Python's HTMLParser and keeps only the text of
    these, so the index holds the same text, made in a fraction of the time
    (tests/test_publish.py compares the two on every page the templates make). Only the runs of white
    space between a table's cells can differ: the parser makes one space of white space between two tags,
    and keeps it as it is next to text, which the search splits into the same words. A block with a
    heading, a skipped element or a data-search-* attribute is left whole."""
    html = _CODE_BLOCK.sub(_without_spans, html)
    html = _SELECT.sub(_select_text, html)
    return _TABLE.sub(_table_text, html)


def _without_spans(block: re.Match[str]) -> str:
    text = block.group(0)
    return text if _SEARCH_MARKUP.search(text) else _SPAN_TAG.sub("", text)


def _select_text(select: re.Match[str]) -> str:
    start, inner, end = select.groups()
    return select.group(0) if _SEARCH_MARKUP.search(inner) else start + _OPTION_TAG.sub("", inner) + end


def _table_text(table: re.Match[str]) -> str:
    start, inner, end = table.groups()
    # A table inside this one ends the match early: the rest is left as it was.
    if _SEARCH_MARKUP.search(inner) or "<table" in inner:
        return table.group(0)
    return start + _TABLE_INNER_TAG.sub("", inner) + end


def build_shard(config_file: str, shard: list[str], nav_pages: list[str]) -> None:
    """A worker's share of the machine pages, built by MkDocs (the navigation's pages read, not written).
    The search index it writes holds nothing (machine pages stay out of search); the build after the
    workers writes the site's."""
    config = load_site_config(Path(config_file))
    _search_skips_unindexed_pages(config)
    _theme_templates_kept(config)
    _highlighting_kept()
    _theme_files_listed()
    _chart_requests_preloaded(config)
    logging.getLogger("mkdocs").setLevel(logging.WARNING)
    quiet = _DirtyWarningFilter()
    logging.getLogger("mkdocs.commands.build").addFilter(quiet)
    sys.audit(MKDOCS_AUDIT_EVENT, config.site_dir)
    with _only_building(set(shard), set(shard) | set(nav_pages)):
        build(config, dirty=True)


def _build_in_workers(config_file: Path, due: list[str], nav: list[str]) -> None:
    workers = page_workers(len(due))
    if not workers:
        return
    shards = [due[index::workers] for index in range(workers)]
    with WorkerPool(workers) as pool:
        futures = [pool.submit(build_shard, str(config_file), shard, nav) for shard in shards]
        for future in futures:
            try:
                future.result()
            except (Abort, ConfigurationError) as error:
                raise LabError(f"{config_file}: mkdocs: {error}") from error


def publish(config_file: Path = CONFIG_FILE) -> str:
    """Build the site; return "clean" or "incremental" (what the build was)."""
    config = load_site_config(config_file)
    _search_skips_unindexed_pages(config)
    _theme_templates_kept(config)
    _highlighting_kept()
    _theme_files_listed()
    _chart_requests_preloaded(config)
    docs_dir, site_dir = Path(config.docs_dir), Path(config.site_dir)
    machine_pages = docs_dir / MACHINE_PAGES_DIR
    nav_pages = sorted(page for page in docs_dir.rglob("*.md") if page.parent != machine_pages)
    chrome = chrome_digest(config_file, docs_dir, nav_pages)
    kept = site_dir / CHROME_FILE
    dirty = kept.is_file() and kept.read_text(encoding="utf-8") == chrome
    if dirty:
        remove_stale(docs_dir, site_dir)
    else:
        # Everything is built again; MkDocs' clean build would empty the folder just so. (The digest goes
        # with it: a build that stops half-way must not pass for a complete one.)
        kept.unlink(missing_ok=True)  # hidden, so MkDocs' cleaning keeps it
        clean_directory(str(site_dir))
    build_logger = logging.getLogger("mkdocs.commands.build")
    quiet = _DirtyWarningFilter()
    build_logger.addFilter(quiet)
    # Only warnings and errors on the terminal, as `mkdocs build --quiet` prints them.
    logging.getLogger("mkdocs").setLevel(logging.WARNING)
    try:
        nav_sources = [str(page.relative_to(docs_dir)) for page in nav_pages]
        _build_in_workers(config_file, _due_machine_pages(config, machine_pages), nav_sources)
        for page in nav_pages:  # built again: the navigation and the search index read them
            _output_of(page, config).unlink(missing_ok=True)
        sys.audit(MKDOCS_AUDIT_EVENT, config.site_dir)
        build(config, dirty=True)
    except (Abort, ConfigurationError) as error:
        kept.unlink(missing_ok=True)
        raise LabError(f"{config_file}: mkdocs: {error}") from error
    except BaseException:
        # Interrupted (Ctrl-C reaches the workers too): a page may be half written yet newer than its
        # Markdown, which an incremental build would keep. The next build is a clean one.
        kept.unlink(missing_ok=True)
        raise
    finally:
        build_logger.removeFilter(quiet)
    kept.write_text(chrome, encoding="utf-8")
    return "incremental" if dirty else "clean"
