"""How many worker processes the site stages start for the machine pages they have to make (render makes
their Markdown, publish has MkDocs convert it): one per core when there are many pages, none when starting
workers would cost more than it saves."""

from __future__ import annotations

import os

# Fewer pages than this are made in the stage's own process; each worker gets at least half as many.
MIN_PAGES_FOR_WORKERS = 48


def page_workers(pages: int) -> int:
    """Worker processes for this many pages; 0: make them in this process."""
    workers = min(os.cpu_count() or 1, pages // (MIN_PAGES_FOR_WORKERS // 2) or 1)
    return workers if pages >= MIN_PAGES_FOR_WORKERS and workers >= 2 else 0
