"""Where each page and file of the site lives: the machine pages' folder and files, the charts' folders, the
shell every machine page is stamped into, and the URLs between pages as MkDocs serves them (directory URLs).
Shared by render/, charts/ and publish/, and importing none of them."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

MACHINE_PAGES_DIR = "machines"
# The Machines page, which lists every machine (a Markdown page MkDocs builds).
MACHINES_INDEX = "machines.md"
# Every chart's files (CSV, spec, SVG) under build/docs; named here, not with the charts, so that publishing
# does not import the chart code (Altair) to find them.
CHARTS_SUBDIR = "charts"
# The chart kinds compiled to Vega, one file per variant (connlab.site.charts.compiled), among the assets.
COMPILED_CHARTS_SUBDIR = "assets/vega"
# Beside the docs folder, not in it (build/docs-stamped next to build/docs): what publishing puts into the
# site itself rather than through MkDocs. Each machine page's HTML fragment (machines/<id>.html), each
# machine's raw results (raw/<id>/), and the articles' converted scripts (code/<key>.html). MkDocs lists
# every file of its docs folder on every build, excluded or not: at a thousand machines the fragments and raw
# files were eleven thousand files and a quarter of a second of each build.
STAMPED_SUFFIX = "-stamped"


def stamped_sources(docs_dir: Path) -> Path:
    """Where render writes what publishing stamps into the site for a docs folder: a sibling of the docs
    folder named after it, so that two docs folders side by side (a test's) keep theirs apart."""
    return docs_dir.with_name(docs_dir.name + STAMPED_SUFFIX)


# <stamped sources>/<this>/<machine>/: each machine's raw results, downloadable from its page; copied into the
# site's <this>/ by their status.
RAW_SUBDIR = "raw"
# <stamped sources>/<RAW_SUBDIR>/<this>: the machines whose raw files render copied (or removed) since
# publishing last copied them into the site; publishing copies those machines' folders only, then removes the
# list.
RAW_CHANGED = ".changed.json"


def machine_page(machine: str) -> str:
    """A machine's page as MkDocs would name its Markdown (what links and relative URLs are made from)."""
    return f"{MACHINE_PAGES_DIR}/{machine}.md"


def machine_fragment(machine: str) -> str:
    """A machine page's HTML fragment, relative to the stamped sources (stamped_sources): render writes it,
    publish stamps it into the shell."""
    return f"{MACHINE_PAGES_DIR}/{machine}{FRAGMENT_SUFFIX}"


# <stamped sources>/<this>/<key>.html: an article's check-it-yourself script as the Markdown extensions of
# mkdocs.yml convert it, put in place of its placeholder once MkDocs has built the page (publish.hooks), so
# that neither MkDocs' Markdown nor its search index (fetched by every page) goes through the script on every
# build; the key names the fenced block and the converter.
CODE_BLOCKS_SUBDIR = "code"
CODE_PLACEHOLDER = "<!-- connlab-code {key} -->"


def code_block(key: str) -> str:
    """A converted script's file, relative to the stamped sources."""
    return f"{CODE_BLOCKS_SUBDIR}/{key}{FRAGMENT_SUFFIX}"


FRAGMENT_SUFFIX = ".html"
# The one page MkDocs builds for every machine page: the theme, the navigation and the assets around a
# marker, published at the depth of a machine page (machines/<id>/) so that its relative links hold for each.
SHELL_PAGE = f"{MACHINE_PAGES_DIR}/_shell.md"
# The shell's title and content, each replaced by a machine page's (connlab.site.publish.build).
SHELL_TITLE = "connlab-machine-page-title"
SHELL_CONTENT = "connlab-machine-page-content"
SHELL_MARKDOWN = f"""---
search:
  exclude: true
---

# {SHELL_TITLE}

{SHELL_CONTENT}
"""


def page_url(from_page: str, to_page: str) -> str:
    """A relative URL between two Markdown pages as MkDocs serves them (directory URLs: a.md -> a/), for
    raw HTML, whose links MkDocs does not rewrite."""
    return posixpath.relpath(_directory(to_page), _directory(from_page)) + "/"


def file_url(from_page: str, to_file: str) -> str:
    """A relative URL from a Markdown page, as MkDocs serves it, to a file of the site (docs-relative)."""
    return posixpath.relpath(to_file, _directory(from_page))


def _directory(page: str) -> str:
    path = PurePosixPath(page)
    return str(path.parent if path.stem == "index" else path.with_suffix(""))


def picker_options(
    page: str,
    machines: list[dict],
    windows: Mapping[str, int] | None = None,
    section: str | None = None,
) -> list[dict[str, object]]:
    """The machine picker's entries on `page`: every measured machine, with the URL of its page (page_url's,
    from one relative path to the machines' folder: a path computed per machine cost a third of a second
    per page at a thousand machines). With an article's `windows` (each machine's measured windows of the
    article's experiments), the machine with the most of them, ties by name, is the picker's default
    (`"default": true`), and a machine with any leads to the article's section of its page (`section`, the
    article's slug: machine_section_url); one without has no such section, and leads to its page's top."""
    to_folder = posixpath.relpath(MACHINE_PAGES_DIR, _directory(page))
    prefix = "" if to_folder == "." else f"{to_folder}/"
    windows = windows or {}
    options: list[dict[str, object]] = []
    for m in machines:
        if m.get("published"):
            continue
        machine = str(m["id"])
        anchor = f"#{section}" if section and windows.get(machine) else ""
        options.append({"id": machine, "url": f"{prefix}{machine}/{anchor}"})
    if options and any(windows.get(str(o["id"])) for o in options):
        best = min(options, key=lambda o: (-windows.get(str(o["id"]), 0), str(o["id"])))
        best["default"] = True
    return options


def default_option(options: list[dict[str, object]]) -> dict[str, object] | None:
    """The picker's default entry: the one marked so (picker_options), else the first."""
    return next((o for o in options if o.get("default")), options[0] if options else None)


# An article's verdicts on a machine's page: <article's slug><this> (the article's own section is its slug).
CLAIMS_SECTION_SUFFIX = "-claims"


def machine_section_url(url: str, suffix: str = CLAIMS_SECTION_SUFFIX) -> str:
    """A picker's URL to an article's section of a machine's page, made a URL to a part of that section (its
    verdicts); a URL to the page's top (the machine has no such section) stays as it is."""
    return f"{url}{suffix}" if "#" in url else url
