"""build/data -> build/docs: Jinja renders the articles, pages and charts; assets are copied.

Templates see measured figures only through `facts` (build/data/facts: an article's file, and a machine's own
file on its page; connlab.contract.facts_files) and `machines`;
StrictUndefined turns a misspelt fact into a build error instead of an empty gap in the prose.
Files are only rewritten when their content changes, so an unchanged page does not rebuild the site.
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import os
import re
import shutil
import stat
import statistics
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jinja2

from connlab.contract.cache import canonical_json, digest, loads_fast, read_json, read_json_written
from connlab.contract.client_cores import examples as client_core_examples
from connlab.contract.columns import WINDOW_COLUMNS
from connlab.contract.estimate import WINDOW_OVERHEAD_S, run_estimate
from connlab.contract.experiment import make_plan
from connlab.contract.facts_files import (
    counts_path,
    facts_path,
    machine_facts_file,
    machine_facts_path,
    read_facts,
)
from connlab.contract.files import copy_if_changed, write_if_changed
from connlab.contract.machine_schema import NOT_AVAILABLE
from connlab.contract.names import (
    ANSWERS_SUBDIR,
    CLAIMS_SUBDIR,
    CLIENT_NEAR_LIMIT_SHARE,
    CLIENT_SATURATION_SHARE,
    CONNECTING_SHARE_LIMIT,
    DEFAULT_PG_MAJOR,
    LOOPBACK_HOST,
    MACHINES_JSON,
    OTHERS_WELL_BELOW_SHARE,
    PEAK_RESOLUTION,
    POOL_SIZES_FILE,
)
from connlab.contract.poolers.registry import VERSIONED
from connlab.contract.probes.registry import PROBES
from connlab.interrupts import WorkerPool
from connlab.paths import (
    ARTICLES_SRC_DIR,
    ASSETS_SRC_DIR,
    DATA_DIR,
    DOCS_DIR,
    FACTS_DIR,
    JINJA_CACHE_DIR,
    PAGES_SRC_DIR,
    PARTIALS_DIR,
    RESULTS_DIR,
)
from connlab.probes.pooler_memory.probe import POOLER_SERIES_STEP_S
from connlab.site.charts import kinds as charts
from connlab.site.charts.book import ChartBook
from connlab.site.charts.cache import warm_svg_renderer
from connlab.site.charts.compiled import write_compiled_assets
from connlab.site.charts.constants import CHARTS_SCRIPT_NAME, with_constants
from connlab.site.charts.vendor import copy_vendored_js
from connlab.site.layout import (
    CHARTS_SUBDIR,
    CODE_BLOCKS_SUBDIR,
    CODE_PLACEHOLDER,
    FRAGMENT_SUFFIX,
    MACHINE_PAGES_DIR,
    RAW_CHANGED,
    RAW_SUBDIR,
    SHELL_MARKDOWN,
    SHELL_PAGE,
    code_block,
    default_option,
    machine_page,
    machine_section_url,
    picker_options,
    stamped_sources,
)
from connlab.site.render import advice, snippets, tables, verdict_html
from connlab.site.render.articles import load_articles
from connlab.site.render.formats import is_missing, number, percent, plain_text, plural, significant
from connlab.site.render.fragments import FragmentConverter, markdown_extensions
from connlab.site.render.machine_pages import (
    ACROSS_MACHINE_CLAIM_KEYS,
    record_written,
    render_machine_pages,
    shared_verdicts,
    store_machine_pages,
)
from connlab.site.render.verdicts import VerdictTable, article_columns, build_table, with_machines
from connlab.site.render.views import ARTICLE_VIEW, MACHINE_VIEW, FactsIndex
from connlab.site.repository import repository_url


def pick(records: list[dict], **where: object) -> dict:
    """The one record matching every condition; a template asking for a missing fact fails the build."""
    matches = [record for record in records if all(record.get(k) == v for k, v in where.items())]
    if len(matches) != 1:
        raise jinja2.UndefinedError(f"expected one record with {where}, found {len(matches)}")
    return matches[0]


class IndexedPick:
    """pick, with each list's records indexed by a single condition's field once per build: a page that
    picks one record per machine from a list of every machine's (the Machines page) was quadratic."""

    def __init__(self) -> None:
        # id of the list -> (the list, kept alive so that its id is not reused; field -> value -> records)
        self._indexes: dict[int, tuple[list[dict], dict[str, dict[object, list[dict]]]]] = {}

    def __call__(self, records: list[dict], **where: object) -> dict:
        ((field, value),) = where.items() if len(where) == 1 else ((None, None),)
        if field is None or not isinstance(records, list) or not isinstance(value, PLAIN):
            return pick(records, **where)
        known = self._indexes.get(id(records))
        if known is None or known[0] is not records:
            known = self._indexes[id(records)] = (records, {})
        if field not in known[1]:
            index: dict[object, list[dict]] = {}
            for record in records:
                found = record.get(field)
                # Another kind of value is never equal to a plain one; it is left out of the index.
                if isinstance(found, PLAIN):
                    index.setdefault(found, []).append(record)
            known[1][field] = index
        return pick(known[1][field].get(value, []), **where)


