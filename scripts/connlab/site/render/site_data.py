"""The build/data files the pages read, each read once per render: the claims and their verdict tables, the
facts (an article's, split into its views by connlab.site.render.views.FactsIndex), the Machines page's
records grouped by machine, and the answers. The renderer (connlab.site.render.renderer.PageRenderer) is
one of these; a cache here lives as long as its renderer, one per build.
"""

from __future__ import annotations

import functools
from pathlib import Path

from connlab.contract.cache import loads_fast, read_json, read_json_written
from connlab.contract.facts_files import counts_path, facts_path, machine_facts_path, read_facts
from connlab.contract.names import ANSWERS_SUBDIR, CLAIMS_SUBDIR, MACHINES_JSON, POOL_SIZES_FILE
from connlab.paths import DATA_DIR, FACTS_DIR
from connlab.site.render.verdicts import VerdictTable, article_columns, build_table, with_machines
from connlab.site.render.views import FactsIndex


class SiteData:
    def __init__(self, data_dir: Path = DATA_DIR) -> None:
        self.data_dir = data_dir
        self.facts_dir = data_dir / FACTS_DIR.relative_to(DATA_DIR)
        self.claims_dir = data_dir / CLAIMS_SUBDIR
        self._facts_indexes: dict[str, FactsIndex] = {}
        self._json_files: dict[Path, dict] = {}
        machines_file = data_dir / MACHINES_JSON
        self.machines = loads_fast(machines_file.read_bytes()) if machines_file.exists() else []

    def claims(self, slug: str) -> list[dict]:
        return self.claims_file(slug).get("claims", [])

    @functools.cache  # noqa: B019 (one renderer per build: every machine's page asks for the same few)
    def claims_file(self, slug: str) -> dict:
        """{"source": the article's published source, "claims": [...]}; empty when the article has none."""
        return self._json(self.claims_dir / f"{slug}.json")

    def claim_tally(self, machine_id: str) -> dict[str, int]:
        """How many claims of all articles hold on a machine, of those measured there."""
        return dict(self._claim_tallies().get(machine_id, {"holds": 0, "measured": 0}))

    @functools.cache  # noqa: B019 (one renderer per build: the cache lives as long as its data)
    def _claim_tallies(self) -> dict[str, dict[str, int]]:
        # Every machine's tally in one pass over the verdicts, not one pass per machine.
        tallies: dict[str, dict[str, int]] = {}
        for path in sorted(self.claims_dir.glob("*.json")):
            for claim in self._json(path)["claims"]:
                for verdict in claim["verdicts"]:
                    tally = tallies.setdefault(verdict["machine"], {"holds": 0, "measured": 0})
                    if verdict["verdict"] not in ("not measured", "cannot be evaluated"):
                        tally["measured"] += 1
                        tally["holds"] += verdict["verdict"] == "holds"
        return tallies

    def verdict_table(self, slug: str, machine: str | None = None) -> VerdictTable:
        """The article's table: across machines, no machine's column; with a machine, that machine's column
        (each machine's page has its own)."""
        if machine is None:
            return self._article_table(slug)
        columns_by_machine, measured_by_machine = self._machine_records()
        claims_file = self.claims_file(slug)
        columns = article_columns(
            columns_by_machine.get(machine, []),
            measured_by_machine.get(machine, []),
            claims_file.get("experiments", []),
        )
        return with_machines(self._article_table(slug), claims_file, columns, self._verdicts_by_machine(slug))

    @functools.cache  # noqa: B019 (one renderer per build)
    def _article_table(self, slug: str) -> VerdictTable:
        return build_table(self.claims_file(slug), [], self._published(), self._verdicts_by_machine(slug))

    @functools.cache  # noqa: B019 (one renderer per build)
    def _published(self) -> list[str]:
        """The published sets' ids, listed once, not once per machine's verdict table (quadratic)."""
        return [str(m["id"]) for m in self.machines if m.get("published")]

    @functools.cache  # noqa: B019 (one renderer per build)
    def _machine_records(self) -> tuple[dict[str, list[dict]], dict[str, list[dict]]]:
        """The Machines facts' column headers and measured experiments, grouped by machine once: each
        machine's verdict table takes its own instead of scanning every machine's (quadratic in machines)."""
        facts = self.facts("machines")
        grouped: tuple[dict[str, list[dict]], dict[str, list[dict]]] = ({}, {})
        for index, name in enumerate(("columns", "measured")):
            for record in facts.get(name, []):
                grouped[index].setdefault(str(record["machine"]), []).append(record)
        return grouped

    @functools.cache  # noqa: B019 (one renderer per build)
    def _verdicts_by_machine(self, slug: str) -> list[dict[str, dict]]:
        """Each claim's verdicts by machine, indexed once per article rather than once per machine's page."""
        return [{v["machine"]: v for v in claim["verdicts"]} for claim in self.claims(slug)]

    def facts(self, slug: str) -> dict:
        return self._json(self.facts_dir / f"{slug}.json")

    def answers(self, slug: str) -> dict:
        """The short answer and verdict rows connlab.data.answers wrote from the same facts and claims."""
        return self._json(self.data_dir / ANSWERS_SUBDIR / f"{slug}.json")

    def pool_sizes(self) -> dict:
        """Each machine page's lead (its pool size, dates and raw files), by machine."""
        return self._json(self.data_dir / ANSWERS_SUBDIR / POOL_SIZES_FILE)

    def _json(self, path: Path) -> dict:
        """A data file, read once per render: every machine's page asks for the same few. One this process
        has just written (the claims and answers, where aggregation ran in it) is not parsed again."""
        if path not in self._json_files:
            value = read_json_written(path)
            self._json_files[path] = value if value is not None else {}  # type: ignore[assignment]
        return self._json_files[path]

    @functools.cache  # noqa: B019 (one renderer per build)
    def whole_facts(self, slug: str) -> dict:
        """An article's facts with every machine's rows, read once per render; none where aggregation wrote
        none (a build of other articles still renders its configurations, without PgBouncer's crowd)."""
        return read_facts(self.facts_dir, slug) if facts_path(self.facts_dir, slug).is_file() else {}

    def _facts_index(self, slug: str) -> FactsIndex:
        if slug not in self._facts_indexes:
            facts_dir = self.facts_dir
            counted = read_json(counts_path(facts_dir, slug))

            def own_facts(machine: str) -> dict | None:
                own = read_json(machine_facts_path(facts_dir, slug, machine))
                return own if isinstance(own, dict) else None

            self._facts_indexes[slug] = FactsIndex(
                self.facts(slug), own_facts, counted if isinstance(counted, dict) else None
            )
        return self._facts_indexes[slug]

    @functools.cache  # noqa: B019 (one renderer per build)
    def article_windows(self, slug: str) -> dict[str, int]:
        """Each machine's measured windows of the article's experiments (those its claims read): how much of
        the article's data it holds. No experiments listed (a page that is not an article): none."""
        experiments = set(self.claims_file(slug).get("experiments", []))
        windows: dict[str, int] = {}
        for record in self.facts("machines").get("measured", []):
            if record["experiment"] in experiments:
                machine = str(record["machine"])
                windows[machine] = windows.get(machine, 0) + int(record.get("windows") or 0)
        return windows
