"""The HTML block each chart becomes inside an article's Markdown.

The block is raw HTML (no blank lines, so Python-Markdown keeps it as one block).
site_src/assets/charts.js finds every `figure.connlab-chart`, parses the embedded
Vega-Lite spec and renders it; the <noscript> SVG keeps the chart readable without
JavaScript (and in feed readers / text browsers that show images).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import vl_convert

from connlab.site.charts.constants import COMPILED_KIND_ATTRIBUTE, COMPILED_SET_ATTRIBUTE

# Element ids and file names are built from the chart id, so keep it to a safe slug.
_CHART_ID = re.compile(r"^[a-z0-9][a-z0-9._-]*$")

# package.json pins vega-lite 6.5.0 for the browser; vl-convert 1.9 bundles at most 6.4,
# the closest release, so the static fallback is compiled almost identically.
VL_VERSION = "6.4"


def spec_text(spec: dict[str, Any] | list[Any] | str) -> str:
    """A spec's one text: compact, keys sorted, as the chart cache keeps it, the page embeds it and the
    download holds it. allow_nan=False because NaN/Infinity are not JSON and JSON.parse would reject them."""
    return json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def script_safe(text: str) -> str:
    """JSON text made safe inside a <script type="application/json"> element.

    Compact JSON has no newlines, so the Markdown block never contains a blank line.
    Inside <script> the HTML parser only looks for `</script` (and `<!--` which can
    start the "double escaped" state), so `</` becomes `<\\/` (a valid JSON escape)
    and `<!--` becomes `\\u003c!--`; both can only occur inside JSON strings.
    """
    return text.replace("</", "<\\/").replace("<!--", "\\u003c!--")


def chart_block(
    spec: dict[str, Any],
    chart_id: str,
    caption: str,
    alt: str,
    svg_src: str | None,
    downloads: list[tuple[str, str]] | None = None,
) -> str:
    """Return the raw-HTML figure for one chart (no trailing newline)."""
    return chart_block_of_text(spec_text(spec), chart_id, caption, alt, svg_src, downloads)


def chart_block_of_text(
    text: str,
    chart_id: str,
    caption: str,
    alt: str,
    svg_src: str | None,
    downloads: list[tuple[str, str]] | None = None,
    compiled: tuple[str, str] | None = None,
) -> str:
    """The raw-HTML figure for one chart from its spec's text (spec_text; a page's charts come as text from
    the chart cache, which spares parsing and writing each spec again).

    svg_src is used verbatim as the fallback <img> src: it must be relative to the
    *rendered page URL* (see the module docs / report on use_directory_urls). None: no SVG was drawn (the
    chart is drawn in the browser only) and the fallback says where its figures are.
    compiled: (the compiled set's name, the chart's kind) where its kind's Vega is compiled at build time
    (connlab.site.charts.compiled): charts.js draws it from that, and the spec is kept for its downloads.
    The caller must surround the block with blank lines in the Markdown.
    """
    if not _CHART_ID.match(chart_id):
        raise ValueError(f"chart id {chart_id!r} must match {_CHART_ID.pattern}")
    return "\n".join(
        [
            f'{FIGURE_START}{_figure_class(svg_src).removeprefix(CHART_CLASS)}" id="chart-{chart_id}"'
            f"{_compiled_attributes(compiled)}>",
            '<div class="connlab-chart__view"></div>',
            f'<script type="application/json" class="connlab-chart__spec">{script_safe(text)}</script>',
            _fallback(svg_src, alt),
            *_downloads_line(downloads or [], None if svg_src else chart_id),
            # The drawing's text alternative: charts.js names it by the caption and describes it by the
            # alt text (aria-labelledby, aria-describedby); hidden, because the caption is already shown.
            f'<p class="connlab-chart__alt" id="chart-{chart_id}-alt" hidden>{html.escape(alt)}</p>',
            f'<figcaption id="chart-{chart_id}-caption">{html.escape(caption, quote=True)}</figcaption>',
            "</figure>",
        ]
    )


# With no SVG (a chart drawn in the browser only), a reader without JavaScript learns where the figures are.
NO_SVG_FALLBACK = (
    '<noscript><p class="connlab-chart__fallback">This chart is drawn by JavaScript; its figures are in'
    " the tables of this page.</p></noscript>"
)


CHART_CLASS = "connlab-chart"
# How every chart block's first line starts (connlab.site.publish.preloads finds the figures by it).
FIGURE_START = f'<figure class="{CHART_CLASS}'


def _figure_class(svg_src: str | None) -> str:
    """browser-only: no SVG was drawn, so charts.js offers the view's own SVG and PNG export."""
    return CHART_CLASS if svg_src else f"{CHART_CLASS} {CHART_CLASS}--browser-only"