# Values whose equality agrees with their hash (1 == 1.0 == True share a bucket, as == has them equal).
PLAIN = (str, int, float, bool, type(None))


def compare(a: dict, b: dict, median: str = "tps_median", low: str = "tps_min", high: str = "tps_max") -> str:
    """'higher', 'lower', or 'no measurable difference' when the two ranges of passes overlap."""
    if any(is_missing(point.get(key)) for point in (a, b) for key in (median, low, high)):
        return "no measurable difference"
    if a[low] > b[high]:
        return "higher"
    if a[high] < b[low]:
        return "lower"
    return "no measurable difference"


def select(records: list[dict], **where: object) -> list[dict]:
    return [record for record in records if all(record.get(k) == v for k, v in where.items())]


def spread(records: list[dict], field: str) -> dict[str, float]:
    """A figure over many machines' rows: the median machine's, the lowest and the highest (a paragraph that
    names each machine would grow with the machines)."""
    values = [float(record[field]) for record in records if record.get(field) is not None]
    if not values:
        raise ValueError(f"no machine has a value of {field}")
    return {"median": statistics.median(values), "low": min(values), "high": max(values)}


# How often the in-window probes sample, for the pages that describe them.
# The template of a machine's own page, which holds the machine's view of every article.
MACHINE_PAGE_TEMPLATE = "_machine_page.md.j2"

SAMPLING_MS = {name: probe.interval_ms for name, probe in PROBES.items()}


# -- rendering -------------------------------------------------------------------------------------------
def _folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


