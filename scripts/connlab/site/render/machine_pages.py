"""Machine pages kept under build/cache by the hash of everything they show, so that adding one machine
renders one machine's page.

A machine's page depends on its own facts, its own verdicts, the published figures beside them, the templates
and the code, never on another machine (its verdict table leaves out the summary across machines for this
reason). What is kept is the page's HTML fragment (render.fragments), which publishing stamps into the
site's shell page. A machine page's charts are drawn in the browser from the spec the page holds, with no
file beside them (connlab.site.charts.book), so the fragment is all there is to keep.

Many pages to render (a cold build) are rendered in worker processes across the cores, each with its own
renderer over the same data and a share of the machines; each writes its pages and their cache entries,
and reports their keys.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from connlab.contract.cache import (
    canonical_bytes,
    digest,
    read_json,
    read_text,
    source_digest,
    write_atomically,
)
from connlab.contract.files import write_if_changed
from connlab.interrupts import WorkerPool
from connlab.paths import CACHE_DIR, EXPERIMENTS_DIR, REPO_ROOT, SITE_SRC_DIR
from connlab.site.charts import compiled as compiled_charts
from connlab.site.layout import machine_fragment, machine_page, stamped_sources
from connlab.site.render.verdicts import VerdictTable

# The renderer (render.renderer.PageRenderer), which imports this module: known here by what it does.
PageRenderer = Any

PAGES_CACHE_DIR = CACHE_DIR / "machine-pages"
# Fewer due pages than this are rendered in the stage's own process; each worker gets at least half as many.
MIN_PAGES_FOR_WORKERS = 48


def page_workers(pages: int) -> int:
    """Worker processes for this many pages (one per core when there are many); 0: render them here."""
    workers = min(os.cpu_count() or 1, pages // (MIN_PAGES_FOR_WORKERS // 2) or 1)
    return workers if pages >= MIN_PAGES_FOR_WORKERS and workers >= 2 else 0


# Everything a page is made with besides its data: the templates, the experiments (plans), the code.
CODE_ROOTS = (SITE_SRC_DIR, EXPERIMENTS_DIR, REPO_ROOT / "scripts" / "connlab")
CODE_SUFFIXES = {".j2", ".md", ".yaml", ".sql", ".py"}


def code_digest() -> str:
    files = sorted(
        path
        for root in CODE_ROOTS
        for path in root.rglob("*")
        if path.is_file() and path.suffix in CODE_SUFFIXES
    )
    return digest(*(str(path.relative_to(REPO_ROOT)) for path in files), source_digest(*files))


# Which machine page build/docs holds from which key, and the file's status once written: a page whose key and
# file are unchanged is neither read back from the cache nor compared with what is there (at a thousand
# machines that was reading and decoding some 400 MB on every build).
WRITTEN_INDEX = "written.json"


@dataclass
class MachinePages:
    pages: dict[Path, str]  # to write: rendered now, or read back from the cache
    rendered: dict[Path, str]  # rendered now: their keys, stored once the charts are made
    keys: dict[Path, str]  # every machine's page: its key
    kept: set[Path] = field(default_factory=set)  # written before from the same key, untouched since
    written: list[Path] = field(default_factory=list)  # written by workers, their text changed


def _status(path: Path) -> list[int] | None:
    try:
        status = path.stat()
    except FileNotFoundError:
        return None
    return [status.st_size, status.st_mtime_ns, status.st_ino]


def render_machine_pages(
    renderer: PageRenderer, slugs: list[str], cache_dir: Path = PAGES_CACHE_DIR
) -> MachinePages:
    """Every measured machine's page: kept where build/docs holds it from the same inputs, read from the
    cache where its inputs are unchanged, else rendered with chart placeholders (stored once the charts are
    made: store_machine_pages)."""
    # A page names the compiled charts' set, which changes with node_modules' vega-lite as well as the code.
    code = digest(code_digest(), compiled_charts.compiler_digest())
    written = read_json(cache_dir / WRITTEN_INDEX)
    written = written if isinstance(written, dict) else {}
    result = MachinePages({}, {}, {})
    due: Due = []
    for machine in renderer.machines:
        if machine.get("published"):
            continue
        machine_id = str(machine["id"])
        path = stamped_sources(renderer.docs_dir) / machine_fragment(machine_id)
        inputs = [machine, *(renderer.machine_inputs(slug, machine_id) for slug in slugs)]
        # orjson: encoding a thousand machines' inputs with json took a quarter of a second of every render.
        key = digest(code, canonical_bytes(inputs).decode())
        entry = written.get(str(path))
        if isinstance(entry, dict) and entry.get("key") == key and entry.get("status") == _status(path):
            result.kept.add(path)
            result.keys[path] = key
            continue
        cached = read_text(cache_dir / f"{key}{PAGE_SUFFIX}")
        if cached is not None:
            result.pages[path] = cached
            result.keys[path] = key
            continue
        due.append((path, machine_id, key))
    workers = page_workers(len(due))
    if not workers:
        for path, machine_id, key in due:
            _render_one(renderer, slugs, result, path, machine_id, key)
        return result
    shares = [
        (type(renderer), renderer.data_dir, renderer.docs_dir, slugs, due[index::workers], cache_dir)
        for index in range(workers)
    ]
    with WorkerPool(workers) as pool:
        for rendered, changed in pool.map(render_share, *zip(*shares, strict=True)):
            for path, key in rendered.items():
                result.keys[path] = key
                result.kept.add(path)
            result.written += changed
    return result


Due = list[tuple[Path, str, str]]  # (page, machine, key) of each page to render


def _render_one(
    renderer: PageRenderer, slugs: list[str], result: MachinePages, path: Path, machine_id: str, key: str
) -> None:
    """A machine's page as HTML with chart placeholders; its key noted, to store once the charts are made."""
    first = len(renderer.chart_book.requests)
    markdown = renderer.render_machine_page(machine_id, slugs)
    result.pages[path] = renderer.fragments.convert(machine_page(machine_id), markdown)
    if any(request.file_names() for request in renderer.chart_book.requests[first:]):
        # The cache keeps the page alone: a chart file beside it would be neither kept nor checked.
        raise ValueError(f"{path}: a machine page's charts are drawn in the browser only (svg=False)")
    result.rendered[path] = result.keys[path] = key


