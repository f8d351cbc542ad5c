"""The chart kinds the site draws, compiled to Vega once per build, not once per chart in a browser.

Every chart kind built from a template (charts.kinds.TEMPLATED: all of today's) is that template with
a chart's rows (and, for the USL simulator, its params) put in: a machine's page draws a dozen such charts,
an article a few across machines. Compiling Vega-Lite to Vega was a fifth of the browser's chart work on a
machine's page, and gives the same Vega for every chart of a kind but the rows and params; and a page whose
charts are all compiled never loads vega-lite, a fifth of the chart libraries' weight. So each templated
kind is compiled here, once per way charts.js draws it (a variant: the column's layout, the palette, and
the fixed minimum plot width it falls back to), by the vega-lite the browser loads, with the config
charts.js gives it; the Vega specs are written as one small JSON asset per variant that every page shares
(the browser caches it across pages). charts.js puts a figure's rows and params into its kind's Vega and
draws it without vega-lite; the figure keeps its Vega-Lite spec for its downloads, and an article's SVG
fallback is still drawn from that spec.

The compile runs in node (compile_vega.mjs) with node_modules' vega-lite and vega-themes, the very files the
browser's vega-embed would compile with: vl-convert bundles an older vega-lite. Its result is kept under
build/cache by the digest of what makes it (the templates, the configs, the compiler's versions and code),
and names the assets, so a browser never keeps a stale one.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from connlab.contract.cache import (
    canonical_json,
    digest,
    read_kept_json,
    read_text,
    source_digest,
    write_atomically,
)
from connlab.contract.files import write_if_changed
from connlab.paths import CACHE_DIR
from connlab.site.charts import kinds as charts
from connlab.site.charts.cache import kind_template
from connlab.site.charts.constants import MIN_PLOT_WIDTH
from connlab.site.charts.expressions import (
    EXPRESSION_COMPILER,
    SCRIPT_END,
    compile_expressions,
    expressions_asset_name,
    run_node,
)
from connlab.site.charts.spec_template import with_rows
from connlab.site.charts.vendor import NODE_MODULES
from connlab.site.layout import COMPILED_CHARTS_SUBDIR

COMPILER = Path(__file__).with_name("compile_vega.mjs")
# What the compilers' output depends on besides their input: these packages as node_modules holds them (vega
# parses the compiled charts and writes their expressions' functions: compile_expressions.mjs).
COMPILER_PACKAGES = ("vega", "vega-lite", "vega-themes", "vega-util")
CACHE_SUBDIR = "vega"

# What charts.js gives every chart (its chartConfig, responsive and MIN_PLOT_WIDTH), repeated here because
# the Vega must be compiled with it; tests/browser/test_site_browser.py draws every chart of a machine's page
# and of an article both ways and fails where the two disagree.
NARROW_LEGEND = {"orient": "bottom", "direction": "vertical", "labelLimit": 0}
# The palettes: Material's scheme -> the vega-themes theme vega-embed is given (charts.js: embedOptions).
THEMES: dict[str, str | None] = {"light": None, "dark": "dark"}


@dataclass(frozen=True)
class Variant:
    """One way charts.js draws a chart: its name is the one charts.js builds (compiledVariant)."""

    layout: str  # "wide", or "narrow": legends under the plot
    palette: str  # "light" or "dark"
    fixed: bool  # drawn at MIN_PLOT_WIDTH, where the column left the plot less

    @property
    def name(self) -> str:
        return f"{self.layout}-{self.palette}{'-fixed' if self.fixed else ''}"

    def config(self) -> dict[str, Any]:
        config: dict[str, Any] = {
            "background": "transparent",
            "axis": {"labelOverlap": True, "labelSeparation": 4},
            # The drawing is one image to assistive technology, named by its figure (charts.js: chartConfig).
            "aria": False,
            "mark": {"aria": False},
        }
        if self.layout == "narrow":
            config["legend"] = dict(NARROW_LEGEND)
        return config

    def sized(self, spec: dict) -> dict:
        """The spec as charts.js's responsive() sizes it: a single view or layer follows the column's width,
        or keeps MIN_PLOT_WIDTH; compound specs keep their own sizing."""
        if "mark" not in spec and "layer" not in spec:
            return spec
        if self.fixed:
            return {**spec, "width": MIN_PLOT_WIDTH, "autosize": {"type": "pad"}}
        return {**spec, "width": "container", "autosize": {"type": "fit-x", "contains": "padding"}}


VARIANTS = tuple(
    Variant(layout, palette, fixed)
    for layout in ("wide", "narrow")
    for palette in THEMES
    for fixed in (False, True)
)
# The kinds compiled: those whose charts are their kind's template with rows (and params) put in.
KINDS = tuple(sorted(charts.TEMPLATED))

Compiled = dict[str, dict[str, dict]]  # variant name -> kind -> Vega spec


def _jobs() -> list[dict[str, Any]]:
    """What node compiles, variant by variant, kind by kind (the order compiled_set reads them back in)."""
    return [
        {"spec": variant.sized(with_rows(kind_template(kind), [])), "config": variant.config(),
         "theme": THEMES[variant.palette]}
        for variant in VARIANTS
        for kind in KINDS
    ]  # fmt: skip


def compiler_versions(node_modules: Path = NODE_MODULES) -> dict[str, str]:
    return {
        name: json.loads((node_modules / name / "package.json").read_text(encoding="utf-8"))["version"]
        for name in COMPILER_PACKAGES
    }


@functools.cache
def compiler_digest() -> str:
    """What the set's Vega is made with besides the chart code: node_modules' compilers, compile_vega.mjs and
    compile_expressions.mjs.
    The machine pages' cache keys hold it (render.machine_pages), as they hold the code, which makes
    the templates and the configs: a new set (an upgraded vega-lite) renders the pages that name it again.
    Not set_name(), which builds every kind's template: in a cold build, before the page workers start."""
    return digest(canonical_json(compiler_versions()), source_digest(COMPILER, EXPRESSION_COMPILER))