class PageRenderer:
    def __init__(self, data_dir: Path = DATA_DIR, docs_dir: Path = DOCS_DIR) -> None:
        self.data_dir = data_dir
        self.docs_dir = docs_dir
        self.facts_dir = data_dir / FACTS_DIR.relative_to(DATA_DIR)
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader([ARTICLES_SRC_DIR, PARTIALS_DIR, PAGES_SRC_DIR]),
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
            # Compiled templates kept between builds (Jinja checks each against its source): compiling
            # the articles would be paid by every render.
            bytecode_cache=jinja2.FileSystemBytecodeCache(str(_folder(JINJA_CACHE_DIR))),
        )
        self.env.filters.update(
            number=number,
            significant=significant,
            percent=percent,
            text=plain_text,
            plural=plural,
            # A picker's URL to an article's section of a machine's page -> to that section's verdicts.
            claims_url=machine_section_url,
        )
        self.claims_dir = data_dir / CLAIMS_SUBDIR
        self.env.globals.update(compare=compare, claim_tally=self.claim_tally, picker_default=default_option)
        self.env.globals.update(
            pick=IndexedPick(),
            select=select,
            spread=spread,
            charts=charts,
            snippets=snippets,
            tables=tables,
            verdict_html=verdict_html,
            # A plan is read from its experiment.yaml; every machine's page asks for the same few.
            make_plan=functools.cache(make_plan),
            columns=WINDOW_COLUMNS,
            sampling_ms=SAMPLING_MS,
            probes=PROBES,
            # The poolers that record a version, by kind: the Machines page's columns (their labels, their
            # machine.yaml fields), from the pooler registry.
            versioned_poolers=VERSIONED,
            # What machine.yaml says of a pooler the machine lacks, shortened in the versions table.
            not_available=NOT_AVAILABLE,
            # pgbench's cores per point on machines of a few sizes (the methodology page's table).
            client_core_examples=client_core_examples(),
            # How long a run takes, from the specs (the Contributing page).
            run_estimate=functools.cache(run_estimate),
            window_overhead_s=WINDOW_OVERHEAD_S,
            # What the harness's code says, for pages that describe it (Methodology, Contributing).
            loopback_host=LOOPBACK_HOST,
            client_saturation_share=CLIENT_SATURATION_SHARE,
            # The busiest-process rule (connlab.data.views.CLIENT_BOUND_SQL), for the pages that state it.
            client_near_limit_share=CLIENT_NEAR_LIMIT_SHARE,
            others_well_below_share=OTHERS_WELL_BELOW_SHARE,
            # The steady-state rule (connlab.data.views.STEADY_SQL), for the page that states it.
            connecting_share_limit=CONNECTING_SHARE_LIMIT,
            # How close a peak's measured neighbours must be for a claim about the peak to be judged.
            peak_resolution=PEAK_RESOLUTION,
            pooler_series_step_s=POOLER_SERIES_STEP_S,
            default_pg_major=DEFAULT_PG_MAJOR,
            # The source repository (a build setting or the clone's origin; None: no link), for the pages
            # that tell a reader to clone it.
            repo_url=repository_url(),
        )
        self.chart_book = ChartBook(docs_dir / CHARTS_SUBDIR)
        # The articles' scripts by key, each a fenced block (write_code_blocks writes them highlighted).
        self.code_blocks: dict[str, str] = {}
        self._facts_indexes: dict[str, FactsIndex] = {}
        self._json_files: dict[Path, dict] = {}
        machines_file = data_dir / MACHINES_JSON
        self.machines = loads_fast(machines_file.read_bytes()) if machines_file.exists() else []
        # The articles, as their registry declares them (connlab.site.render.articles); templates see them.
        self.articles = load_articles()
        self.env.globals["articles"] = self.articles
        # A machine page's Markdown to HTML: its links are checked against the pages the site will have.
        self.fragments = FragmentConverter(lambda page: page in self._site_pages())

    @functools.cache  # noqa: B019 (one renderer per build)
    def _site_pages(self) -> frozenset[str]:
        """Every page of the site as MkDocs would name its Markdown: articles, pages, machines' pages."""
        sources = (
            str(path.relative_to(PAGES_SRC_DIR)).removesuffix(".j2") for path in PAGES_SRC_DIR.rglob("*.md*")
        )
        machines = {machine_page(str(m["id"])) for m in self.machines if not m.get("published")}
        articles = {article.page for article in self.articles}
        return frozenset({*articles, *(s for s in sources if s.endswith(".md")), *machines})

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

    def _json(self, path: Path) -> dict:
        """A data file, read once per render: every machine's page asks for the same few. One this process
        has just written (the claims and answers, where aggregation ran in it) is not parsed again."""
        if path not in self._json_files:
            value = read_json_written(path)
            self._json_files[path] = value if value is not None else {}  # type: ignore[assignment]
        return self._json_files[path]

    def _chart_function(self, page: str, svg: bool = True):  # type: ignore[no-untyped-def]
        depth = len(Path(page).parts) - (1 if Path(page).stem == "index" else 0)
        prefix = f"{'../' * depth}{CHARTS_SUBDIR}/"

        def chart(chart_id: str, kind: str, records: list[dict], caption: str, alt: str) -> str:
            """A chart built by charts.kinds.<kind>, with its spec and data (and SVG unless the page
            draws its charts in the browser only) as downloads, made with every other chart once all pages
            are rendered: this returns a placeholder."""
            return self.chart_book.request(chart_id, kind, records, caption, alt, prefix, svg)

        return chart

    def _code_function(self, stamped: bool):  # type: ignore[no-untyped-def]
        def code(text: str, language: str) -> str:
            """A fenced code block; where stamped (a page MkDocs builds), a placeholder for it
            (connlab.site.layout.CODE_PLACEHOLDER) that publishing replaces with the block as
            write_code_blocks highlighted it. A machine page's blocks are converted with the page
            (connlab.site.render.fragments) and cached with it."""
            fence = f"```{language}\n{text}\n```"
            if not stamped:
                return fence
            key = digest(code_converter_key(), fence)
            self.code_blocks[key] = fence
            return CODE_PLACEHOLDER.format(key=key)

        return code

    def render(self, template_name: str, page: str, slug: str) -> str:
        """One page with its charts made (render_site renders every page, then makes all charts at once)."""
        text = self.render_deferred(template_name, page, slug)
        return self.chart_book.resolve({self.docs_dir / page: text})[self.docs_dir / page]

    def render_deferred(self, template_name: str, page: str, slug: str, machine: str | None = None) -> str:
        """The page with a placeholder for each chart, until chart_book.resolve() makes them. With a machine,
        the machine's view of an article (its detail, for its own page); without, the view across machines."""
        template = self.env.get_template(template_name)
        index = self._facts_index(slug)
        # The picker leads from an article to each machine's page (to the article's section there, where the
        # machine ran any of its experiments; by default to the machine with the most of them); a machine's
        # page shows none.
        windows = self.article_windows(slug)
        picker = [] if machine is not None else picker_options(page, self.machines, windows, slug)
        return template.render(
            claims=self.claims(slug),
            verdicts=self.verdict_table(slug, machine),
            # The short answer and verdict rows connlab.data.answers wrote from the same facts and claims.
            answers=self._json(self.data_dir / ANSWERS_SUBDIR / f"{slug}.json"),
            # The article's "What to do" by server-core count (render.advice), on the article only.
            advice=self.what_to_do(slug) if machine is None and slug in advice.ADVISED_ARTICLES else {},
            facts=self._view_facts(template_name, index, machine),
            fact_counts=index.counts(),
            view=ARTICLE_VIEW if machine is None else MACHINE_VIEW,
            machine_id=machine,
            picker=picker,
            machines=self.machines,
            # A machine's page draws its charts in the browser only (connlab.site.charts.book).
            chart=self._chart_function(page, svg=machine is None),
            code=self._code_function(stamped=machine is None),
            page=page,
        )

    @functools.cache  # noqa: B019 (one renderer per build)
    def what_to_do(self, slug: str) -> dict:
        """An article's "What to do", from the claims, pool sizes and facts this renderer reads."""
        whole = slug in advice.WHOLE_FACTS
        return advice.what_to_do(
            slug,
            {article: self.claims(article) for article in advice.CLAIM_ARTICLES},
            self._json(self.data_dir / ANSWERS_SUBDIR / POOL_SIZES_FILE),
            self.facts("machines").get("columns", []),
            # Four poolers' facts whole: every article's configuration rests on the crowd PgBouncer served.
            self.whole_facts(advice.POOLER_FACTS),
            self.whole_facts(slug) if whole else self.facts(slug),
        )

    @functools.cache  # noqa: B019 (one renderer per build)
    def whole_facts(self, slug: str) -> dict:
        """An article's facts with every machine's rows, read once per render; none where aggregation wrote
        none (a build of other articles still renders its configurations, without PgBouncer's crowd)."""
        return read_facts(self.facts_dir, slug) if facts_path(self.facts_dir, slug).is_file() else {}

    def _view_facts(self, template_name: str, index: FactsIndex, machine: str | None) -> dict:
        """An article's facts as its view shows them; a page (the Machines page) sees every machine."""
        if machine is not None:
            return index.for_machine(machine)
        if not (ARTICLES_SRC_DIR / template_name).is_file():
            return index.facts
        return index.across({str(m["id"]) for m in self.machines if not m.get("published")})

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
    def _shared_facts_digest(self, slug: str) -> str:
        return digest(canonical_json(self._facts_index(slug).shared()))

    def machine_inputs(self, slug: str, machine: str) -> dict:
        """Everything an article's machine view shows: what its page's cache key is made of. Where the
        machine has its own facts file, its status and what it shares with every machine, not the records
        themselves (encoding every machine's records to hash them, or reading and hashing every machine's
        files, grew with the machines). The aggregation
        replaces a facts file only when its text changes, by renaming a new file over it, so its size,
        times and inode change with its text. Its verdict table (with_machines) is made of the machine's
        own records and verdicts and of what every machine's table shares, which is hashed once per
        article: the key takes those, not the table (never made per machine only to be hashed)."""
        status = _file_status(machine_facts_file(self.facts_dir, slug, machine))
        if status is not None:
            facts: object = {"own": status, "shared": self._shared_facts_digest(slug)}
        else:
            facts = self._facts_index(slug).for_machine(machine)
        columns_by_machine, measured_by_machine = self._machine_records()
        verdicts = {
            "records": [columns_by_machine.get(machine, []), measured_by_machine.get(machine, [])],
            "cells": [by_machine.get(machine) for by_machine in self._row_verdicts(slug)],
            "shared": self._shared_verdicts_digest(slug),
        }
        return {"facts": facts, "verdicts": verdicts}

    @functools.cache  # noqa: B019 (one renderer per build)
    def _row_verdicts(self, slug: str) -> list[dict[str, dict]]:
        """Each table row's verdicts by machine: the claims', but those across machines."""
        claims = self.claims(slug)
        rows = zip(claims, self._verdicts_by_machine(slug), strict=True)
        return [by_machine for claim, by_machine in rows if claim.get("scope") != "across"]

    @functools.cache  # noqa: B019 (one renderer per build)
    def _shared_verdicts_digest(self, slug: str) -> str:
        """What every machine's verdict table shares: the article's claims (without what each holds about
        every machine: a machine's page shows none of it), the experiments they read, and the published
        sets' parts of the table without a machine, which each machine's holds as well."""
        claims = [
            {key: value for key, value in claim.items() if key not in ACROSS_MACHINE_CLAIM_KEYS}
            for claim in self.claims(slug)
        ]
        experiments = self.claims_file(slug).get("experiments", [])
        return digest(canonical_json([claims, experiments, shared_verdicts(self.verdict_table(slug))]))

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

    def render_machine_page(self, machine: str, article_slugs: list[str]) -> str:
        """A machine's own page: what it measured first, its detail from each article it ran any of the
        experiments of, one after the other; then one line with what it did not run (the experiments, the
        articles that have nothing from it, the poolers not available on it)."""
        page = machine_page(machine)
        columns_by_machine, measured_by_machine = self._machine_records()
        ran = {str(r["experiment"]) for r in measured_by_machine.get(machine, [])}
        details, skipped, wanted, poolers = [], [], set(), set()
        # In the site's order of the articles (articles.yaml), whatever order they are asked in.
        order = {article.slug: index for index, article in enumerate(self.articles)}
        for slug in sorted(article_slugs, key=lambda slug: order.get(slug, len(order))):
            experiments = set(self.claims_file(slug).get("experiments", []))
            wanted |= experiments
            facts = self._facts_index(slug)
            for row in facts.for_machine(machine).get("poolers", []) if "poolers" in facts.facts else []:
                if isinstance(row, dict) and row.get("machine") == machine and not row.get("available"):
                    poolers.add(str(row["pooler"]))
            # Skipped where the records say what the machine ran and none of it is the article's.
            if experiments and ran and not experiments & ran:
                skipped.append(slug)
                continue
            details.append(self.render_deferred(f"{slug}.md.j2", page, slug, machine))
        missing = {
            name.strip()
            for column in columns_by_machine.get(machine, [])
            for name in str(column.get("missing") or "").split(",")
            if name.strip()
        }
        by_slug = {article.slug: article for article in self.articles}
        return self.env.get_template(MACHINE_PAGE_TEMPLATE).render(
            machine_id=machine,
            machines=self.machines,
            details=details,
            not_run={
                "experiments": sorted((missing | wanted) - ran),
                "articles": [by_slug[slug] for slug in skipped if slug in by_slug],
                "poolers": sorted(poolers),
            },
            page=page,
            pool_size=self._json(self.data_dir / ANSWERS_SUBDIR / POOL_SIZES_FILE).get(machine),
        )


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


