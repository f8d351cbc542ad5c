"""The two views of an article: across machines on the article's own page, one machine on that machine's page.

An article's page stays the same size whatever the number of machines: it shows what compares machines
(normalised curves, peaks per core, the verdicts summed up) and a machine picker. Each machine's detail (its
tables, its charts, its verdicts) is the same template rendered with the facts of that machine alone, on
machines/<id>/. A template tells the views apart by `view` ("article" or "machine").
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from connlab.contract.facts_files import ACROSS_MACHINE_FACTS

ARTICLE_VIEW = "article"
MACHINE_VIEW = "machine"
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
