"""What the chart code in Python and site_src/assets/charts.js share, read from constants.json beside this
file: the width below which legends go under the plot, the narrowest plot, the dataset a chart's rows are
named by, the attributes that name a figure's compiled set and kind, and the file and global of a compiled
set's expressions. The render writes the same file into the site's charts.js (with_constants), so the two
cannot drift apart. The same file holds the one colour of each pooler kind (and of "direct", no pooler) that
every chart draws it with, and the spare colours of a kind without one (connlab.site.charts.colours); those
travel in each chart's rows, so charts.js reads them nowhere (DRAWN_FROM_ROWS)."""

from __future__ import annotations

import json
from pathlib import Path

CONSTANTS_FILE = Path(__file__).with_name("constants.json")
CONSTANTS: dict[str, object] = json.loads(CONSTANTS_FILE.read_text(encoding="utf-8"))

NARROW_WIDTH = int(CONSTANTS["narrow_width"])  # type: ignore[call-overload]
MIN_PLOT_WIDTH = int(CONSTANTS["min_plot_width"])  # type: ignore[call-overload]
ROWS_DATASET = str(CONSTANTS["rows_dataset"])
COMPILED_SET_ATTRIBUTE = str(CONSTANTS["compiled_set_attribute"])
COMPILED_KIND_ATTRIBUTE = str(CONSTANTS["compiled_kind_attribute"])
EXPRESSIONS_SUFFIX = str(CONSTANTS["expressions_suffix"])
EXPRESSIONS_GLOBAL = str(CONSTANTS["expressions_global"])
POOLER_COLOURS: dict[str, str] = dict(CONSTANTS["pooler_colours"])  # type: ignore[call-overload]
SPARE_COLOURS: tuple[str, ...] = tuple(CONSTANTS["spare_colours"])  # type: ignore[call-overload]
# The constants a chart's rows carry (each row's colour), which charts.js therefore never reads itself.
DRAWN_FROM_ROWS = frozenset({"pooler_colours", "spare_colours"})

# The site's chart script, among site_src/assets.
CHARTS_SCRIPT_NAME = "charts.js"
# The line of charts.js the render replaces with the constants (charts.js reads them from SHARED).
CHARTS_JS_MARKER = "var SHARED = {}; // connlab:constants"


def with_constants(charts_js: str) -> str:
    """charts.js as the site serves it: its SHARED object holding constants.json."""
    if CHARTS_JS_MARKER not in charts_js:
        raise ValueError(f"charts.js has no line {CHARTS_JS_MARKER!r} for the shared constants")
    return charts_js.replace(CHARTS_JS_MARKER, f"var SHARED = {json.dumps(CONSTANTS, sort_keys=True)};", 1)
