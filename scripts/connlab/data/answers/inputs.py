"""The facts the answers read (answer_facts): each article's, with each measured machine's own rows kept
between builds under its file's status; a fact the answers read that ANSWER_FACTS does not list is an error
(ListedFacts)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import orjson

from connlab.contract.cache import loads_fast, read_json
from connlab.contract.facts_files import facts_path
from connlab.contract.files import write_bytes_whole
from connlab.data.chart_rows import LATENCY_WORKLOAD

# The facts of each article the answers read. Of each measured machine's own file (connlab.contract.
# facts_files) only these are kept between builds, in ANSWER_INPUTS_FILE under the file's status, so that
# adding a machine parses that machine's files rather than a thousand machines' hundred megabytes again. A
# fact the answers read that is not listed here is an error (ListedFacts), not an empty list.
ANSWER_FACTS: dict[str, frozenset[str]] = {
    "too-many-connections": frozenset({"peaks", "points", "poolers"}),
    "pool-sizing": frozenset(
        {
            "fits",
            "simulator_points",
            "sync_summary",
            "queue_points",
            "folk_formula",
            "published_fits",
            "published_points",
            "poolers",
        }
    ),
    "pgbouncer-trade": frozenset({"pool_spread", "churn", "poolers", "published", "trade_curve"}),
    "four-poolers": frozenset({"throughput", "memory", "poolers", "side_by_side"}),
}
ANSWER_INPUTS_FILE = "answer-inputs.json"
# Of a listed fact, the rows the answers read, where they read some only: too-many-connections' points of
# the workload its latency chart draws (chart_rows.latency_across) were half of ANSWER_INPUTS_FILE's 40 MB
# at a thousand machines, read and written whole on every build.
ANSWER_ROWS: dict[tuple[str, str], Callable[[dict], bool]] = {
    ("too-many-connections", "points"): lambda row: row.get("workload") == LATENCY_WORKLOAD,
}


def _answer_rows(slug: str, name: str, rows: list) -> list:
    read = ANSWER_ROWS.get((slug, name))
    return list(rows) if read is None else [row for row in rows if read(row)]


class ListedFacts(dict):
    """An article's facts as the answers see them: only those ANSWER_FACTS lists, and asking for another is
    an error that names it."""

    def __init__(self, slug: str, facts: dict[str, list]) -> None:
        super().__init__(facts)
        self.slug = slug

    def _check(self, name: object) -> None:
        if name not in ANSWER_FACTS[self.slug]:
            raise KeyError(
                f"the answers read {self.slug}'s fact {name}, which answers.inputs.ANSWER_FACTS does not list"
            )

    def get(self, name: str, default: object = None) -> object:
        self._check(name)
        return super().get(name, default)

    def __getitem__(self, name: str) -> list:
        self._check(name)
        return super().__getitem__(name)


def answer_facts(facts_dir: Path, cache_file: Path) -> dict[str, ListedFacts]:
    """Each article's facts the answers read, whole (its own file with every measured machine's rows added
    back, as read_facts gives them; of a fact ANSWER_ROWS names, the rows it keeps); a machine's file whose
    status is unchanged since it was read is taken from cache_file."""
    cached = read_json(cache_file)
    known: dict[str, list] = cached if isinstance(cached, dict) else {}
    entries: dict[str, list] = {}
    found: dict[str, ListedFacts] = {}
    for slug, names in ANSWER_FACTS.items():
        if not facts_path(facts_dir, slug).is_file():
            found[slug] = ListedFacts(slug, {})
            continue
        whole: dict[str, list] = loads_fast(facts_path(facts_dir, slug).read_bytes())  # type: ignore[assignment]
        facts = {name: _answer_rows(slug, name, rows) for name, rows in whole.items() if name in names}
        folder = facts_dir / slug
        for file_name in sorted(os.listdir(folder)) if folder.is_dir() else []:
            if not file_name.endswith(".json"):
                continue
            path = os.path.join(folder, file_name)
            status = os.stat(path)
            signature = [status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino]
            key = f"{slug}/{file_name}"
            entry = known.get(key)
            if not (isinstance(entry, list) and len(entry) == 2 and entry[0] == signature):
                with open(path, "rb") as machine_file:
                    own: dict[str, list] = loads_fast(machine_file.read())  # type: ignore[assignment]
                entry = [
                    signature,
                    {name: _answer_rows(slug, name, rows) for name, rows in own.items() if name in names},
                ]
            entries[key] = entry
            for name, rows in entry[1].items():
                facts.setdefault(name, []).extend(rows)
        found[slug] = ListedFacts(slug, facts)
    if entries.keys() != known.keys() or any(entries[key] is not known[key] for key in entries):
        write_bytes_whole(cache_file, orjson.dumps(entries))
    return found
