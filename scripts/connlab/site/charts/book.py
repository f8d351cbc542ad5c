"""The charts a render asks for: recorded while the templates run, made together once they have all run.

A template's chart(...) call returns a placeholder; resolve() then builds the specs and draws the SVGs through
the cache (connlab.site.charts.cache), all at once and in parallel, writes each chart's downloads (CSV, spec,
SVG) and puts every chart's HTML block where its placeholder was.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

from connlab.contract.files import write_if_changed
from connlab.site.charts import compiled as compiled_charts
from connlab.site.charts.cache import ChartCache, Records
from connlab.site.charts.html import SPEC_SUFFIX, chart_block_of_text

DOWNLOADS = (("data (CSV)", ".csv"), ("Vega-Lite spec", SPEC_SUFFIX), ("SVG", ".svg"))
# A machine's own page draws its charts in the browser only: drawing an SVG costs more than everything else
# a chart needs, and a thousand machines' pages hold tens of thousands of charts. The SVG is the view's own
# export there (its menu), and without JavaScript the page's tables hold the figures. Nor is any file
# written beside them: the page holds the spec and its rows, and charts.js offers both as downloads (a
# thousand machines' spec and CSV files were 26,000 files, written once by the render and once more by
# MkDocs' copy, and a third of the site).
BROWSER_ONLY_DOWNLOADS: tuple[tuple[str, str], ...] = ()


def records_csv(records: list[dict]) -> str:
    buffer = io.StringIO()
    names = list(dict.fromkeys(name for record in records for name in record))
    writer = csv.DictWriter(buffer, fieldnames=names, lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return buffer.getvalue()


@dataclass(frozen=True)
class ChartRequest:
    chart_id: str
    kind: str
    records: Records
    caption: str
    alt: str
    prefix: str  # the charts folder relative to the page that shows the chart
    svg: bool = True  # False: drawn in the browser only (a machine's page)

    def downloads(self) -> tuple[tuple[str, str], ...]:
        return DOWNLOADS if self.svg else BROWSER_ONLY_DOWNLOADS

    def file_names(self) -> list[str]:
        return [f"{self.chart_id}{suffix}" for _, suffix in self.downloads()]

    def compiled(self) -> tuple[str, str] | None:
        """(the compiled set, the kind) where charts.js draws the chart from its kind's Vega compiled at build
        time: a chart of a kind built from a template, on an article as on a machine's page (a page whose
        charts are all compiled never loads vega-lite). A kind built in full keeps the Vega-Lite path."""
        if self.kind not in compiled_charts.KINDS:
            return None
        return compiled_charts.set_name(), self.kind


@dataclass
class ChartBook:
    folder: Path  # build/docs/charts
    cache: ChartCache = field(default_factory=ChartCache)
    requests: list[ChartRequest] = field(default_factory=list)
    files: set[Path] = field(default_factory=set)  # every chart file this render wrote or kept

    def request(
        self,
        chart_id: str,
        kind: str,
        records: Records,
        caption: str,
        alt: str,
        prefix: str,
        svg: bool = True,
    ) -> str:
        """Record a chart; return the placeholder that resolve() replaces with its HTML block."""
        self.requests.append(ChartRequest(chart_id, kind, list(records), caption, alt, prefix, svg))
        return _placeholder(len(self.requests) - 1)

    def resolve(self, pages: dict[Path, str]) -> dict[Path, str]:
        """Make every chart requested since the last resolve and return the pages (rendered since then)
        with their placeholders replaced."""
        specs = self.cache.spec_texts([(request.kind, request.records) for request in self.requests])
        svgs = self.cache.svgs(
            spec for spec, request in zip(specs, self.requests, strict=True) if request.svg
        )
        blocks = [
            self._write(request, spec, svgs[self.cache.svg_key(spec)] if request.svg else None)
            for spec, request in zip(specs, self.requests, strict=True)
        ]
        self.requests = []
        return {path: _fill(text, blocks) for path, text in pages.items()}

    def _write(self, request: ChartRequest, spec: str, svg: str | None) -> str:
        stem = self.folder / request.chart_id
        self.files.update(self.folder / name for name in request.file_names())
        if svg is not None:
            write_if_changed(stem.with_name(f"{request.chart_id}.svg"), svg)
            write_if_changed(stem.with_name(f"{request.chart_id}{SPEC_SUFFIX}"), spec)
            write_if_changed(stem.with_name(f"{request.chart_id}.csv"), records_csv(request.records))
        href = f"{request.prefix}{request.chart_id}"
        downloads = [(label, f"{href}{suffix}") for label, suffix in request.downloads()]
        svg_src = f"{href}.svg" if svg is not None else None
        return chart_block_of_text(
            spec, request.chart_id, request.caption, request.alt, svg_src, downloads, request.compiled()
        )


# NUL never occurs in rendered Markdown, so a placeholder cannot collide with page text.
def _placeholder(index: int) -> str:
    return f"\0chart:{index}\0"


def _fill(text: str, blocks: list[str]) -> str:
    if "\0" not in text:
        return text
    parts = text.split("\0")
    # Odd parts are placeholders ("chart:<index>"), even parts the text between them.
    return "".join(
        blocks[int(part.removeprefix("chart:"))] if i % 2 else part for i, part in enumerate(parts)
    )
