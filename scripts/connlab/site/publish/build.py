"""build/docs -> build/site: MkDocs builds the human pages and one shell page; each machine page is the shell
stamped with the machine's HTML fragment.

MkDocs builds what people write (the articles, the methodology, contributing, the Machines page) and the
shell: a page with the theme, the navigation and the assets around a marker (connlab.site.layout:
SHELL_MARKDOWN), at the depth of a machine page so that every relative link in it holds for each. It builds
them clean, into a folder of its own (MKDOCS_SITE_DIR), through its public entry points (load_config, build)
and hooks (connlab.site.publish.hooks); what changed is then copied into the site. A machine page is the
shell with its title and content replaced by the machine's fragment, written again only when the shell or
the fragment changed. Machine pages are added to the search index MkDocs wrote, each as one entry: its
summary line, its headings' words and the words of its tables no other page holds (connlab.site.publish.search
says why no more). Where the site has an address, the sitemap MkDocs wrote lists the machine pages in place
of the shell.
"""

from __future__ import annotations

import gzip
import html
import json
import logging
import os
import re
import shutil
import sys
from pathlib import Path

from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import Abort, ConfigurationError

from connlab.contract.cache import digest, read_json, write_atomically
from connlab.contract.files import copy_if_changed, write_bytes_if_changed, write_if_changed
from connlab.errors import LabError
from connlab.paths import DOCS_DIR, MKDOCS_SITE_DIR, REPO_ROOT, SITE_DIR
from connlab.site.layout import (
    FRAGMENT_SUFFIX,
    MACHINE_PAGES_DIR,
    RAW_CHANGED,
    RAW_SUBDIR,
    SHELL_CONTENT,
    SHELL_PAGE,
    SHELL_TITLE,
    stamped_sources,
)
from connlab.site.publish.preloads import with_chart_preloads
from connlab.site.publish.search import add_to_search, page_words
from connlab.site.repository import repository_name, repository_url

CONFIG_FILE = REPO_ROOT / "mkdocs.yml"
# Raised (sys.audit) when MkDocs builds in this interpreter: the tests' process markers see a build that
# starts no process by this event.
MKDOCS_AUDIT_EVENT = "connlab.mkdocs.build"
# Where MkDocs writes the shell (directory URLs): machines/_shell/index.html.
SHELL_OUTPUT = Path(SHELL_PAGE).with_suffix("") / "index.html"
# The machine pages stamped, each by the shell's and its fragment's digests, with what its search entry is
# made of (its summary line, and its headings' and tables' words: connlab.site.publish.search).
STAMPED_INDEX = ".connlab-machine-pages.json"
# Part of each machine page's key there: what a page's entry keeps changed, and each page is read again.
SEARCH_FORM = "summary, headings, tables"
SEARCH_INDEX = Path("search") / "search_index.json"
# What MkDocs writes for crawlers (its sitemap.xml template: one <url> with a <loc> per page, and with
# <lastmod>), and its gzipped copy.
SITEMAP = Path("sitemap.xml")
_SITEMAP_URL = re.compile(r"\n?[ \t]*<url>\s*<loc>(?P<loc>[^<]*)</loc>.*?</url>", re.S)
# The address the site is published at (`make site SITE_URL=...` sets it): MkDocs' site_url, which makes each
# page's canonical link and the sitemap's entries. None by default: a build names no address it was not given.
SITE_URL_VARIABLE = "CONNLAB_SITE_URL"
SITE_URL = os.environ.get(SITE_URL_VARIABLE) or None


def load_site_config(
    config_file: Path = CONFIG_FILE,
    docs_dir: Path = DOCS_DIR,
    staging: Path = MKDOCS_SITE_DIR,
    site_url: str | None = SITE_URL,
) -> MkDocsConfig:
    """mkdocs.yml with this build's docs folder, MkDocs' own output folder (CONNLAB_BUILD_DIR moves both;
    the file names the default ones, for `mkdocs serve`), the site's address (None: the file's: none) and
    the source repository (connlab.site.repository; none: no link). No page links to an editor: the pages
    are generated, so a page's source in the repository is a template, not the page."""
    repo_url = repository_url()
    repository = {"repo_url": repo_url, "repo_name": repository_name(repo_url)} if repo_url else {}
    return load_config(
        str(config_file),
        strict=True,
        docs_dir=str(docs_dir),
        site_dir=str(staging),
        site_url=site_url,
        edit_uri="",
        **repository,
    )