def _compiled_attributes(compiled: tuple[str, str] | None) -> str:
    """Where charts.js finds the chart's Vega: the compiled set (its assets' name) and the kind in it."""
    if compiled is None:
        return ""
    name, kind = (html.escape(part, quote=True) for part in compiled)
    return f' {COMPILED_SET_ATTRIBUTE}="{name}" {COMPILED_KIND_ATTRIBUTE}="{kind}"'


# The figure's attributes naming its compiled Vega (COMPILED_SET_ATTRIBUTE, COMPILED_KIND_ATTRIBUTE) come from
# constants.json, which charts.js reads too.


def _fallback(svg_src: str | None, alt: str) -> str:
    if svg_src is None:
        return NO_SVG_FALLBACK
    return (
        f'<noscript><img class="connlab-chart__fallback" src="{html.escape(svg_src, quote=True)}"'
        f' alt="{html.escape(alt, quote=True)}"></noscript>'
    )


# The file name of a chart's Vega-Lite spec, as a download.
SPEC_SUFFIX = ".vl.json"


# What charts.js offers from the page itself, for a chart drawn in the browser only: (label, file suffix,
# what it holds).
OFFERED_FROM_PAGE = (("data (CSV)", ".csv", "csv"), ("Vega-Lite spec", SPEC_SUFFIX, "spec"))


def _downloads_line(downloads: list[tuple[str, str]], offered_as: str | None) -> list[str]:
    """Links to the chart's data, spec and SVG: readers can check or reuse what they see.

    offered_as (a chart drawn in the browser only, on a machine's page: the chart's id): no file is written
    beside it (a thousand machines' pages held 13,000 charts). charts.js offers the rows and the spec the
    page already holds, under the chart's names; the line is hidden until it does, so that a reader without
    JavaScript is offered nothing that does not work (the page's tables hold the figures)."""
    if offered_as:
        # No href: a link only once charts.js gives it the address of what it made.
        links = " · ".join(
            f'<a download="{html.escape(offered_as + suffix, quote=True)}" data-offer="{holds}">{label}</a>'
            for label, suffix, holds in OFFERED_FROM_PAGE
        )
        return [f'<p class="connlab-chart__downloads" hidden>Download: {links}</p>']
    if not downloads:
        return []
    links = " · ".join(
        f'<a href="{html.escape(href, quote=True)}" download>{html.escape(label)}</a>'
        for label, href in downloads
    )
    return [f'<p class="connlab-chart__downloads">Download: {links}</p>']


def render_svg(spec: dict[str, Any] | str) -> str:
    """Render a Vega-Lite spec (or its JSON text) to a standalone SVG string (no browser needed)."""
    # allowed_base_urls=[]: charts embed their data inline, and the build must never
    # fetch anything over the network.
    return vl_convert.vegalite_to_svg(vl_spec=spec, vl_version=VL_VERSION, allowed_base_urls=[])


def write_svg_fallback(spec: dict[str, Any], path: Path) -> None:
    """Write the static SVG for a chart, leaving the file untouched if it is unchanged.

    Unchanged files keep their mtime, so incremental builds and `mkdocs serve` do not
    reload for nothing.
    """
    svg = render_svg(spec)
    path = Path(path)
    if path.is_file() and path.read_text(encoding="utf-8") == svg:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(svg, encoding="utf-8")
    tmp.replace(path)
