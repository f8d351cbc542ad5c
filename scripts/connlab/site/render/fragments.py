"""A machine page's Markdown -> the HTML fragment that is the page's content, without MkDocs.

A machine's page is the article templates' machine view (prose with the machine's figures, written by the
articles' authors in Markdown) plus what the project generates from the facts: tables and charts. The
generated parts are HTML already: tables are raw HTML blocks (connlab.site.render.tables), and a chart is a
placeholder here, replaced by its HTML block after the conversion (connlab.site.charts.book), so neither goes
through Markdown. The prose is converted by Python-Markdown's public API with the extensions mkdocs.yml
names, so it reads as on the pages MkDocs builds; its links to other pages (`../machines.md`) become the
URLs MkDocs would have written, and a link to a page the site does not have fails the build, as MkDocs'
strict build does. Each article's part of the page opens with a heading of the class `connlab-from` and the
article's slug as its id; every heading after it without an id of its own takes the slug before its own
(`pool-sizing-littles-law`), so that an article's sections keep their anchors whichever articles come before
them on a machine's page, and the articles' links can land on them.
"""

from __future__ import annotations

import html
import posixpath
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element

import markdown
import yaml
from markdown.extensions import Extension
from markdown.extensions.toc import render_inner_html, slugify, strip_tags, unique
from markdown.treeprocessors import Treeprocessor

from connlab.paths import REPO_ROOT
from connlab.site.layout import page_url

CONFIG_FILE = REPO_ROOT / "mkdocs.yml"


class _ConfigLoader(yaml.SafeLoader):
    """mkdocs.yml as plain YAML: its `!ENV` values (the site's address) play no part in a page's Markdown."""


_ConfigLoader.add_constructor("!ENV", lambda loader, node: None)


# The extensions MkDocs adds to those its configuration names (its `markdown_extensions` default).
MKDOCS_BUILT_IN = ("toc", "tables", "fenced_code")


def markdown_extensions(config_file: Path = CONFIG_FILE) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """The Markdown extensions MkDocs converts a page with (its own and those mkdocs.yml names), and their
    options: one list for every page."""
    config = yaml.load(config_file.read_text(encoding="utf-8"), Loader=_ConfigLoader)
    names: list[str] = list(MKDOCS_BUILT_IN)
    options: dict[str, dict[str, Any]] = {}
    for entry in config.get("markdown_extensions") or []:
        if isinstance(entry, str):
            names += [] if entry in names else [entry]
            continue
        ((name, settings),) = entry.items()
        names += [] if name in names else [name]
        options[name] = settings or {}
    return names, options


class PageLinks(Treeprocessor):
    """Links to the site's Markdown pages, relative to the page, made the URLs MkDocs writes (directory
    URLs); a link to a page not in `exists` is an error."""

    def __init__(self, md: markdown.Markdown, page: Callable[[], str], exists: Callable[[str], bool]) -> None:
        super().__init__(md)
        self.page, self.exists = page, exists

    def run(self, root: Element) -> None:
        for link in root.iter("a"):
            href = link.get("href", "")
            target, _, anchor = href.partition("#")
            if not target.endswith(".md") or "://" in target or target.startswith("/"):
                continue
            page = self.page()
            resolved = posixpath.normpath(posixpath.join(posixpath.dirname(page), target))
            if not self.exists(resolved):
                raise ValueError(f"{page}: a link to {href}, a page the site does not have")
            link.set("href", page_url(page, resolved) + (f"#{anchor}" if anchor else ""))


# A heading that opens an article's part of a machine's page (the article templates' machine view).
ARTICLE_HEADING_CLASS = "connlab-from"
_HEADING = re.compile(r"h[1-6]")


class ArticleAnchors(Treeprocessor):
    """Each heading after an article's opening heading (class ARTICLE_HEADING_CLASS, id the article's slug)
    an id of the slug and its text, where it has none of its own; toc, which runs after, keeps the ids it
    finds."""

    def run(self, root: Element) -> None:
        used = {str(el.get("id")) for el in root.iter() if el.get("id")}
        article = None
        for el in root.iter():
            if not isinstance(el.tag, str) or not _HEADING.fullmatch(el.tag):
                continue
            if ARTICLE_HEADING_CLASS in (el.get("class") or "").split() and el.get("id"):
                article = el.get("id")
            elif article is not None and not el.get("id"):
                name = html.unescape(strip_tags(render_inner_html(el, self.md)))
                el.set("id", unique(f"{article}-{slugify(name, '-')}", used))


class _PageLinksExtension(Extension):
    def __init__(self, page: Callable[[], str], exists: Callable[[str], bool]) -> None:
        super().__init__()
        self.page, self.exists = page, exists

    def extendMarkdown(self, md: markdown.Markdown) -> None:
        # After the inline patterns (20) have made the links, before the prettifier (10).
        md.treeprocessors.register(PageLinks(md, self.page, self.exists), "connlab_page_links", 15)
        # After attr_list (8) has set the articles' ids, before toc (5) gives the other headings theirs.
        md.treeprocessors.register(ArticleAnchors(md), "connlab_article_anchors", 6)


# A chart placeholder (connlab.site.charts.book: NUL never occurs in rendered text) on a line of its own
# becomes a paragraph of its own; the chart's block replaces the paragraph, not its text.
_CHART_PARAGRAPH = re.compile(r"<p>(\x00chart:\d+\x00)</p>")


class FragmentConverter:
    """One Markdown converter for many pages (building one per page costs more than converting a page)."""

    def __init__(self, exists: Callable[[str], bool], config_file: Path = CONFIG_FILE) -> None:
        names, options = markdown_extensions(config_file)
        self._page = ""
        links = _PageLinksExtension(lambda: self._page, exists)
        self.md = markdown.Markdown(extensions=[*names, links], extension_configs=options)

    def convert(self, page: str, text: str) -> str:
        """The page's (docs-relative name, as MkDocs would have it) Markdown as HTML, charts left as
        placeholders."""
        self._page = page
        self.md.reset()
        body = _CHART_PARAGRAPH.sub(r"\1", self.md.convert(_without_front_matter(text)))
        return body + "\n"


def _without_front_matter(text: str) -> str:
    """A page's text without a YAML front matter block (MkDocs reads it; here nothing needs it)."""
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end >= 0:
            return text[end + 5 :]
    return text