def publish(
    config_file: Path = CONFIG_FILE,
    docs_dir: Path = DOCS_DIR,
    site_dir: Path = SITE_DIR,
    staging: Path = MKDOCS_SITE_DIR,
    site_url: str | None = SITE_URL,
) -> str:
    """Build the site; return what was done ("<n> file(s) copied, <m> machine page(s) stamped")."""
    config = load_site_config(config_file, docs_dir, staging, site_url)
    # Only warnings and errors on the terminal, as `mkdocs build --quiet` prints them.
    logging.getLogger("mkdocs").setLevel(logging.WARNING)
    sys.audit(MKDOCS_AUDIT_EVENT, config.site_dir)
    reported = _Reported()
    logging.getLogger("mkdocs").addHandler(reported)
    try:
        build(config)
    except (Abort, ConfigurationError) as error:
        # MkDocs logs what stopped it, then aborts with a count: the line names the cause.
        raise LabError(f"{config_file}: mkdocs: {error} {'; '.join(reported.lines)}".strip()) from error
    finally:
        logging.getLogger("mkdocs").removeHandler(reported)
    staging = Path(config.site_dir)
    fragments = {
        page.name.removesuffix(FRAGMENT_SUFFIX): page
        for page in (stamped_sources(docs_dir) / MACHINE_PAGES_DIR).glob(f"*{FRAGMENT_SUFFIX}")
    }
    kept = {Path(MACHINE_PAGES_DIR) / machine for machine in fragments} | {Path(RAW_SUBDIR)}
    raw = sync_raw(stamped_sources(docs_dir) / RAW_SUBDIR, site_dir / RAW_SUBDIR)
    copied = sync(staging, site_dir, kept) + raw
    shell = (staging / SHELL_OUTPUT).read_text(encoding="utf-8")
    stamped, entries = stamp_all(shell, fragments, site_dir)
    add_to_search(site_dir / SEARCH_INDEX, staging / SEARCH_INDEX, entries)
    add_to_sitemap(site_dir, staging / SITEMAP, [entry["location"] for entry in entries])
    return f"{copied} file(s) copied, {stamped} machine page(s) stamped"


