"""The two views of an article: across machines on the article's own page, one machine on that machine's page.

An article's page stays the same size whatever the number of machines: it shows what compares machines
(normalised curves, peaks per core, the verdicts summed up) and a machine picker. Each machine's detail (its
tables, its charts, its verdicts) is the same template rendered with the facts of that machine alone, on
machines/<id>.md. A template tells the views apart by `view` ("article" or "machine").
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from connlab.contract.facts_files import ACROSS_MACHINE_FACTS

ARTICLE_VIEW = "article"
MACHINE_VIEW = "machine"
MACHINE_PAGES_DIR = "machines"
# Every chart's files (CSV, spec, SVG) under build/docs; named here, not with the charts, so that publishing
# does not import the chart code (Altair) to find them.
CHARTS_SUBDIR = "charts"
# The chart kinds compiled to Vega, one file per variant (connlab.site.compiled_charts), among the assets.
COMPILED_CHARTS_SUBDIR = "assets/vega"

Records = list[dict]


@dataclass
class FactsIndex:
    """An article's facts split by machine once, so that each view takes its records without a scan.

    facts: the article's facts file. own_facts: a measured machine's own file (connlab.contract.facts_files),
    None where there is none (facts written whole, as a test may). counted: each fact's rows over every
    machine, where the article's file alone no longer holds them."""

    facts: dict[str, Records]
    own_facts: Callable[[str], dict[str, Records] | None] = lambda machine: None
    counted: dict[str, int] | None = None
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
        if self.counted is not None:
            return dict(self.counted)
        return {
            name: len(records) if isinstance(records, list) else 1 for name, records in self.facts.items()
        }

    def for_machine(self, machine: str) -> dict[str, Records]:
        """Each fact that names machines, cut to this machine's records; a fact summed up over every machine
        (one the article shows) empty, since it changes whenever any machine does and a machine's page is
        rendered again only when its own inputs change; the others (published figures, settings) whole."""
        own = self.own_facts(machine)
        if own is not None:
            return {
                name: own.get(name, [] if name in ACROSS_MACHINE_FACTS else records)
                for name, records in self.facts.items()
            }
        return {
            name: self.by_machine[name].get(machine, [])
            if name in self.by_machine
            else []
            if name in ACROSS_MACHINE_FACTS
            else records
            for name, records in self.facts.items()
        }

    def shared(self) -> dict[str, Records]:
        """What every machine's view takes from the article's file as it is (all but the facts summed up
        over every machine): with the machine's own file, the inputs of its page."""
        return {name: records for name, records in self.facts.items() if name not in ACROSS_MACHINE_FACTS}

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
    """A machine's page as MkDocs would name its Markdown (what links and relative URLs are made from)."""
    return f"{MACHINE_PAGES_DIR}/{machine}.md"


def machine_fragment(machine: str) -> str:
    """The docs-relative file of a machine page's HTML fragment (render writes it, publish stamps it into
    the shell; mkdocs.yml's exclude_docs keeps MkDocs from copying it)."""
    return f"{MACHINE_PAGES_DIR}/{machine}{FRAGMENT_SUFFIX}"


FRAGMENT_SUFFIX = ".html"
# The one page MkDocs builds for every machine page: the theme, the navigation and the assets around a
# marker, published at the depth of a machine page (machines/<id>/) so that its relative links hold for each.
SHELL_PAGE = f"{MACHINE_PAGES_DIR}/_shell.md"
# The shell's title and content, each replaced by a machine page's (connlab.site.publish).
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


def _directory(page: str) -> str:
    path = PurePosixPath(page)
    return str(path.parent if path.stem == "index" else path.with_suffix(""))


def picker_options(page: str, machines: list[dict]) -> list[dict[str, str]]:
    """The machine picker's entries on `page`: every measured machine, with the URL of its page (page_url's,
    from one relative path to the machines' folder: a path computed per machine cost a third of a second
    per page at a thousand machines)."""
    to_folder = posixpath.relpath(MACHINE_PAGES_DIR, _directory(page))
    prefix = "" if to_folder == "." else f"{to_folder}/"
    return [{"id": str(m["id"]), "url": f"{prefix}{m['id']}/"} for m in machines if not m.get("published")]
