"""The chart HTML block and its static SVG fallback (connlab.site.charts.html)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from connlab.site.charts.html import chart_block, write_svg_fallback

SPEC_RE = re.compile(r'<script type="application/json" class="connlab-chart__spec">(.*?)</script>', re.S)


def make_spec(note: str = "plain", tps: float = 1.0) -> dict[str, Any]:
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
        "data": {
            "values": [{"clients": 1, "tps": tps, "note": note}, {"clients": 2, "tps": 2.0, "note": "x"}]
        },
        "mark": "line",
        "encoding": {
            "x": {"field": "clients", "type": "quantitative"},
            "y": {"field": "tps", "type": "quantitative"},
        },
    }


def embedded_spec(block: str) -> Any:
    match = SPEC_RE.search(block)
    assert match, block
    return json.loads(match.group(1))


def test_block_has_the_agreed_shape() -> None:
    block = chart_block(make_spec(), "tps-by-clients", "Caption", "Alt text", "../charts/tps-by-clients.svg")
    lines = block.split("\n")
    assert lines[0] == '<figure class="connlab-chart" id="chart-tps-by-clients">'
    assert lines[1] == '<div class="connlab-chart__view"></div>'
    assert lines[2].startswith('<script type="application/json" class="connlab-chart__spec">{')
    assert lines[2].endswith("}</script>")
    assert lines[3] == (
        '<noscript><img class="connlab-chart__fallback" src="../charts/tps-by-clients.svg"'
        ' alt="Alt text"></noscript>'
    )
    assert lines[4] == '<p class="connlab-chart__alt" id="chart-tps-by-clients-alt" hidden>Alt text</p>'
    assert lines[5] == '<figcaption id="chart-tps-by-clients-caption">Caption</figcaption>'
    assert lines[6] == "</figure>"
    assert len(lines) == 7  # no blank line: Markdown must keep it as one raw HTML block
    assert embedded_spec(block) == make_spec()


def test_script_end_tag_in_data_is_escaped() -> None:
    spec = make_spec(note="evil</script><script>alert(1)</script><!-- x")
    block = chart_block(spec, "evil", "c", "a", "evil.svg")
    # Only the element's own end tag may close the script, and no comment may open in it.
    assert block.count("</script>") == 1
    assert block.lower().count("</script") == 1
    assert "<!--" not in block
    assert "<\\/script>" in block
    assert embedded_spec(block) == spec  # the escapes are plain JSON string escapes


def test_caption_and_alt_are_html_escaped() -> None:
    block = chart_block(make_spec(), "c", 'p99 <b>latency</b> & "tps"', 'a "quoted" <alt> & more', "c.svg")
    assert (
        '<figcaption id="chart-c-caption">p99 &lt;b&gt;latency&lt;/b&gt; &amp; &quot;tps&quot;</figcaption>'
        in block
    )
    assert 'alt="a &quot;quoted&quot; &lt;alt&gt; &amp; more"' in block
    assert ">a &quot;quoted&quot; &lt;alt&gt; &amp; more</p>" in block


def test_svg_src_is_attribute_escaped() -> None:
    block = chart_block(make_spec(), "c", "c", "a", 'x"onerror="alert(1).svg')
    assert 'src="x&quot;onerror=&quot;alert(1).svg"' in block


@pytest.mark.parametrize("chart_id", ["", "Has Space", 'quote"id', "-leading", "UPPER"])
def test_unsafe_chart_ids_are_rejected(chart_id: str) -> None:
    with pytest.raises(ValueError):
        chart_block(make_spec(), chart_id, "c", "a", "c.svg")


def test_nan_is_rejected_rather_than_emitting_invalid_json() -> None:
    with pytest.raises(ValueError):
        chart_block(make_spec(tps=float("nan")), "nan", "c", "a", "nan.svg")


def test_svg_fallback_is_written_and_only_rewritten_on_change(tmp_path: Path) -> None:
    path = tmp_path / "charts" / "tps.svg"
    write_svg_fallback(make_spec(), path)
    svg = path.read_text(encoding="utf-8")
    assert svg.startswith("<svg")
    assert svg.rstrip().endswith("</svg>")

    # Same spec: the file is left alone, so its mtime does not trigger rebuilds.
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    write_svg_fallback(make_spec(), path)
    assert path.stat().st_mtime_ns == 1_000_000_000

    # Different data: rewritten.
    write_svg_fallback(make_spec(tps=123456.0), path)
    assert path.stat().st_mtime_ns != 1_000_000_000
    assert path.read_text(encoding="utf-8") != svg
    assert not list(path.parent.glob("*.tmp"))