def _file_status(path: Path | str) -> list[int] | None:
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    return [status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino]


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
    leads = renderer._json(data_dir / ANSWERS_SUBDIR / POOL_SIZES_FILE)
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


# Pygments writes each run of whitespace between a script's words in a span of its own (class "w",
# Token.Text.Whitespace) that no stylesheet colours, Material's nor the site's: in four-poolers' longest
# script those spans were a third of the block, and its page was over issue 54's 600 KB of HTML. Written bare,
# the block shows and copies the same text.
_WHITESPACE_SPAN = re.compile(r'<span class="w">(\s*)</span>')
# Part of a block's key (code_converter_key): a block highlighted before the whitespace was written bare is
# highlighted again.
HIGHLIGHT_FORM = "whitespace bare"


def without_whitespace_spans(block: str) -> str:
    """A highlighted block with its whitespace tokens' spans taken off (their text kept)."""
    return _WHITESPACE_SPAN.sub(r"\1", block)


@functools.cache
def code_converter_key() -> str:
    """What a highlighted block is made with besides its text: the Markdown extensions mkdocs.yml names, with
    their options, the versions of the libraries that convert and highlight it, and what is done after."""
    versions = [importlib.metadata.version(name) for name in ("markdown", "pymdown-extensions", "pygments")]
    return digest(canonical_json(markdown_extensions()), *versions, HIGHLIGHT_FORM)


