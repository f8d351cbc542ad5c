"""An article's facts on disk (build/data/facts), laid out so that no page reads what it does not show.

- `<slug>.json`: every fact, whole, except the rows of measured machines in the facts that name a machine
  (published figures stay): what the article's own page reads.
- `<slug>/<machine>.json`: one measured machine's rows of each fact that names a machine (`[]` where it has
  none): what that machine's page reads.
- `<slug>.counts.json`: each fact's rows over every machine ("nothing measured yet" is told from it).

With a thousand machines an article's facts are tens of megabytes; split, each page reads its own share, and
adding a machine changes one machine's file. A page (the Machines page compares every machine) keeps one file.
`read_facts` puts an article's facts back together whole.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from connlab.contract.cache import loads_fast
from connlab.contract.poolers.registry import CONFIGS

# Facts an article's page shows for every machine at once (one chart each): kept whole in the article's file,
# never on a machine's page. Everything else that names a machine is that machine's detail. A pooler's own
# such facts are its declaration's (PoolerConfig.across_machine_facts).
ACROSS_MACHINE_FACTS = frozenset(
    {
        "normalised",
        "normalised_spread",
        "peaks_by_cores",
        "version_summary",
        "version_spread",
        "seed_version_peaks",
        "network_summary",
        *(name for config in CONFIGS.values() for name in config.across_machine_facts),
    }
)
COUNTS_SUFFIX = ".counts.json"


def facts_path(facts_dir: Path, slug: str) -> Path:
    return facts_dir / f"{slug}.json"


def machine_facts_path(facts_dir: Path, slug: str, machine: str) -> Path:
    return Path(machine_facts_file(facts_dir, slug, machine))


def machine_facts_file(facts_dir: Path | str, slug: str, machine: str) -> str:
    """machine_facts_path as text, for the loops over every machine (a Path object per machine is a cost that
    grows with the machines)."""
    return os.path.join(facts_dir, slug, f"{machine}.json")


def counts_path(facts_dir: Path, slug: str) -> Path:
    return facts_dir / f"{slug}{COUNTS_SUFFIX}"


def facts_text(facts: dict[str, list[str]]) -> str:
    """A facts file from each fact's rows, every row already JSON text (names in order, no indent)."""
    parts = (f"{json.dumps(name)}:[{','.join(rows)}]" for name, rows in sorted(facts.items()))
    return "{" + ",".join(parts) + "}"


def read_facts(facts_dir: Path, slug: str) -> dict[str, list]:
    """An article's (or page's) facts whole: its own file with each measured machine's rows added back (by
    orjson: the json module took most of the answers' time over a thousand machines' files)."""
    facts: dict[str, list] = loads_fast(facts_path(facts_dir, slug).read_bytes())  # type: ignore[assignment]
    folder = facts_dir / slug
    for machine_file in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        for name, rows in loads_fast(machine_file.read_bytes()).items():  # type: ignore[union-attr]
            facts.setdefault(name, []).extend(rows)
    return facts
