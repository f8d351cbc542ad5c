"""build/data -> build/docs: every page of the site rendered (render_site), its charts made at once, the
assets, the raw downloads and the converted scripts written, and what a page no longer in the site left
removed. Files are only rewritten when their content changes, so an unchanged page does not rebuild the
site.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from connlab.contract.cache import read_json
from connlab.contract.files import copy_if_changed, write_if_changed
from connlab.interrupts import WorkerPool
from connlab.paths import ASSETS_SRC_DIR, DATA_DIR, DOCS_DIR, PAGES_SRC_DIR, RESULTS_DIR
from connlab.site.charts.cache import warm_svg_renderer
from connlab.site.charts.compiled import write_compiled_assets
from connlab.site.charts.constants import CHARTS_SCRIPT_NAME, with_constants
from connlab.site.charts.vendor import copy_vendored_js
from connlab.site.layout import (
    CHARTS_SUBDIR,
    FRAGMENT_SUFFIX,
    MACHINE_PAGES_DIR,
    RAW_CHANGED,
    RAW_SUBDIR,
    SHELL_MARKDOWN,
    SHELL_PAGE,
    stamped_sources,
)
from connlab.site.render.code_blocks import write_code_blocks
from connlab.site.render.machine_pages import record_written, render_machine_pages, store_machine_pages
from connlab.site.render.renderer import PageRenderer


def render_site(data_dir: Path = DATA_DIR, docs_dir: Path = DOCS_DIR) -> list[Path]:
    # The few SVG fallbacks a change usually needs (an added machine changes the articles' charts across
    # machines) are drawn by a helper process started now, so that vl-convert's start-up (slow, and holding
    # Python's lock) happens on another core while the pages are rendered here.
    # Ended once the pages are written, warm or not: a render that draws nothing does not wait for it.
    # The compiled charts' assets take two runs of node in a cold build: made on a thread while the
    # pages are rendered, node works on a core of its own and this thread only waits for it.
    with ThreadPoolExecutor(1) as compiling:
        compiled_assets = compiling.submit(write_compiled_assets, docs_dir)
        helper = WorkerPool(1)
        try:
            helper.submit(warm_svg_renderer)
            written = _render_site(data_dir, docs_dir, helper)
        finally:
            helper.stop()
        compiled_assets.result()
    return written


def _render_site(data_dir: Path, docs_dir: Path, helper: WorkerPool) -> list[Path]:
    renderer = PageRenderer(data_dir, docs_dir)
    renderer.chart_book.cache.helper = helper
    pages: dict[Path, str] = {}
    for article in renderer.articles:
        pages[docs_dir / article.page] = renderer.render_deferred(
            f"{article.slug}.md.j2", article.page, article.slug
        )
    # A machine's page holds the articles' details in the order of their names, as it always has.
    slugs = sorted(article.slug for article in renderer.articles)
    machine_pages = render_machine_pages(renderer, slugs)
    pages.update(machine_pages.pages)
    for source in sorted(PAGES_SRC_DIR.rglob("*")):
        if source.is_dir() or source.name.endswith(".facts.sql"):  # data for the page, not a page
            continue
        relative = source.relative_to(PAGES_SRC_DIR)
        if source.name.endswith(".md.j2"):
            page = str(relative).removesuffix(".j2")
            pages[docs_dir / page] = renderer.render_deferred(str(relative), page, Path(page).stem)
        else:
            copy_if_changed(source, docs_dir / relative)
    # Every chart of every page at once: the specs and SVGs missing from the cache are made in parallel.
    pages = renderer.chart_book.resolve(pages)
    written = [path for path, text in pages.items() if write_if_changed(path, text)]
    store_machine_pages(pages, machine_pages.rendered)  # links to the pages just written
    written += machine_pages.written
    record_written(machine_pages.keys)
    for asset in sorted(ASSETS_SRC_DIR.rglob("*")):
        if asset.relative_to(ASSETS_SRC_DIR) == Path(CHARTS_SCRIPT_NAME):
            # With the constants it shares with the Python (charts/constants.json).
            script = with_constants(asset.read_text(encoding="utf-8"))
            write_if_changed(docs_dir / "assets" / asset.name, script)
        elif asset.is_file():
            copy_if_changed(asset, docs_dir / "assets" / asset.relative_to(ASSETS_SRC_DIR))
    copy_vendored_js(docs_dir / "assets")
    leads = renderer.pool_sizes()
    copy_raw_files(leads, RESULTS_DIR, stamped_sources(docs_dir) / RAW_SUBDIR)
    # The page every machine page is stamped into (connlab.site.publish.build).
    if write_if_changed(docs_dir / SHELL_PAGE, SHELL_MARKDOWN):
        written.append(docs_dir / SHELL_PAGE)
    # A machine page whose machine is gone must not linger in the site, nor its charts.
    fragments = set((stamped_sources(docs_dir) / MACHINE_PAGES_DIR).glob(f"*{FRAGMENT_SUFFIX}"))
    for stale in fragments - set(pages) - machine_pages.kept:
        stale.unlink()
    write_code_blocks(renderer.code_blocks, stamped_sources(docs_dir))
    remove_older_layouts(docs_dir)
    for stale in set((docs_dir / CHARTS_SUBDIR).glob("*")) - renderer.chart_book.files:
        stale.unlink()
    return written


def copy_raw_files(leads: dict[str, dict], results_dir: Path, raw_dir: Path) -> None:
    """Each machine's raw files, as downloads its page links (connlab.data.answers lists them), copied by
    their status; a machine no longer listed loses its folder. The machines whose files were copied or
    removed are added to the list publishing reads (RAW_CHANGED), so that it copies those machines'
    folders into the site and does not compare a thousand machines' files again."""
    changed: set[str] = set()
    for lead in leads.values():
        machine = str(lead["machine"])
        # Names joined as text and two stats a file: a Path and four stats for each of a thousand machines'
        # ten thousand files are paid by every render.
        sources, targets = os.path.join(results_dir, machine), os.path.join(raw_dir, machine)
        for relative in lead.get("raw", []):
            if _copy_if_newer(os.path.join(sources, relative), os.path.join(targets, relative)):
                changed.add(machine)
    listed = {str(lead["machine"]) for lead in leads.values()}
    for gone in sorted(set(os.listdir(raw_dir)) - listed - {RAW_CHANGED} if raw_dir.is_dir() else []):
        shutil.rmtree(raw_dir / gone, ignore_errors=True)
        changed.add(gone)
    if changed:
        journal = raw_dir / RAW_CHANGED
        pending = read_json(journal)
        known = set(pending) if isinstance(pending, list) else set()
        write_if_changed(journal, json.dumps(sorted(known | changed)))


def _copy_if_newer(source: str, target: str) -> bool:
    """A raw file copied where the copy is missing, of another size or older, by its status alone: a
    thousand machines' runs are not read on every build. True where it copied; False where the source is
    not a file (data aggregated from another results folder names files not here)."""
    try:
        new = os.stat(source)
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(new.st_mode):
        return False
    try:
        kept = os.stat(target)
    except FileNotFoundError:
        kept = None
    if (
        kept is not None
        and stat.S_ISREG(kept.st_mode)
        and kept.st_size == new.st_size
        and kept.st_mtime_ns >= new.st_mtime_ns
    ):
        return False
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copy2(source, target)
    return True


def remove_older_layouts(docs_dir: Path) -> None:
    """What a build from before machine pages left the docs folder removes from it: a machine's Markdown page
    (MkDocs would build it), and the fragments and raw downloads kept in the docs folder until they moved
    beside it (MkDocs would copy them into the site as files)."""
    machines_dir = docs_dir / MACHINE_PAGES_DIR
    for stale in [*machines_dir.glob("[!_]*.md"), *machines_dir.glob(f"*{FRAGMENT_SUFFIX}")]:
        stale.unlink()
    shutil.rmtree(docs_dir / RAW_SUBDIR, ignore_errors=True)
