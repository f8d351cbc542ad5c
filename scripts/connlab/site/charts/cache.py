"""Chart specs built once per distinct input and SVG fallbacks drawn once per distinct spec, in parallel.

Building a spec (Altair) and drawing its SVG (vl-convert) are the costly part of rendering, and both are pure
functions of their inputs. Each result is kept under build/cache, named by the SHA-256 of what made it: a spec
by its chart kind, its records and the chart code; an SVG by its spec and the Vega-Lite version. A rebuild
after one machine was added builds that machine's charts and the cross-machine ones, and nothing else. What is
missing is computed in a pool of worker processes, one per core.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from connlab.contract import usl_formula
from connlab.contract.cache import (
    canonical_json,
    digest,
    read_kept_json,
    read_text,
    source_digest,
    write_atomically,
)
from connlab.interrupts import WorkerPool
from connlab.paths import CACHE_DIR
from connlab.site.charts import colours, frame, legends, spec_template
from connlab.site.charts import kinds as charts
from connlab.site.charts import scaling as scaling_chart
from connlab.site.charts import usl as usl_chart
from connlab.site.charts.html import VL_VERSION, render_svg, spec_text
from connlab.site.charts.spec_template import with_rows

Records = list[dict[str, Any]]
# A spec depends on these modules' code (the chart kinds and what they draw with) and the Altair that runs it;
# an SVG on vl-convert and its Vega-Lite.
SPEC_CODE = (charts, scaling_chart, usl_chart, usl_formula, frame, legends, colours, spec_template)
SPECS_SUBDIR = "specs"
SVGS_SUBDIR = "svg"
TEMPLATES_SUBDIR = "templates"
# Fewer jobs than this are done in this process: starting workers costs more than they would save.
MIN_JOBS_FOR_WORKERS = 8


def chart_function(kind: str) -> Callable[[Records], dict]:
    """The function that builds the kind's spec in full (connlab.site.charts.kinds.KINDS)."""
    return charts.chart_kind(kind)


def build_spec(job: tuple[str, Records]) -> dict:
    """The chart's spec: its rows put into its kind's template where the kind has one, else built in full."""
    kind, records = job
    filled = charts.FILLED_FROM_TEMPLATE.get(kind)
    if filled is not None:
        return filled[1](records, kind_template(kind))
    rows_of = charts.ROWS_INTO_TEMPLATE.get(kind)
    if rows_of is None:
        return chart_function(kind)(records)
    return with_rows(kind_template(kind), rows_of(records))


@functools.cache
def kind_template(kind: str) -> dict:
    """The kind's template: its spec drawn from no rows (its one empty dataset is where a chart's rows go), or
    the one its FILLED_FROM_TEMPLATE entry makes. Kept in the cache under the chart code's digest: a render
    that finds every template there never imports Altair (connlab.site.charts.lazy says why)."""
    path = CACHE_DIR / TEMPLATES_SUBDIR / f"{digest(_code_digest(), kind)}.json"
    kept = read_kept_json(path)
    if isinstance(kept, dict):
        return kept
    filled = charts.FILLED_FROM_TEMPLATE.get(kind)
    template = filled[0]() if filled is not None else chart_function(kind)([])
    write_atomically(path, json.dumps(template, sort_keys=True))
    return template


# Stands for the rows in a template's text: NUL is in no spec, so its JSON text occurs once, where they go.
_ROWS_STAND_IN = "\0rows\0"


@functools.cache
def _template_text(kind: str) -> tuple[str, str]:
    """The text of the kind's spec before and after its rows' text."""
    text = spec_text(with_rows(kind_template(kind), _ROWS_STAND_IN))  # type: ignore[arg-type]
    before, after = text.split(spec_text(_ROWS_STAND_IN))
    return before, after


def templated_spec_text(kind: str, records: Records) -> str:
    """spec_text(build_spec((kind, records))) for a templated kind, without building the spec: the template's
    text is kept, and only the rows are written (keys sorted at every depth, so the text is the same)."""
    filled = charts.FILLED_FROM_TEMPLATE.get(kind)
    if filled is not None:
        return spec_text(filled[1](records, kind_template(kind)))
    before, after = _template_text(kind)
    return f"{before}{spec_text(charts.ROWS_INTO_TEMPLATE[kind](records))}{after}"


