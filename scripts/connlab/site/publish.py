"""build/docs -> build/site: MkDocs, rebuilding only the machine pages whose Markdown changed.

A clean MkDocs build converts every page again, and with a thousand machines' pages that is most of a build.
MkDocs can skip a page whose output is newer than its Markdown (a "dirty" build), and the renderer rewrites
only pages whose text changed, so an unchanged machine page keeps its time. A skipped page is only right when
everything around its text is unchanged too: the site's configuration, MkDocs and its theme, and the
navigation (the titles of the pages it lists). Their digest is kept beside the site; when it differs, or a
page the navigation lists could be stale, the build is clean. The pages in the navigation are always built
again (they are few, and the search index holds only the pages built), and the site's files whose source is
gone (a machine removed, a chart no longer drawn) are removed, which a dirty build does not do.
"""

from __future__ import annotations

import logging
import os
import shutil
from importlib.metadata import version
from pathlib import Path

from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import Abort, ConfigurationError
from mkdocs.structure.files import File

from connlab.contract.cache import digest
from connlab.errors import LabError
from connlab.paths import REPO_ROOT
from connlab.site.chart_book import CHARTS_SUBDIR
from connlab.site.pages import MACHINE_PAGES_DIR

CONFIG_FILE = REPO_ROOT / "mkdocs.yml"
# The digest of what every page is wrapped in, kept in the site after a build.
CHROME_FILE = ".connlab-chrome"
# Everything a page's wrapping depends on besides its own text and the configuration file.
THEME_PACKAGES = ("mkdocs", "mkdocs-material", "pymdown-extensions", "markdown")
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
    """What wraps every page: the configuration, the theme's packages and the navigation's titles."""
    return digest(
        config_file.read_text(encoding="utf-8"),
        os.environ.get("CONNLAB_SITE_URL", ""),
        *(f"{name} {version(name)}" for name in THEME_PACKAGES),
        *(f"{page.relative_to(docs_dir)}\0{_title_line(page)}" for page in nav_pages),
    )


def _output_of(page: Path, config: MkDocsConfig) -> Path:
    """Where MkDocs writes a page, as MkDocs itself names it (directory URLs or not)."""
    source = str(page.relative_to(config.docs_dir))
    return Path(File(source, config.docs_dir, config.site_dir, config.use_directory_urls).abs_dest_path)


def remove_stale(docs_dir: Path, site_dir: Path) -> list[Path]:
    """The site's machine pages and chart files whose source is gone from build/docs."""
    stale: list[Path] = []
    machines = site_dir / MACHINE_PAGES_DIR
    if machines.is_dir():
        kept = {page.stem for page in (docs_dir / MACHINE_PAGES_DIR).glob("*.md")}
        stale += [folder for folder in machines.iterdir() if folder.is_dir() and folder.name not in kept]
    charts = site_dir / CHARTS_SUBDIR
    if charts.is_dir():
        drawn = {file.name for file in (docs_dir / CHARTS_SUBDIR).iterdir()}
        stale += [file for file in charts.iterdir() if file.name not in drawn]
    for path in stale:
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    return stale


def publish(config_file: Path = CONFIG_FILE) -> str:
    """Build the site; return "clean" or "incremental" (what the build was)."""
    config = load_config(str(config_file), strict=True)
    docs_dir, site_dir = Path(config.docs_dir), Path(config.site_dir)
    machine_pages = docs_dir / MACHINE_PAGES_DIR
    nav_pages = sorted(page for page in docs_dir.rglob("*.md") if page.parent != machine_pages)
    chrome = chrome_digest(config_file, docs_dir, nav_pages)
    kept = site_dir / CHROME_FILE
    dirty = kept.is_file() and kept.read_text(encoding="utf-8") == chrome
    if dirty:
        remove_stale(docs_dir, site_dir)
        for page in nav_pages:  # built again: the navigation and the search index read them
            _output_of(page, config).unlink(missing_ok=True)
    else:
        kept.unlink(missing_ok=True)  # a build that stops half-way must not pass for a complete one
    build_logger = logging.getLogger("mkdocs.commands.build")
    quiet = _DirtyWarningFilter()
    build_logger.addFilter(quiet)
    # Only warnings and errors on the terminal, as `mkdocs build --quiet` prints them.
    logging.getLogger("mkdocs").setLevel(logging.WARNING)
    try:
        build(config, dirty=dirty)
    except (Abort, ConfigurationError) as error:
        raise LabError(f"{config_file}: mkdocs: {error}") from error
    finally:
        build_logger.removeFilter(quiet)
    kept.write_text(chrome, encoding="utf-8")
    return "incremental" if dirty else "clean"
