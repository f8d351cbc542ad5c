"""Machine pages kept under build/cache by the hash of everything they show, so that adding one machine
renders one machine's page.

A machine's page depends on its own facts, its own verdicts, the published figures beside them, the templates
and the code, never on another machine (its verdict table leaves out the summary across machines for this
reason). The cache holds the finished Markdown and the names of the chart files it shows; a page whose chart
files are missing is rendered again.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from connlab.contract.cache import canonical_json, digest, read_json, source_digest, write_atomically
from connlab.paths import CACHE_DIR, EXPERIMENTS_DIR, REPO_ROOT, SITE_SRC_DIR
from connlab.site.pages import machine_page
from connlab.site.verdicts import VerdictTable

if TYPE_CHECKING:
    from connlab.site.render import PageRenderer

PAGES_CACHE_DIR = CACHE_DIR / "machine-pages"
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


def render_machine_pages(
    renderer: PageRenderer, slugs: list[str], cache_dir: Path = PAGES_CACHE_DIR
) -> tuple[dict[Path, str], dict[Path, tuple[str, list[str]]]]:
    """Every measured machine's page: read from the cache where its inputs are unchanged, else rendered with
    chart placeholders. Returns the pages and, for those rendered, (cache key, chart file names) to store
    once the charts are made (store_machine_pages)."""
    code = code_digest()
    folder = renderer.chart_book.folder
    pages: dict[Path, str] = {}
    rendered: dict[Path, tuple[str, list[str]]] = {}
    for machine in renderer.machines:
        if machine.get("published"):
            continue
        machine_id = str(machine["id"])
        path = renderer.docs_dir / machine_page(machine_id)
        inputs = [machine, *(renderer.machine_inputs(slug, machine_id) for slug in slugs)]
        key = digest(code, canonical_json(inputs))
        cached = read_json(cache_dir / f"{key}.json")
        if isinstance(cached, dict):
            files = {folder / name for name in cached["chart_files"]}
            if all(file.is_file() for file in files):
                pages[path] = cached["text"]
                renderer.chart_book.files.update(files)
                continue
        first = len(renderer.chart_book.requests)
        pages[path] = renderer.render_machine_page(machine_id, slugs)
        chart_files = [
            name for request in renderer.chart_book.requests[first:] for name in request.file_names()
        ]
        rendered[path] = (key, chart_files)
    return pages, rendered


def store_machine_pages(
    pages: dict[Path, str], rendered: dict[Path, tuple[str, list[str]]], cache_dir: Path = PAGES_CACHE_DIR
) -> None:
    for path, (key, chart_files) in rendered.items():
        write_atomically(
            cache_dir / f"{key}.json", json.dumps({"text": pages[path], "chart_files": chart_files})
        )


# What a claim carries about every machine at once: a machine's page shows none of it.
ACROSS_MACHINE_CLAIM_KEYS = ("verdicts", "summary", "across")


def verdicts_input(table: VerdictTable) -> dict:
    """A machine's verdict table as data for the hash of its page's inputs, without what each claim holds
    about the other machines (which would change every machine's key whenever one is added, and would make
    the key cost as much as there are machines)."""

    def own(claim: dict) -> dict:
        return {key: value for key, value in claim.items() if key not in ACROSS_MACHINE_CLAIM_KEYS}

    return {
        "columns": [asdict(column) for column in table.columns],
        "source": table.source,
        "others": table.others,
        "missing": table.missing,
        "rows": [
            {"claim": own(r["claim"]), "cells": r["cells"], "source": r["source_cell"]} for r in table.rows
        ],
        "other_rows": [{"claim": own(r["claim"]), "cells": r["cells"]} for r in table.other_rows],
    }