def render_share(
    renderer_class: type, data_dir: Path, docs_dir: Path, slugs: list[str], due: Due, cache_dir: Path
) -> tuple[dict[Path, str], list[Path]]:
    """A worker's share of the machine pages, rendered, their charts made, written and cached: what
    render_site does for the pages it renders itself."""
    renderer = renderer_class(data_dir, docs_dir)
    share = MachinePages({}, {}, {})
    for path, machine_id, key in due:
        _render_one(renderer, slugs, share, path, machine_id, key)
    pages = renderer.chart_book.resolve(share.pages)
    written = [path for path, text in pages.items() if write_if_changed(path, text)]
    store_machine_pages(pages, share.rendered, cache_dir)
    return share.rendered, written


# A cached page is the page's HTML fragment itself, under its key.
PAGE_SUFFIX = ".html"


def store_machine_pages(
    pages: dict[Path, str], rendered: dict[Path, str], cache_dir: Path = PAGES_CACHE_DIR
) -> None:
    """Keep each page rendered now under its key, once it is written to build/docs: as a second link to the
    written file, not a second copy (a thousand machines' pages are 220 MB, and encoding and writing them
    again was a tenth of a cold render). A page is only ever replaced by renaming a new file over it
    (write_if_changed), so the entry keeps the text it was made with. Where no link can be made (the cache
    on another file system), the text is written."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    for path, key in rendered.items():
        entry = cache_dir / f"{key}{PAGE_SUFFIX}"
        if entry.is_file():
            continue
        partial = entry.with_name(f"{entry.name}.{os.getpid()}.tmp")
        try:
            partial.unlink(missing_ok=True)
            os.link(path, partial)
            partial.replace(entry)
        except OSError:
            write_atomically(entry, pages[path])


def record_written(keys: dict[Path, str], cache_dir: Path = PAGES_CACHE_DIR) -> None:
    """After the pages are written: each machine page's key and file status."""
    index = {str(path): {"key": key, "status": _status(path)} for path, key in keys.items() if path.is_file()}
    write_atomically(cache_dir / WRITTEN_INDEX, json.dumps(index))


# What a claim carries about every machine at once: a machine's page shows none of it.
ACROSS_MACHINE_CLAIM_KEYS = ("verdicts", "summary", "across")


def shared_verdicts(table: VerdictTable) -> dict:
    """What an article's verdict table holds whichever machine it is for: the published source's column and
    the other published sets' rows (at a thousand machines, hashing these once per page was most of the
    cost of the pages' keys)."""
    return {
        "source": table.source,
        "others": table.others,
        "source_cells": [r["source_cell"] for r in table.rows],
        "other_rows": [{"claim": r["claim"]["id"], "cells": r["cells"]} for r in table.other_rows],
    }
