"""connlab.site.charts.constants: one JSON file of what the chart code in Python and charts.js share, which
the render writes into the site's charts.js."""

from __future__ import annotations

import json

import pytest

from connlab.paths import ASSETS_SRC_DIR
from connlab.site.charts.constants import (
    CHARTS_JS_MARKER,
    CHARTS_SCRIPT_NAME,
    CONSTANTS,
    CONSTANTS_FILE,
    DRAWN_FROM_ROWS,
    with_constants,
)

CHARTS_JS = (ASSETS_SRC_DIR / CHARTS_SCRIPT_NAME).read_text(encoding="utf-8")


def test_charts_js_reads_every_constant_from_the_shared_object_and_types_none() -> None:
    assert CHARTS_JS.count(CHARTS_JS_MARKER) == 1
    assert {key for key in CONSTANTS if f"SHARED.{key}" not in CHARTS_JS} == set(DRAWN_FROM_ROWS)
    for value in CONSTANTS.values():  # a constant typed out in charts.js again would drift from the file
        assert f"= {json.dumps(value)};" not in CHARTS_JS, value


def test_the_served_charts_js_holds_the_files_constants() -> None:
    served = with_constants(CHARTS_JS)
    line = next(line for line in served.splitlines() if line.strip().startswith("var SHARED = "))
    assert json.loads(line.split("=", 1)[1].strip().rstrip(";")) == json.loads(CONSTANTS_FILE.read_text())
    with pytest.raises(ValueError, match="no line"):
        with_constants("var x = 1;")
