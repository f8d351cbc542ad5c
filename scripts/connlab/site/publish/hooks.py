"""Everything the site asks of MkDocs beyond its configuration, through MkDocs' public hook API (mkdocs.yml
names this file under `hooks:`): MkDocs calls each `on_<event>` function; nothing of MkDocs is replaced.

- on_config: the menu's Articles section, from the articles' registry (connlab.site.render.articles), so that
  the articles are declared once; and, where the site has no address (site_url, a build setting that is none
  by default), Material's instant navigation switched off: it intercepts only links listed in sitemap.xml,
  which MkDocs leaves empty without an address, so the pages load plainly instead of half the links going
  through it.
- on_env: the theme's compiled templates kept under build/cache between builds (Jinja's own bytecode cache,
  which checks each template against its source).
- on_page_markdown: a human page's links to machine pages (`machines/<id>.md`), which MkDocs does not build
  (publish.build stamps them), and to machines' raw files (`raw/<id>/<file>`), which publishing copies,
  written as the links MkDocs would have made, each checked against what the render wrote: a link to a
  machine without a page, or to a raw file not there, fails the build as MkDocs' own check would.
- on_post_page: the page's scripts put in place of their placeholders, as render converted them
  (connlab.site.layout.CODE_PLACEHOLDER: after the Markdown and the search index, which do not go through
  them again); and a page with charts starts their requests from its head
  (connlab.site.publish.preloads).

Written for the versions in WRITTEN_FOR (tests/site/publish/test_publish.py holds the installed ones to
them): the hooks' names and arguments are MkDocs 1.x's; a successor changes this file and mkdocs.yml only.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jinja2
from mkdocs.exceptions import PluginError

from connlab.paths import CACHE_DIR
from connlab.site.layout import (
    CODE_PLACEHOLDER,
    MACHINE_PAGES_DIR,
    RAW_SUBDIR,
    code_block,
    file_url,
    machine_fragment,
    page_url,
    stamped_sources,
)
from connlab.site.publish.preloads import with_chart_preloads
from connlab.site.render.articles import load_articles

WRITTEN_FOR = {"mkdocs": "1.6.1", "mkdocs-material": "9.8.1"}

# The menu's section that lists the articles (mkdocs.yml: `- Articles: []`).
ARTICLES_SECTION = "Articles"


def articles_in_nav(nav: list[Any], pages: list[str]) -> list[Any]:
    """The navigation with its Articles section listing `pages`; a navigation without one as it is (a site
    without articles: the strict build fails on an article page that no menu entry lists), two an error."""
    sections = [item for item in nav if isinstance(item, dict) and ARTICLES_SECTION in item]
    if not sections:
        return nav
    if len(sections) != 1:
        raise PluginError(
            f"mkdocs.yml: nav needs one '{ARTICLES_SECTION}' section for the articles' registry"
        )
    return [{ARTICLES_SECTION: list(pages)} if item is sections[0] else item for item in nav]


# Material's instant navigation and the features that extend it (navigation.instant.prefetch, ...).
INSTANT_NAVIGATION = "navigation.instant"


def without_instant_navigation(features: list[str]) -> list[str]:
    return [f for f in features if f != INSTANT_NAVIGATION and not f.startswith(INSTANT_NAVIGATION + ".")]


def on_config(config: Any) -> Any:
    config["nav"] = articles_in_nav(config["nav"] or [], [article.page for article in load_articles()])
    if not config["site_url"]:
        config["theme"]["features"] = without_instant_navigation(config["theme"]["features"] or [])
    return config


# The theme's templates compiled, kept between builds.
THEME_BYTECODE_DIR = CACHE_DIR / "jinja-theme"


def on_env(env: jinja2.Environment, config: Any, files: Any) -> jinja2.Environment:
    THEME_BYTECODE_DIR.mkdir(parents=True, exist_ok=True)
    env.bytecode_cache = jinja2.FileSystemBytecodeCache(str(THEME_BYTECODE_DIR))
    return env


# A Markdown link to a machine page, or to a section of it: [text](<relative path>machines/<id>.md[#anchor])
_MACHINE_LINK = re.compile(
    r"\[(?P<text>[^\]\n]*)\]\((?P<target>(?:\.\./)*" + MACHINE_PAGES_DIR + r"/(?P<id>[^/)#\s]+)\.md)"
    r"(?P<anchor>#[^)\s]*)?\)"
)


# A Markdown link to a machine's raw file: [text](<relative path>raw/<id>/<file>)
_RAW_LINK = re.compile(
    r"\[(?P<text>[^\]\n]*)\]\((?P<target>(?:\.\./)*" + RAW_SUBDIR + r"/(?P<file>[^)#\s]+))\)"
)


def machine_links(markdown: str, page: str, docs_dir: Path) -> str:
    """The page's Markdown links to machine pages and to machines' raw files, which publishing puts in the
    site and MkDocs never sees, as HTML links to where they are published; each checked, as MkDocs checks a
    link: one to a machine without a page, or to a raw file render did not copy, fails the build."""

    def page_link(found: re.Match[str]) -> str:
        machine = found.group("id")
        if not (stamped_sources(docs_dir) / machine_fragment(machine)).is_file():
            raise PluginError(f"{page}: a link to {found.group('target')}, a machine without a page")
        url = page_url(page, f"{MACHINE_PAGES_DIR}/{machine}.md") + (found.group("anchor") or "")
        return f'<a href="{url}">{found.group("text")}</a>'

    def raw_link(found: re.Match[str]) -> str:
        if not (stamped_sources(docs_dir) / RAW_SUBDIR / found.group("file")).is_file():
            raise PluginError(f"{page}: a link to {found.group('target')}, a raw file the site does not have")
        url = file_url(page, f"{RAW_SUBDIR}/{found.group('file')}")
        return f'<a href="{url}">{found.group("text")}</a>'

    return _RAW_LINK.sub(raw_link, _MACHINE_LINK.sub(page_link, markdown))


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return machine_links(markdown, page.file.src_uri, Path(config["docs_dir"]))


# A script's placeholder as Python-Markdown leaves it: in a paragraph of its own, or as it is.
_CODE_PLACEHOLDER = re.compile(
    r"(?:<p>)?" + re.escape(CODE_PLACEHOLDER).replace(r"\{key\}", r"(?P<key>[0-9a-f]{64})") + r"(?:</p>)?"
)


def with_code_blocks(output: str, page: str, docs_dir: Path) -> str:
    """The built page with each script's placeholder replaced by the script as render converted it
    (connlab.site.layout.CODE_PLACEHOLDER); a placeholder without its file fails the build."""

    def block(found: re.Match[str]) -> str:
        path = stamped_sources(docs_dir) / code_block(found.group("key"))
        try:
            return path.read_text(encoding="utf-8").rstrip("\n")
        except FileNotFoundError:
            raise PluginError(f"{page}: a script render did not convert ({path} is missing)") from None

    return _CODE_PLACEHOLDER.sub(block, output)


def on_post_page(output: str, page: Any, config: Any) -> str:
    return with_chart_preloads(with_code_blocks(output, page.file.src_uri, Path(config["docs_dir"])))
