"""The two views of an article: across machines on the article's own page, one machine on that machine's page.

An article's page stays the same size whatever the number of machines: it shows what compares machines
(normalised curves, peaks per core, the verdicts summed up) and a machine picker. Each machine's detail (its
tables, its charts, its verdicts) is the same template rendered with the facts of that machine alone, on
machines/<id>.md. A template tells the views apart by `view` ("article" or "machine").
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import PurePosixPath

ARTICLE_VIEW = "article"
MACHINE_VIEW = "machine"
MACHINE_PAGES_DIR = "machines"
# Facts an article's page shows for every machine at once (one chart each): everything else that names a
# machine is that machine's detail and lives on its page.
ACROSS_MACHINE_FACTS = frozenset(
    {
        "normalised",
        "normalised_spread",
        "peaks_by_cores",
        "version_summary",
        "seed_version_peaks",
        "network_summary",
    }
)

Records = list[dict]


@dataclass
class FactsIndex:
    """An article's facts split by machine once, so that each view takes its records without a scan."""

    facts: dict[str, Records]
    by_machine: dict[str, dict[str, Records]] = field(default_factory=dict)  # fact -> machine -> records

    def __post_init__(self) -> None:
        for name, records in self.facts.items():
            names_machines = isinstance(records, list) and bool(records)
            if names_machines and all(isinstance(r, dict) and "machine" in r for r in records):
                grouped: dict[str, Records] = defaultdict(list)
                for record in records:
                    grouped[str(record["machine"])].append(record)
                self.by_machine[name] = dict(grouped)

    def counts(self) -> dict[str, int]:
        """How many records each fact has over every machine: what tells "nothing measured yet"."""
        return {
            name: len(records) if isinstance(records, list) else 1 for name, records in self.facts.items()
        }

    def for_machine(self, machine: str) -> dict[str, Records]:
        """Each fact that names machines, cut to this machine's records; a fact summed up over every machine
        (one the article shows) empty, since it changes whenever any machine does and a machine's page is
        rendered again only when its own inputs change; the others (published figures, settings) whole."""
        return {
            name: self.by_machine[name].get(machine, [])
            if name in self.by_machine
            else []
            if name in ACROSS_MACHINE_FACTS
            else records
            for name, records in self.facts.items()
        }

    def across(self, measured: set[str]) -> dict[str, Records]:
        """The article's view: the cross-machine facts whole, the per-machine ones without measured machines
        (published figures stay: there are a handful, and the article compares them with its source)."""
        view: dict[str, Records] = {}
        for name, records in self.facts.items():
            if name in ACROSS_MACHINE_FACTS or name not in self.by_machine:
                view[name] = records
            else:
                view[name] = [r for m, rs in self.by_machine[name].items() if m not in measured for r in rs]
        return view


def machine_page(machine: str) -> str:
    """The docs-relative Markdown file of a machine's page."""
    return f"{MACHINE_PAGES_DIR}/{machine}.md"


def page_url(from_page: str, to_page: str) -> str:
    """A relative URL between two Markdown pages as MkDocs serves them (directory URLs: a.md -> a/), for
    raw HTML, whose links MkDocs does not rewrite."""

    def directory(page: str) -> str:
        path = PurePosixPath(page)
        return str(path.parent if path.stem == "index" else path.with_suffix(""))

    return posixpath.relpath(directory(to_page), directory(from_page)) + "/"


def picker_options(page: str, machines: list[dict]) -> list[dict[str, str]]:
    """The machine picker's entries on `page`: every measured machine, with the URL of its page."""
    return [
        {"id": str(m["id"]), "url": page_url(page, machine_page(str(m["id"])))}
        for m in machines
        if not m.get("published")
    ]