class _Reported(logging.Handler):
    """The warnings and errors MkDocs logs during a build (under --strict a warning stops it), last lines."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage().strip().splitlines()[-1])


def sync(staging: Path, site_dir: Path, machine_dirs: set[Path]) -> int:
    """MkDocs' output copied into the site where it changed (the shell left out); the site's files that are
    neither MkDocs' nor a machine page's removed. Returns how many files were copied."""
    made: set[Path] = set()
    copied = 0
    shell_dir = SHELL_OUTPUT.parent
    for folder, _, names in os.walk(staging):
        relative_folder = Path(folder).relative_to(staging)
        if relative_folder == shell_dir:
            continue
        for name in names:
            relative = relative_folder / name
            made.add(relative)
            copied += copy_if_changed(staging / relative, site_dir / relative)
    for folder, subfolders, names in os.walk(site_dir, topdown=True):
        relative_folder = Path(folder).relative_to(site_dir)
        # A machine page's folder is the stamping's, kept while the machine has a fragment.
        subfolders[:] = [sub for sub in subfolders if relative_folder / sub not in machine_dirs]
        for name in names:
            relative = relative_folder / name
            if relative not in made and not (relative_folder == Path(".") and name == STAMPED_INDEX):
                (site_dir / relative).unlink()
    for machine_dir in sorted((site_dir / MACHINE_PAGES_DIR).glob("*/")):
        if machine_dir.relative_to(site_dir) not in machine_dirs and not any(machine_dir.rglob("*")):
            shutil.rmtree(machine_dir)
    return copied


def sync_raw(source: Path, target: Path) -> int:
    """The machines' raw files copied into the site: where the site has them, only the folders of the
    machines render listed as changed (RAW_CHANGED; none listed: none changed since the last copy), else
    every file by its status. The list goes once they are copied."""
    journal = source / RAW_CHANGED
    pending = read_json(journal)
    if not target.is_dir():
        copied = sync_by_status(source, target)
    else:
        copied = 0
        for machine in pending if isinstance(pending, list) else []:
            if (source / machine).is_dir():
                copied += sync_by_status(source / machine, target / machine)
            else:
                shutil.rmtree(target / machine, ignore_errors=True)
    journal.unlink(missing_ok=True)
    return copied


def sync_by_status(source: Path, target: Path) -> int:
    """Files copied from source where the copy is missing, of another size or older (their status alone: a
    thousand machines' raw results are not read on every build); the target's others removed."""
    copied = 0
    made: set[Path] = set()
    for folder, _, names in os.walk(source):
        for name in names:
            path = Path(folder) / name
            relative = path.relative_to(source)
            if relative == Path(RAW_CHANGED):
                continue
            made.add(relative)
            copy = target / relative
            if copy.is_file():
                kept, new = copy.stat(), path.stat()
                if kept.st_size == new.st_size and kept.st_mtime_ns >= new.st_mtime_ns:
                    continue
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, copy)
            copied += 1
    for folder, _, names in os.walk(target):
        for name in names:
            if (Path(folder) / name).relative_to(target) not in made:
                (Path(folder) / name).unlink()
    return copied


# A machine page's first paragraph after its heading: the line the search index shows for it.
_FIRST_PARAGRAPH = re.compile(r"<p>(.*?)</p>", re.S)
_TAG = re.compile(r"<[^>]+>")


def stamp(shell: str, machine: str, fragment: str) -> str:
    """The shell with the machine's title and its fragment for content, its charts' requests started from
    its head."""
    start = shell.index(f'<h1 id="{SHELL_TITLE}"')
    mark = f"<p>{SHELL_CONTENT}</p>"
    end = shell.index(mark, start) + len(mark)
    page = shell[:start] + fragment + shell[end:]
    page = page.replace(f"{MACHINE_PAGES_DIR}/{Path(SHELL_PAGE).stem}/", f"{MACHINE_PAGES_DIR}/{machine}/")
    return with_chart_preloads(page.replace(SHELL_TITLE, html.escape(machine)))


def summary_line(fragment: str) -> str:
    found = _FIRST_PARAGRAPH.search(fragment)
    return " ".join(html.unescape(_TAG.sub("", found.group(1))).split()) if found else ""


def stamp_all(shell: str, fragments: dict[str, Path], site_dir: Path) -> tuple[int, list[dict[str, str]]]:
    """Every machine page whose shell or fragment changed, stamped; what the search entries of all of them
    are made of (connlab.site.publish.search.add_to_search makes them)."""
    index_path = site_dir / STAMPED_INDEX
    known = read_json(index_path)
    known = known if isinstance(known, dict) else {}
    shell_digest = digest(shell)
    kept: dict[str, dict[str, str]] = {}
    stamped = 0
    for machine, fragment_path in sorted(fragments.items()):
        status = fragment_path.stat()
        key = digest(shell_digest, SEARCH_FORM, str([status.st_size, status.st_mtime_ns, status.st_ino]))
        target = site_dir / MACHINE_PAGES_DIR / machine / "index.html"
        entry = known.get(machine)
        if not (isinstance(entry, dict) and entry.get("key") == key and target.is_file()):
            fragment = fragment_path.read_text(encoding="utf-8")
            write_if_changed(target, stamp(shell, machine, fragment))
            entry = {"key": key, "summary": summary_line(fragment), **page_words(fragment)}
            stamped += 1
        kept[machine] = entry
    write_atomically(index_path, json.dumps(kept))
    entries = [
        {"location": f"{MACHINE_PAGES_DIR}/{machine}/", "title": machine, **entry}
        for machine, entry in kept.items()
    ]
    return stamped, entries


def add_to_sitemap(site_dir: Path, made: Path, locations: list[str]) -> None:
    """The sitemap MkDocs made, listing the machine pages and not the shell (MkDocs lists the pages it
    builds: the shell, which is never published, and none of the stamped pages). Each machine page takes the
    shell's entry as its pattern, its address and date. Without the site's address MkDocs lists no page (no
    <loc> can be written), and neither is a machine page."""
    if not made.is_file():
        return
    xml = made.read_text(encoding="utf-8")
    shell_url = f"{Path(SHELL_PAGE).with_suffix('').as_posix()}/"
    shell = next(
        (found for found in _SITEMAP_URL.finditer(xml) if found.group("loc").endswith(shell_url)), None
    )
    if shell is None:
        return
    pattern, loc = shell.group(0), shell.group("loc")
    base = loc[: -len(shell_url)]  # as MkDocs escaped it
    machines = "".join(pattern.replace(loc, base + html.escape(where)) for where in locations)
    xml = xml[: shell.start()] + xml[shell.end() :]
    end = xml.rindex("</urlset>")
    xml = xml[:end].rstrip("\n") + machines + "\n" + xml[end:]
    write_if_changed(site_dir / SITEMAP, xml)
    # The gzipped copy MkDocs writes beside it, without a time in its header: the same text, the same file.
    write_bytes_if_changed(site_dir / f"{SITEMAP}.gz", gzip.compress(xml.encode("utf-8"), mtime=0))