@functools.cache
def _code_digest() -> str:
    return digest(version("altair"), source_digest(*(Path(str(module.__file__)) for module in SPEC_CODE)))


@dataclass
class ChartCache:
    """Specs and SVGs by content hash; `workers` None means one per core. helper: a worker process that
    makes the specs and SVGs too few for a pool of workers (render_site starts it ahead, warm: see
    warm_svg_renderer); without it they are made in this process."""

    cache_dir: Path = CACHE_DIR
    workers: int | None = None
    helper: WorkerPool | None = None

    def __post_init__(self) -> None:
        self.code = _code_digest()
        self.svg_version = digest(version("vl-convert-python"), VL_VERSION)

    def spec_key(self, kind: str, records: Records) -> str:
        return digest(self.code, kind, canonical_json(records))

    def specs(self, jobs: dict[str, tuple[str, Records]]) -> dict[str, str]:
        """The spec of every job (key -> (kind, records)) as its text (chart_html.spec_text), building only
        those not cached. Text, not parsed specs: the page embeds the text and the download holds it, and
        parsing and writing again tens of thousands of specs cost more than building them from templates."""
        folder = self.cache_dir / SPECS_SUBDIR
        found = {key: read_text(folder / f"{key}.json") for key in jobs}
        missing = [key for key, spec in found.items() if spec is None]
        for key, spec in zip(missing, self._map(build_spec, [jobs[key] for key in missing]), strict=True):
            found[key] = spec_text(spec)
            write_atomically(folder / f"{key}.json", found[key])
        return found  # type: ignore[return-value]

    def spec_texts(self, jobs: list[tuple[str, Records]]) -> list[str]:
        """The spec text of every job (kind, records), in order. A templated kind's is made here, every
        time: its rows' text put into its template's costs less than hashing the records and reading a cache
        file (a thousand machines' pages held thirteen thousand such files). The others come from the cache,
        or are built in full in the workers."""
        keys = {
            index: self.spec_key(*job) for index, job in enumerate(jobs) if job[0] not in charts.TEMPLATED
        }
        cached = self.specs({key: jobs[index] for index, key in keys.items()})
        return [
            cached[keys[index]] if index in keys else templated_spec_text(*job)
            for index, job in enumerate(jobs)
        ]

    def svgs(self, specs: Iterable[str]) -> dict[str, str]:
        """The SVG of every spec (its text), by the spec's key (svg_key), drawing only those not cached."""
        folder = self.cache_dir / SVGS_SUBDIR
        by_key = {self.svg_key(spec): spec for spec in specs}
        found = {key: read_text(folder / f"{key}.svg") for key in by_key}
        missing = [key for key, svg in found.items() if svg is None]
        for key, svg in zip(missing, self._map(render_svg, [by_key[key] for key in missing]), strict=True):
            write_atomically(folder / f"{key}.svg", svg)
            found[key] = svg
        return found  # type: ignore[return-value]

    def svg_key(self, spec: str) -> str:
        return digest(self.svg_version, spec)

    def _map(self, function: Callable[[Any], Any], items: list[Any]) -> list[Any]:
        workers = min(self.workers or os.cpu_count() or 1, len(items))
        if workers <= 1 or len(items) < MIN_JOBS_FOR_WORKERS:
            if self.helper is not None and items:
                return list(self.helper.map(function, items))
            return [function(item) for item in items]
        with WorkerPool(workers) as pool:
            return list(pool.map(function, items, chunksize=max(1, len(items) // (4 * workers))))


# The smallest chart vl-convert draws: enough to start its engine.
WARM_UP_SPEC = '{"data": {"values": [{"x": 1}]}, "mark": "point", "encoding": {"x": {"field": "x"}}}'


def warm_svg_renderer() -> None:
    """Start vl-convert in this process: its first drawing is slow (its JavaScript engine starting) and holds
    Python's lock, where each one after is quick."""
    render_svg(WARM_UP_SPEC)