def write_code_blocks(blocks: dict[str, str], stamped: Path) -> None:
    """Each block the articles name, highlighted by the Markdown extensions mkdocs.yml names (as MkDocs would
    have converted it, its whitespace written bare), where its file is missing: a file there is the same block
    from the same converter, since the key names both. Blocks no article names any more are removed."""
    converter: FragmentConverter | None = None
    for key, fence in blocks.items():
        path = stamped / code_block(key)
        if not path.is_file():
            converter = converter or FragmentConverter(exists=lambda page: False)
            write_if_changed(path, without_whitespace_spans(converter.convert("", fence)))
    named = {stamped / code_block(key) for key in blocks}
    for stale in set((stamped / CODE_BLOCKS_SUBDIR).glob(f"*{FRAGMENT_SUFFIX}")) - named:
        stale.unlink()


def remove_older_layouts(docs_dir: Path) -> None:
    """What a build from before machine pages left the docs folder removes from it: a machine's Markdown page
    (MkDocs would build it), and the fragments and raw downloads kept in the docs folder until they moved
    beside it (MkDocs would copy them into the site as files)."""
    machines_dir = docs_dir / MACHINE_PAGES_DIR
    for stale in [*machines_dir.glob("[!_]*.md"), *machines_dir.glob(f"*{FRAGMENT_SUFFIX}")]:
        stale.unlink()
    shutil.rmtree(docs_dir / RAW_SUBDIR, ignore_errors=True)
