"""The Jinja environment every page is rendered in: its loader over the articles, partials and pages,
StrictUndefined (a misspelt fact is a build error, not an empty gap in the prose), the filters
(connlab.site.render.formats) and the globals the templates call: pick, select, compare and spread over
records, the chart, snippet and table modules, and the settings of the harness that the pages quote.
"""

from __future__ import annotations

import functools
import statistics
from collections.abc import Callable
from pathlib import Path

import jinja2

from connlab.contract.client_cores import examples as client_core_examples
from connlab.contract.columns import WINDOW_COLUMNS
from connlab.contract.estimate import WINDOW_OVERHEAD_S, run_estimate
from connlab.contract.experiment import make_plan
from connlab.contract.machine_schema import NOT_AVAILABLE
from connlab.contract.names import (
    CLIENT_NEAR_LIMIT_SHARE,
    CLIENT_SATURATION_SHARE,
    CONNECTING_SHARE_LIMIT,
    DEFAULT_PG_MAJOR,
    LOOPBACK_HOST,
    OTHERS_WELL_BELOW_SHARE,
    PEAK_RESOLUTION,
)
from connlab.contract.poolers.registry import VERSIONED
from connlab.contract.probes.registry import PROBES
from connlab.paths import ARTICLES_SRC_DIR, JINJA_CACHE_DIR, PAGES_SRC_DIR, PARTIALS_DIR
from connlab.probes.pooler_memory.probe import POOLER_SERIES_STEP_S
from connlab.site.charts import kinds as charts
from connlab.site.layout import default_option, machine_section_url
from connlab.site.render import snippets, tables, verdict_html
from connlab.site.render.formats import is_missing, number, percent, plain_text, plural, significant
from connlab.site.repository import repository_url

# How often the in-window probes sample, for the pages that describe them.
SAMPLING_MS = {name: probe.interval_ms for name, probe in PROBES.items()}


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


def _folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def page_environment(claim_tally: Callable[[str], dict[str, int]]) -> jinja2.Environment:
    """A renderer's environment; claim_tally: how many claims hold on a machine (the Machines page's)."""
    env = jinja2.Environment(
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
    env.filters.update(
        number=number,
        significant=significant,
        percent=percent,
        text=plain_text,
        plural=plural,
        # A picker's URL to an article's section of a machine's page -> to that section's verdicts.
        claims_url=machine_section_url,
    )
    env.globals.update(compare=compare, claim_tally=claim_tally, picker_default=default_option)
    env.globals.update(
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
    return env