@functools.cache
def set_name() -> str:
    """The compiled set's name: the digest of everything its Vega is made of. The figures name it."""
    return digest(compiler_digest(), canonical_json(_jobs()))


def compiled_set(cache_dir: Path = CACHE_DIR) -> Compiled:
    """Every kind compiled in every variant: from the cache, else by one run of node."""
    path = cache_dir / CACHE_SUBDIR / f"{set_name()}.json"
    kept = read_kept_json(path)
    if isinstance(kept, dict):
        return kept
    specs = compile_specs(_jobs())
    count = len(KINDS)
    result = {
        variant.name: dict(zip(KINDS, specs[index * count : (index + 1) * count], strict=True))
        for index, variant in enumerate(VARIANTS)
    }
    text = json.dumps(result, sort_keys=True)
    write_atomically(path, text)
    # As kept and as the assets hold it, keys sorted: the expressions' functions are found by their code, in
    # the order of the spec's keys (compile_expressions.mjs), so a cold build must see a warm one's order.
    return json.loads(text)


def compile_specs(jobs: list[dict[str, Any]]) -> list[dict]:
    """Vega-Lite to Vega in node, as vega-embed compiles it in the browser."""
    return json.loads(run_node(COMPILER, json.dumps(jobs)))


def expressions_script(compiled: Compiled, cache_dir: Path = CACHE_DIR) -> str:
    """The script of the set's expressions' functions (connlab.site.charts.expressions): from the cache,
    else by one run of node over every variant's kinds."""
    path = cache_dir / CACHE_SUBDIR / expressions_asset_name(set_name())
    kept = read_text(path)
    if kept is not None and kept.endswith(SCRIPT_END):
        return kept
    specs = [compiled[variant.name][kind] for variant in VARIANTS for kind in KINDS]
    script = compile_expressions(specs, set_name())
    write_atomically(path, script)
    return script


def asset_name(variant: Variant, name: str) -> str:
    return f"{name}.{variant.name}.json"


def write_compiled_assets(docs_dir: Path, cache_dir: Path = CACHE_DIR) -> list[Path]:
    """The compiled set's assets, one per variant (charts.js: COMPILED_FOLDER) and the script of its
    expressions; earlier sets' are removed."""
    folder = Path(docs_dir) / COMPILED_CHARTS_SUBDIR
    compiled = compiled_set(cache_dir)
    written = []
    for variant in VARIANTS:
        path = folder / asset_name(variant, set_name())
        write_if_changed(path, json.dumps(compiled[variant.name], sort_keys=True, separators=(",", ":")))
        written.append(path)
    expressions = folder / expressions_asset_name(set_name())
    write_if_changed(expressions, expressions_script(compiled, cache_dir))
    written.append(expressions)
    for stale in set(folder.iterdir()) - set(written):
        stale.unlink()
    return written
