"""A page rendered from its template (PageRenderer): an article across machines, a page, or a machine's view
of each article for its own page, with a placeholder for each chart (connlab.site.charts.book makes them
all at once) and each stamped script (connlab.site.render.code_blocks).

Templates see measured figures only through `facts` (build/data/facts: an article's file, and a machine's own
file on its page; connlab.contract.facts_files) and `machines`, read by connlab.site.render.site_data;
StrictUndefined turns a misspelt fact into a build error instead of an empty gap in the prose
(connlab.site.render.environment). connlab.site.render.all_pages renders every page with one renderer.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from connlab.contract.cache import canonical_json, digest
from connlab.contract.facts_files import machine_facts_file
from connlab.paths import ARTICLES_SRC_DIR, DATA_DIR, DOCS_DIR, PAGES_SRC_DIR
from connlab.site.charts.book import ChartBook
from connlab.site.layout import CHARTS_SUBDIR, CODE_PLACEHOLDER, machine_page, picker_options
from connlab.site.render import advice
from connlab.site.render.articles import load_articles
from connlab.site.render.code_blocks import code_converter_key
from connlab.site.render.environment import page_environment
from connlab.site.render.fragments import FragmentConverter
from connlab.site.render.machine_pages import ACROSS_MACHINE_CLAIM_KEYS, shared_verdicts
from connlab.site.render.site_data import SiteData
from connlab.site.render.views import ARTICLE_VIEW, MACHINE_VIEW, FactsIndex

# The template of a machine's own page, which holds the machine's view of every article.
MACHINE_PAGE_TEMPLATE = "_machine_page.md.j2"


class PageRenderer(SiteData):
    def __init__(self, data_dir: Path = DATA_DIR, docs_dir: Path = DOCS_DIR) -> None:
        super().__init__(data_dir)
        self.docs_dir = docs_dir
        self.env = page_environment(self.claim_tally)
        self.chart_book = ChartBook(docs_dir / CHARTS_SUBDIR)
        # The articles' scripts by key, each a fenced block (write_code_blocks writes them converted).
        self.code_blocks: dict[str, str] = {}
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
            write_code_blocks converted it. A machine page's blocks are converted with the page
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
            answers=self.answers(slug),
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
            self.pool_sizes(),
            self.facts("machines").get("columns", []),
            # Four poolers' facts whole: every article's configuration rests on the crowd PgBouncer served.
            self.whole_facts(advice.POOLER_FACTS),
            self.whole_facts(slug) if whole else self.facts(slug),
        )

    def _view_facts(self, template_name: str, index: FactsIndex, machine: str | None) -> dict:
        """An article's facts as its view shows them; a page (the Machines page) sees every machine."""
        if machine is not None:
            return index.for_machine(machine)
        if not (ARTICLES_SRC_DIR / template_name).is_file():
            return index.facts
        return index.across({str(m["id"]) for m in self.machines if not m.get("published")})

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
            pool_size=self.pool_sizes().get(machine),
            off_calibrations=[
                {"experiment": r["experiment"], "tps": r["off_calibrations"]}
                for r in measured_by_machine.get(machine, [])
                if r.get("off_calibrations")
            ],
        )


def _file_status(path: Path | str) -> list[int] | None:
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    return [status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino]
