"""Rendering: the number filters, contributed text shown literally, StrictUndefined, and the real article
rendered from facts aggregated out of a fixture results folder."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import jinja2
import markdown
import pytest
import yaml

from connlab.contract.poolers.registry import VERSIONED
from connlab.data.aggregate import aggregate_all
from connlab.data.validate import validate_results
from connlab.site.charts import kinds as charts
from connlab.site.charts.html import NO_SVG_FALLBACK
from connlab.site.layout import MACHINE_PAGES_DIR, RAW_CHANGED, stamped_sources
from connlab.site.render.all_pages import copy_raw_files, render_site
from connlab.site.render.environment import compare, pick, select
from connlab.site.render.formats import number, percent, plain_text, significant
from connlab.site.render.fragments import markdown_extensions
from connlab.site.render.renderer import PageRenderer
from support.paths import FACTS_BEFORE, PINNED_RESULTS

if TYPE_CHECKING:
    from support.rows import RunWriter

ARTICLE = "too-many-connections"
# The Markdown extensions of mkdocs.yml: contributed text must survive exactly these.
MARKDOWN_EXTENSIONS = markdown_extensions()[0]
MACHINE_DESCRIPTION = "<script>alert('x')</script> a *fast* [box](http://evil.example)"


# -- filters ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [
        (1234.4, 0, "1,234"),
        (1234567.891, 2, "1,234,567.89"),
        (0.25, 1, "0.2"),
        (12345, 0, "12,345"),
        (-1500.0, 0, "-1,500"),
        (None, 0, "–"),
        (float("nan"), 0, "–"),
    ],
)
def test_number(value: object, digits: int, expected: str) -> None:
    assert number(value, digits) == expected


@pytest.mark.parametrize(
    ("value", "figures", "expected"),
    [
        (0.012345, 3, "0.0123"),
        (1.5, 3, "1.50"),
        (12345.6, 3, "12,346"),
        (999.6, 3, "1,000"),
        (0, 3, "0"),
        (-0.00123, 2, "-0.0012"),
        (2.0, 2, "2.0"),
        (None, 3, "–"),
        (float("nan"), 2, "–"),
    ],
)
def test_significant(value: object, figures: int, expected: str) -> None:
    assert significant(value, figures) == expected


@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [(0.5, 0, "50%"), (0.1234, 1, "12.3%"), (1.0, 0, "100%"), (0.93, 0, "93%"), (None, 0, "–")],
)
def test_percent(value: object, digits: int, expected: str) -> None:
    assert percent(value, digits) == expected


def rendered_text(text: str) -> str:
    """What a reader sees: the Markdown rendered with the site's extensions, tags removed, unescaped."""
    body = markdown.markdown(text, extensions=MARKDOWN_EXTENSIONS).strip()
    assert body.startswith("<p>") and body.endswith("</p>"), body
    return html.unescape(body[3:-4])


def test_plain_text_escapes_html() -> None:
    escaped = plain_text("<script>alert(1)</script>")
    assert "<" not in escaped and ">" not in escaped
    assert "&lt;script&gt;" in escaped
    # Quotes stay as they are (HTML escaping with quote=False): text never lands in an attribute.
    assert plain_text('a "quoted" & value') == 'a "quoted" &amp; value'


def test_plain_text_neutralises_markdown() -> None:
    html_out = markdown.markdown(
        plain_text("**bold** _em_ [link](http://e.example) `code` # h"), extensions=MARKDOWN_EXTENSIONS
    )
    for tag in ("<strong>", "<em>", "<a ", "<code>", "<h1"):
        assert tag not in html_out


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        "Bob's laptop",
        "a*b*c and _x_",
        "[link](http://e.example)",
        "`code`",
        "# not a heading",
        "a & b",
        "{{ facts }} {% if %}",
        "x | y",
        "c:\\path\\to",
        "50% (approx.) +/- 2!",
        "AMD EPYC 7B13 @ 2.45GHz",
        'say "hi"',
    ],
)
def test_plain_text_is_shown_literally(text: str) -> None:
    assert rendered_text(plain_text(text)) == text


def test_plain_text_tilde_is_shown_literally() -> None:
    """`~` means nothing to the site's Markdown, so escaping it leaves a stray backslash on the page."""
    assert rendered_text(plain_text("~2 GHz, 4 GiB")) == "~2 GHz, 4 GiB"


def test_pick_needs_exactly_one_match() -> None:
    records: list[dict[str, Any]] = [
        {"machine": "a", "workload": "mixed", "tps": 1},
        {"machine": "a", "workload": "select-only", "tps": 2},
        {"machine": "b", "workload": "mixed", "tps": 3},
    ]
    assert pick(records, machine="a", workload="select-only")["tps"] == 2
    with pytest.raises(jinja2.UndefinedError, match="found 0"):
        pick(records, machine="c")
    with pytest.raises(jinja2.UndefinedError, match="found 2"):
        pick(records, machine="a")
    assert [r["tps"] for r in select(records, workload="mixed")] == [1, 3]
    assert select(records, machine="z") == []


# -- templates --------------------------------------------------------------------------------------------
def test_a_misspelt_fact_fails_the_build(tmp_path: Path) -> None:
    renderer = PageRenderer(tmp_path / "data", tmp_path / "docs")
    template = renderer.env.from_string("{{ facts.peaks[0].peak_tsp | number }}")
    with pytest.raises(jinja2.UndefinedError, match="peak_tsp"):
        template.render(facts={"peaks": [{"peak_tps": 1.0}]})
    assert (
        renderer.env.from_string("{{ facts.peaks[0].peak_tps | number }}").render(
            facts={"peaks": [{"peak_tps": 1234.0}]}
        )
        == "1,234"
    )


def test_a_page_quoting_a_missing_fact_fails(tmp_path: Path) -> None:
    facts = tmp_path / "data" / "facts"
    facts.mkdir(parents=True)
    (facts / "demo.json").write_text(json.dumps({"peaks": [{"machine": "a", "peak_tps": 5.0}]}))
    renderer = PageRenderer(tmp_path / "data", tmp_path / "docs")
    renderer.env.loader = jinja2.DictLoader(
        {
            "good.md.j2": "{{ pick(facts.peaks, machine='a').peak_tps | number }} tps",
            "bad.md.j2": "{{ facts.points | length }} points",
        }
    )
    assert renderer.render("good.md.j2", "articles/demo.md", "demo") == "5 tps"
    with pytest.raises(jinja2.UndefinedError, match="points"):
        renderer.render("bad.md.j2", "articles/demo.md", "demo")


# -- the real article -------------------------------------------------------------------------------------
def passes(workload: str, clients: int, tps: list[float]) -> list[dict[str, Any]]:
    return [
        {
            "workload": workload,
            "clients": clients,
            "tps": value,
            "pass_no": pass_no,
            "latency_avg_ms": round(clients * 1000 / value, 4),
        }
        for pass_no, value in enumerate(tps, 1)
    ]


@pytest.fixture(scope="module")
def aggregated(tmp_path_factory: pytest.TempPathFactory, write_run: RunWriter) -> Path:
    """build/data for a results folder with one machine; its mixed workload peaks at 12,345 tps. Aggregated
    once for the module: the tests only read it."""
    tmp_path = tmp_path_factory.mktemp("aggregated")
    results = tmp_path / "results"
    rows = [
        *passes("mixed", 1, [5000, 5100, 5200]),
        *passes("mixed", 2, [12000, 12345, 12500]),
        *passes("mixed", 4, [11000, 11500, 12000]),
        *passes("select-only", 1, [9000, 9100, 9200]),
        *passes("select-only", 2, [17000, 17500, 18000]),
        *passes("select-only", 4, [16000, 16500, 17000]),
        *passes("tpcb-like", 1, [800, 810, 820]),
        *passes("tpcb-like", 2, [1500, 1510, 1520]),
        *passes("tpcb-like", 4, [1400, 1410, 1420]),
    ]
    write_run(results, "alpha-box", rows, profile="full")
    machine_file = results / "alpha-box" / "machine.yaml"
    facts = yaml.safe_load(machine_file.read_text())
    machine_file.write_text(yaml.safe_dump({**facts, "description": MACHINE_DESCRIPTION}))
    data = tmp_path / "data"
    aggregate_all(results_dir=results, out_dir=data)
    return data


def render_article(data: Path, docs: Path) -> str:
    return PageRenderer(data, docs).render(f"{ARTICLE}.md.j2", f"articles/{ARTICLE}.md", ARTICLE)


def render_machine_page(data: Path, docs: Path, machine: str = "alpha-box") -> str:
    """The machine's own page (machines/<id>.md): its detail from every article."""
    renderer = PageRenderer(data, docs)
    page = renderer.render_machine_page(machine, [ARTICLE, "pool-sizing"])
    return renderer.chart_book.resolve({docs / "page.md": page})[docs / "page.md"]


@pytest.mark.slow
def test_the_machine_page_renders_the_measured_peak(aggregated: Path, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    page = render_machine_page(aggregated, docs)
    assert "{{" not in page and "{%" not in page
    # Out of the search index (front matter), then the machine id, through the text filter.
    assert page.startswith("---\nsearch:\n  exclude: true\n---\n\n# alpha\\-box\n")
    assert "**12,345 transactions per" in page
    assert "**2 clients**" in page
    assert "No measurements yet" not in page
    for chart in ("tps", "latency"):
        # A machine's page draws its charts in the browser: no file is written beside them; charts.js offers
        # the rows and the spec the page holds (the line is hidden until it does).
        for suffix in (".csv", ".svg", ".vl.json"):
            assert not (docs / "charts" / f"tmc-alpha-box-{chart}{suffix}").exists()
        assert (
            f'<p class="connlab-chart__downloads" hidden>Download: <a download="tmc-alpha-box-{chart}.csv"'
            f' data-offer="csv">data (CSV)</a> · <a download="tmc-alpha-box-{chart}.vl.json"'
            ' data-offer="spec">Vega-Lite spec</a></p>'
        ) in page
        assert f"charts/tmc-alpha-box-{chart}" not in page
    assert page.count(NO_SVG_FALLBACK) >= 2


@pytest.mark.slow
def test_an_article_chart_keeps_its_svg_fallback(aggregated: Path, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    page = render_article(aggregated, docs)
    svg = docs / "charts" / "tmc-normalised.svg"
    assert svg.read_text().lstrip().startswith("<svg")
    assert 'src="../../charts/tmc-normalised.svg"' in page and NO_SVG_FALLBACK not in page


def picker_machines(page: str) -> str:
    """The picker's JSON list of machines, as picker.js reads it (it makes the select's options): its nav's
    data-machines attribute, single-quoted."""
    found = re.search(r"<nav class=\"connlab-picker\" aria-label=\"Machines\" data-machines='([^']*)'>", page)
    assert found, "the page has no picker list"
    return found.group(1)


@pytest.mark.slow
def test_the_article_keeps_the_cross_machine_view_and_points_to_each_machine(
    aggregated: Path, tmp_path: Path
) -> None:
    page = render_article(aggregated, tmp_path / "docs")
    assert "No measurements yet" not in page
    assert "tmc-normalised" in page and "tmc-peaks-by-cores" in page
    # The machine's detail is on its own page, which the picker links to (two levels up, then down, to the
    # article's section there); the one machine with the article's data is the default.
    assert "tmc-alpha-box-tps" not in page and "**12,345 transactions per" not in page
    assert '<select id="machine-picker"' in page
    entry = {"id": "alpha-box", "url": f"../../machines/alpha-box/#{ARTICLE}", "default": True}
    assert entry in json.loads(picker_machines(page))
    assert f'href="../../machines/alpha-box/#{ARTICLE}"' in page


@pytest.mark.slow
def test_the_verdict_columns_are_on_the_machine_page(aggregated: Path, tmp_path: Path) -> None:
    article = render_article(aggregated, tmp_path / "docs")
    machine_page = render_machine_page(aggregated, tmp_path / "docs")
    # The machine's page has its own column; the article, with few machines, one per machine as well. Both
    # are HTML tables written from the facts, never Markdown tables.
    head = "<th>claim</th><th>the source article's figure</th><th>"
    assert head + "alpha-box<br><small>" in machine_page
    assert head in article and ">alpha-box</a><br><small>" in article
    for page in (machine_page, article):
        assert "| claim |" not in page
        assert page.index('class="verdict-legend"') < page.index('class="verdict-table"')


@pytest.mark.slow
def test_the_machine_page_shows_contributed_text_literally(aggregated: Path, tmp_path: Path) -> None:
    page = render_machine_page(aggregated, tmp_path / "docs")
    assert "<script>alert" not in page
    assert "&lt;script&gt;" in page
    html_out = markdown.markdown(page, extensions=MARKDOWN_EXTENSIONS)
    assert "<script>alert" not in html_out
    assert 'href="http://evil.example"' not in html_out


@pytest.mark.slow
def test_the_article_without_measurements_says_so(tmp_path: Path) -> None:
    data = tmp_path / "data"
    aggregate_all(results_dir=tmp_path / "no-results", out_dir=data)
    page = render_article(data, tmp_path / "docs")
    assert "No measurements yet" in page
    assert "{{" not in page
    assert "Check it yourself" in page


@pytest.mark.slow
@pytest.mark.process  # the charts are compiled by node
def test_render_site_writes_every_page_once(aggregated: Path, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    written = render_site(aggregated, docs)
    assert set(written) == {
        docs / "articles" / f"{ARTICLE}.md",
        docs / "articles" / "pool-sizing.md",
        docs / "articles" / "four-poolers.md",
        docs / "articles" / "pgbouncer-trade.md",
        docs / "methodology.md",
        docs / "contributing.md",  # its durations come from the specs (connlab.contract.estimate)
        docs / "machines.md",
        docs / "index.md",  # lists the articles from their registry
        stamped_sources(docs)
        / MACHINE_PAGES_DIR
        / "alpha-box.html",  # a machine page's HTML fragment, stamped by publish
        docs / "machines" / "_shell.md",  # the page MkDocs builds for every machine page
    }
    assert (docs / "index.md").is_file()
    assert (docs / "assets" / "charts.js").is_file()
    assert (docs / "assets" / "vendor" / "vega.min.js").is_file()
    methodology = (docs / "methodology.md").read_text()
    assert "| `tps` | DOUBLE |" in methodology
    assert not re.search(r"\{\{|\{%", methodology)
    # Unchanged input: nothing is rewritten, so the site does not rebuild for nothing.
    mtime = (docs / "methodology.md").stat().st_mtime_ns
    assert render_site(aggregated, docs) == []
    assert (docs / "methodology.md").stat().st_mtime_ns == mtime


# -- contributed text, hostile ----------------------------------------------------------------------------
NASTY = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "**bold** [link](http://x)",
    "{{ 7*7 }}",
    "{% raw %}",
    "Ünïcödé — 東京 🚀 ½ ≥ ∞ ǅ",
]
# Characters that mean something to the site's Markdown when they are not escaped.
MARKDOWN_MARKERS = set("`*_{}[]()#+!|-")


@pytest.mark.parametrize("text", NASTY)
def test_plain_text_leaves_no_markup(text: str) -> None:
    escaped = plain_text(text)
    assert "<" not in escaped
    unescaped_markers = MARKDOWN_MARKERS & set(re.sub(r"\\.", "", escaped))
    assert not unescaped_markers, escaped
    html_out = markdown.markdown(escaped, extensions=MARKDOWN_EXTENSIONS)
    for tag in ("<script", "<img", "<strong", "<em", "<a ", "<code"):
        assert tag not in html_out


@pytest.mark.parametrize("text", NASTY)
def test_the_text_filter_shows_the_value_literally(tmp_path: Path, text: str) -> None:
    """The value goes through `{{ value | text }}` in a real template: Jinja does not evaluate it and the
    reader sees exactly the contributed characters."""
    renderer = PageRenderer(tmp_path / "data", tmp_path / "docs")
    output = renderer.env.from_string("{{ value | text }}").render(value=text)
    assert output == plain_text(text)
    assert "49" not in output
    assert rendered_text(output) == text


def test_the_machine_line_shows_the_client_hosts_tcp_settings(tmp_path: Path) -> None:
    """The machine page's line gives the client's port range, tcp_tw_reuse and tcp_fin_timeout where
    machine.yaml records them, and nothing of them where it does not."""
    renderer = PageRenderer(tmp_path / "data", tmp_path / "docs")
    template = renderer.env.get_template("_machine_line.md.j2")
    base = {
        "id": "box", "cpu_model": "Test CPU", "threads": 2, "memory_gib": 8.0, "os": "Debian",
        "kernel": "6.1", "virtualised": "none", "postgres_version": "15.18", "cpu_budget_method": "cgroup-v1",
        "profile": "quick", "description": "", "published": True,
    }  # fmt: skip
    ports = {"ip_local_port_range": "32768 60999", "tcp_tw_reuse": 2, "tcp_fin_timeout": 60}

    def shown(machine: dict[str, Any]) -> str:
        return re.sub(r"<[^>]+>", "", rendered_text(template.render(machines=[machine], machine_id="box")))

    recorded = shown({**base, **ports})
    assert recorded.endswith(
        "profile quick; client's TCP: ip_local_port_range 32768 60999, tcp_tw_reuse 2, tcp_fin_timeout 60 s."
    )
    older = shown(base)
    assert older.endswith("profile quick.") and "TCP" not in older


def test_the_machine_line_says_whether_its_runs_were_checked_against_a_calibration(tmp_path: Path) -> None:
    """A measured machine with a calibration says what its runs were held to; one without is unverified; a
    source article's printed figures have no runs to check."""
    template = PageRenderer(tmp_path / "data", tmp_path / "docs").env.get_template("_machine_line.md.j2")
    base = {
        "id": "box", "cpu_model": "Test CPU", "threads": 2, "memory_gib": 8.0, "os": "Debian",
        "kernel": "6.1", "virtualised": "none", "postgres_version": "15.18", "cpu_budget_method": "cgroup-v1",
        "profile": "full", "description": "", "published": False,
    }  # fmt: skip

    def shown(machine: dict[str, Any], off: list[dict[str, Any]] | None = None) -> str:
        rendered = template.render(machines=[machine], machine_id="box", off_calibrations=off or [])
        return re.sub(r"<[^>]+>", "", rendered_text(rendered))

    calibrated = shown({**base, "calibration_tps": 13882.0})
    assert "calibration 13,882 tps, which each quick and full run its figures come from matched" in calibrated
    assert "unverified" not in calibrated
    assert "unverified: no calibration recorded" in shown(base)
    assert "unverified" not in shown({**base, "published": True})
    # Runs that calibrated off the machine's are named with their figures; the verdicts that read them say so.
    off = shown(
        {**base, "calibration_tps": 13882.0},
        [
            {"experiment": "queue-depth", "tps": [6100.0]},
            {"experiment": "idle-memory", "tps": [5000.0, 7000.5]},
        ],
    )
    assert "calibration 13,882 tps, which every other quick and full run its figures come from matched" in off
    assert off.endswith(
        "; unverified: queue-depth's run calibrated at 6,100 tps and idle-memory's runs calibrated at "
        "5,000 and 7,000 tps, further off, so this machine was under other load then (or another machine "
        "measured them), and the verdicts that read them are marked unverified."
    )


def test_unicode_passes_through_unchanged() -> None:
    assert plain_text(NASTY[-1]) == NASTY[-1]


# -- compare and verdicts ---------------------------------------------------------------------------------
def tps_point(median: float | None, low: float | None, high: float | None) -> dict[str, Any]:
    return {"tps_median": median, "tps_min": low, "tps_max": high}


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (tps_point(100, 90, 110), tps_point(105, 95, 115), "no measurable difference"),
        (tps_point(100, 90, 110), tps_point(120, 110, 130), "no measurable difference"),  # touching
        (tps_point(200, 190, 210), tps_point(105, 95, 115), "higher"),
        (tps_point(105, 95, 115), tps_point(200, 190, 210), "lower"),
        (tps_point(200, 190, 210), tps_point(None, None, None), "no measurable difference"),
        (tps_point(200, 190, 210), tps_point(100, float("nan"), 110), "no measurable difference"),
    ],
)
def test_compare(a: dict[str, Any], b: dict[str, Any], expected: str) -> None:
    assert compare(a, b) == expected


def test_compare_other_columns() -> None:
    a = {"lat": 10.0, "lat_lo": 9.0, "lat_hi": 11.0}
    b = {"lat": 2.0, "lat_lo": 1.5, "lat_hi": 2.5}
    assert compare(a, b, "lat", "lat_lo", "lat_hi") == "higher"
    assert compare(b, a, "lat", "lat_lo", "lat_hi") == "lower"


# -- the Machines page ------------------------------------------------------------------------------------
@pytest.fixture
def with_published(tmp_path: Path, write_run: RunWriter) -> Path:
    """build/data for one measured machine and the committed published-too-many-connections folder."""
    results = tmp_path / "results"
    rows = [*passes("mixed", 1, [5000, 5100, 5200]), *passes("mixed", 2, [9000, 9100, 9200])]
    write_run(results, "alpha-box", rows, profile="full")
    shutil.copytree(
        PINNED_RESULTS / "published-too-many-connections", results / "published-too-many-connections"
    )
    assert validate_results(results) == []
    data = tmp_path / "data"
    aggregate_all(results_dir=results, out_dir=data)
    return data


@pytest.mark.slow
def test_the_machines_page_lists_measured_and_published(with_published: Path, tmp_path: Path) -> None:
    page = PageRenderer(with_published, tmp_path / "docs").render("machines.md.j2", "machines.md", "machines")
    assert "{{" not in page and "{%" not in page
    # Two tables list every machine: the hardware first, then the software and the run.
    rows: dict[str, list[list[str]]] = {}
    for line in page.splitlines():
        if line.startswith("| "):
            rows.setdefault(line.split(" | ")[0], []).append(line.split(" | "))
    measured_software = rows["| alpha\\-box"][-1]
    (published, published_software) = rows["| published\\-too\\-many\\-connections"]
    assert published[1] == "Apple M3"
    header = [cell.strip(" |") for cell in rows["| machine"][-1]]
    profile = header.index("profile, date")  # after a column per pooler of the registry
    assert measured_software[profile].startswith("full, ")
    assert published_software[profile].strip(" |") == "published"
    pooler_headers = rows["| machine"][-1][2 : profile - 1]
    assert pooler_headers == [config.label for config in VERSIONED.values()]
    assert "PgBouncer" in pooler_headers and "PgPool-II" in pooler_headers
    html_out = markdown.markdown(page, extensions=MARKDOWN_EXTENSIONS)
    # The published folder's article and description are listed, as text.
    assert "How many Postgres connections is too many?" in html.unescape(html_out)
    assert "Docker Desktop" in html_out


@pytest.mark.slow
def test_a_machine_id_with_a_dot_renders(tmp_path: Path, write_run: RunWriter) -> None:
    """`m5.large` is a valid machine id (validate and `connlab run` accept '.'), so its charts must render:
    the chart ids built from it may not be refused."""
    results = tmp_path / "results"
    rows = [
        *passes("mixed", 1, [5000, 5100, 5200]),
        *passes("mixed", 2, [9000, 9100, 9200]),
        *passes("select-only", 1, [9000, 9100, 9200]),
        *passes("select-only", 2, [17000, 17500, 18000]),
    ]
    write_run(results, "m5.large", rows, profile="full")
    assert validate_results(results) == []
    aggregate_all(results_dir=results, out_dir=tmp_path / "data")
    render_site(tmp_path / "data", tmp_path / "docs")
    assert "m5.large" in (tmp_path / "docs" / "articles" / f"{ARTICLE}.md").read_text()


@pytest.mark.slow
def test_a_failed_windows_error_is_shown_literally(tmp_path: Path, write_run: RunWriter) -> None:
    """pgbench's error text is contributed data too; on the page it must read exactly as written (the
    article quotes it inside a code span, where Markdown escapes are not undone)."""
    error = "connection to server on socket (/tmp/.s.PGSQL.5432) failed: FATAL: sorry, <too> many clients"
    rows = [
        *passes("mixed", 1, [5000, 5100, 5200]),
        *passes("mixed", 2, [9000, 9100, 9200]),
        *passes("select-only", 1, [9000, 9100, 9200]),
        *passes("select-only", 2, [17000, 17500, 18000]),
    ]
    rows[4] = {**rows[4], "ok": False, "exit_code": 2, "error": error}
    results = tmp_path / "results"
    write_run(results, "alpha-box", rows, profile="full")
    assert validate_results(results) == []
    aggregate_all(results_dir=results, out_dir=tmp_path / "data")
    page = render_machine_page(tmp_path / "data", tmp_path / "docs")
    html_out = markdown.markdown(page, extensions=MARKDOWN_EXTENSIONS)
    # Chart data is JSON inside <script type="application/json">: inert there, and not what a reader sees.
    html_out = re.sub(r"<script\b.*?</script>", "", html_out, flags=re.S)
    assert "<too>" not in html_out
    shown = html.unescape(re.sub(r"<[^>]+>", "", html_out))
    assert error in shown


def render_pool_sizing(data: Path, docs: Path) -> str:
    return PageRenderer(data, docs).render("pool-sizing.md.j2", "articles/pool-sizing.md", "pool-sizing")


@pytest.mark.slow
def test_pool_sizing_without_measurements_says_so(tmp_path: Path) -> None:
    data = tmp_path / "data"
    aggregate_all(results_dir=tmp_path / "no-results", out_dir=data)
    page = render_pool_sizing(data, tmp_path / "docs")
    assert "No measurements yet" in page and "{{" not in page
    assert "Check it yourself" in page


@pytest.mark.slow
def test_pool_sizing_quotes_the_fit_of_each_machine_on_its_page(aggregated: Path, tmp_path: Path) -> None:
    page = render_machine_page(aggregated, tmp_path / "docs")
    assert "{{" not in page and "{%" not in page
    with duckdb.connect(str(aggregated / "connlab.duckdb"), read_only=True) as con:
        fits = con.execute(
            "SELECT machine, r_squared FROM main.usl_fits WHERE workload = 'tpcb-like' AND basis = 'medians' "
            "AND NOT anchored AND experiment = 'clients-sweep'"
        ).fetchall()
    assert fits, "the fixture's sweep should be fitted"
    for _machine, r_squared in fits:
        assert f"R² = {significant(r_squared, 3)}" in page
    assert 'id="chart-pool-sim-' in page


@pytest.mark.slow
def test_the_machines_page_compares_measured_machines(tmp_path: Path, write_run: RunWriter) -> None:
    """Per measured machine: its peak absolute and per core, a sentence against the others computed from
    the data, and once, what it did not run."""
    results = tmp_path / "results"
    for machine, scale in (("big-box", 2.0), ("small-box", 1.0)):
        rows = [
            *passes("mixed", 1, [5000 * scale, 5100 * scale, 5200 * scale]),
            *passes("mixed", 2, [9000 * scale, 9100 * scale, 9200 * scale]),
            *passes("mixed", 4, [8000 * scale, 8100 * scale, 8200 * scale]),
        ]
        write_run(results, machine, rows, profile="full")
    assert validate_results(results) == []
    data = tmp_path / "data"
    aggregate_all(results_dir=results, out_dir=data)
    page = PageRenderer(data, tmp_path / "docs").render("machines.md.j2", "machines.md", "machines")
    assert "{{" not in page and "{%" not in page
    # The comparison's row, linked to the machine's own page.
    big = next(line for line in page.splitlines() if line.startswith("| [big\\-box](machines/big-box.md) | "))
    assert "| 9,100 (9,000–9,200) |" not in big  # the big box's peak is twice the small one's
    assert "| 18,200 (18,000–18,400) |" in big
    # Its peak per core is twice the other machine's, computed, not typed.
    assert "its peak per server core is\n  2.0 times the median of the other\n  1 measured machine" in page
    # Once per machine, nowhere else.
    assert page.count("It did not run backend\\-memory, client\\-bound") == 2


def render_tmc_with_copies(tmp_path: Path, copies: int) -> str:
    """The article from the committed facts with `copies` more measured curves (one machine's, renamed)."""
    data = tmp_path / "data"
    shutil.copytree(FACTS_BEFORE, data)
    facts_file = data / "facts" / "too-many-connections.json"
    facts = json.loads(facts_file.read_text())
    first = next(r["machine"] for r in facts["normalised"] if not r["published"])
    curve = [r for r in facts["normalised"] if r["machine"] == first]
    facts["normalised"] += [{**r, "machine": f"copy-{i:02d}"} for i in range(copies) for r in curve]
    facts_file.write_text(json.dumps(facts))
    renderer = PageRenderer(data, tmp_path / "docs")
    return renderer.render(
        "too-many-connections.md.j2", "articles/too-many-connections.md", "too-many-connections"
    )


def test_past_twelve_machines_the_normalised_chart_draws_their_spread(tmp_path: Path) -> None:
    few = render_tmc_with_copies(tmp_path / "few", 0)
    assert "measured machines (median, min–max)" not in few and '"machine"' in few
    many = render_tmc_with_copies(tmp_path / "many", 13)
    assert "With 16 measured machines, a line each would hide the shape" in many
    figure = re.search(r'id="chart-tmc-normalised"[^>]*>.*?<script[^>]*>(.*?)</script>', many, re.S)
    assert figure, "no normalised chart on the article"
    spec = json.loads(figure[1])
    series = {row["series"] for row in spec["datasets"]["rows"]}
    assert "measured machines (median, min–max)" in series and len(series) > 1  # the published curves too


def test_indexed_pick_answers_as_pick_does() -> None:
    from connlab.site.render.environment import IndexedPick

    records = [{"machine": "a", "n": 1}, {"machine": "b", "n": 2}, {"machine": "b", "n": 3}, {"n": 4}]
    indexed = IndexedPick()
    for where in ({"machine": "a"}, {"n": 2.0}, {"machine": "b", "n": 3}, {"machine": None}):
        assert indexed(records, **where) == pick(records, **where)
    for where in ({"machine": "b"}, {"machine": "z"}, {"n": [1]}):
        with pytest.raises(jinja2.UndefinedError):
            pick(records, **where)
        with pytest.raises(jinja2.UndefinedError):
            indexed(records, **where)


def version_row(machine: str, moved: float) -> dict[str, Any]:
    return {
        "machine": machine, "old_version": "15.18", "new_version": "18.6", "peak_moved": moved,
        "peak_moved_low": moved / 2, "peak_moved_high": moved * 2, "far_share_change": -0.09,
        "far_share_change_low": -0.2, "far_share_change_high": 0.1, "connection_ratio": None,
        "connection_ratio_low": None, "connection_ratio_high": None,
    }  # fmt: skip


def render_simulator_selector(tmp_path: Path, shown: int, total: int) -> str:
    """_usl_simulator.md.j2 for `shown` machines of `total` with a fit, each chart left out."""
    template = PageRenderer(tmp_path / "data", tmp_path / "docs").env.get_template("_usl_simulator.md.j2")
    machines = [f"box-{i:02d}" for i in range(shown)]
    fit = {"fit_lambda": 2065.16, "fit_sigma": 0.31, "fit_kappa": 0.0042}
    usl = {
        "machines": machines,
        "machines_total": total,
        "summary": [{"machine": m, "peak": 16} for m in machines],
        "simulator_points": [
            {**fit, "machine": m, "workload": "tpcb-like", "clients": n, "tps_median": 100.0 * n,
             "tps_min": 90.0 * n, "tps_max": 110.0 * n}
            for m in machines
            for n in (1, 4, 16)
        ],
    }  # fmt: skip
    return template.render(usl=usl, chart=lambda chart_id, *_: f"[chart {chart_id}]")


def test_the_simulators_selector_lists_its_machines_and_past_them_points_to_the_machine_pages(
    tmp_path: Path,
) -> None:
    from connlab.data.answers.usl_across import PER_MACHINE_UP_TO

    many = render_simulator_selector(tmp_path / "many", PER_MACHINE_UP_TO, PER_MACHINE_UP_TO + 3)
    assert many.count("<option ") == PER_MACHINE_UP_TO
    assert many.count("[chart pool-sim-across-") == PER_MACHINE_UP_TO
    line = next(line for line in many.splitlines() if line.startswith("The other "))
    assert line.startswith("The other 3 machines' simulators") and "](../machines.md)" in line
    # A line of Markdown of its own, not the tail of the HTML block above it.
    assert many.splitlines()[many.splitlines().index(line) - 1] == ""
    every = render_simulator_selector(tmp_path / "every", PER_MACHINE_UP_TO, PER_MACHINE_UP_TO)
    assert every.count("<option ") == PER_MACHINE_UP_TO and "The other " not in every


def test_the_version_table_keeps_its_size_past_a_dozen_machines(tmp_path: Path) -> None:
    """A row per machine up to a dozen; past it, a row per pair of versions over every machine (the facts'
    version_spread), so the article does not grow with the machines."""
    template = PageRenderer(tmp_path / "data", tmp_path / "docs").env.get_template("_version_table.md.j2")
    few = [version_row(f"m{i:02d}", 1.5) for i in range(charts.LINE_PER_MACHINE_UP_TO)]
    spread = {**version_row("", 1.5), "machines": 13, "peak_moved_low": 0.5, "peak_moved_high": 3.0}
    text = template.render(facts={"version_summary": few, "version_spread": [spread]}, charts=charts)
    assert text.count("](../machines/m") == charts.LINE_PER_MACHINE_UP_TO
    assert "| 1.5 (0.75–3.0) | -9.0 points (-20 to 10) | – |" in text
    many = [*few, version_row("m12", 1.5)]
    text = template.render(facts={"version_summary": many, "version_spread": [spread]}, charts=charts)
    assert "](../machines/" not in text
    assert "| 13 | 15.18 → 18.6 | 1.5 (0.50–3.0) | -9.0 points (-20 to 10) | – |" in text
    assert "13 measured\nmachines" in text


def test_the_seed_version_sentence_keeps_its_size_past_a_dozen_machines(tmp_path: Path) -> None:
    """Each machine's figure beside the seed's up to a dozen machines; past it, one sentence over them all."""
    template = PageRenderer(tmp_path / "data", tmp_path / "docs").env.get_template("_seed_version.md.j2")
    machines = [{"id": "seed", "published": True, "postgres_version": "18.1"}] + [
        {"id": f"m{i:02d}", "published": False, "postgres_version": "15.18"} for i in range(13)
    ]
    rows = [
        {"machine": f"m{i:02d}", "postgres_version": "18.6", "peak_per_core": float(i + 1),
         "peak_per_core_low": 1.0, "peak_per_core_high": 20.0, "seed_peak_per_core": 2.0}
        for i in range(13)
    ]  # fmt: skip

    def sentence(count: int) -> str:
        facts = {"seed_version_peaks": rows[:count]}
        text = template.render(facts=facts, machines=machines, seed_id="seed", what="the peak", charts=charts)
        return " ".join(text.split())

    twelve = sentence(charts.LINE_PER_MACHINE_UP_TO)
    assert twelve.count("on m") == charts.LINE_PER_MACHINE_UP_TO and "m11, PostgreSQL 18.6" in twelve
    thirteen = sentence(13)
    assert "on m0" not in thirteen
    assert "on 13 machines (PostgreSQL 18.6): they put the peak at a median of 7.0 clients" in thirteen
    assert "from 1.0 on one machine to 13 on another" in thirteen and "published 2.0." in thirteen


def test_the_machines_page_keeps_its_size_past_a_dozen_machines(tmp_path: Path) -> None:
    """A row and a paragraph per measured machine up to a dozen, each row linked to the machine's page; past
    it, the median machine with the lowest and the highest, and the picker to every machine's page. The
    published sets are listed either way."""
    from connlab.site.layout import picker_options

    template = PageRenderer(tmp_path / "data", tmp_path / "docs").env.get_template("machines.md.j2")
    published = {"id": "published-seed", "published": True, "cpu_model": "Seed CPU", "cores": 8,
                 "threads": 16, "memory_gib": 64, "os": "Linux", "kernel": "6.1", "postgres_version": "16",
                 "cpu_budget_method": "cgroup", "profile": "published", "collected_at": "2026-01-01",
                 "article": "a seed", "description": "the seed's machine"}  # fmt: skip

    def page(count: int) -> str:
        measured = [
            {**published, "id": f"m{i:02d}", "published": False, "cpu_model": f"CPU {i}", "profile": "full",
             "article": None, "description": f"box {i}", "calibration_tps": 1000.0 + i}
            for i in range(count)
        ]  # fmt: skip
        comparison = [
            {"machine": f"m{i:02d}", "server_cores": 1.0, "peak_tps": 100.0 * (i + 1),
             "peak_tps_min": 90.0 * (i + 1), "peak_tps_max": 110.0 * (i + 1), "peak_clients": 4,
             "peak_clients_per_core": 4.0, "peak_tps_per_core": 100.0 * (i + 1),
             "calibration_tps": 1000.0 + i, "profile": "full", "experiments": 19 - i % 3,
             "all_experiments": 19, "others": count - 1,
             "others_tps_per_core": 500.0, "others_calibration_tps": 1005.0, "others_clients_per_core": 4.0}
            for i in range(count)
        ]  # fmt: skip
        machines = [published, *measured]
        columns = [{"machine": f"m{i:02d}", "missing": ""} for i in range(count)]
        facts = {"comparison": comparison, "columns": columns}
        return template.render(
            facts=facts, machines=machines, picker=picker_options("machines.md", machines),
            page="machines.md", charts=charts,
        )  # fmt: skip

    twelve = page(charts.LINE_PER_MACHINE_UP_TO)
    assert twelve.count("](machines/m") == charts.LINE_PER_MACHINE_UP_TO
    assert "| m11 | CPU 11 |" in twelve and "box 11" in twelve
    assert "| published\\-seed | Seed CPU |" in twelve
    thirteen = page(13)
    assert "](machines/m" not in thirteen and "| m12 |" not in thirteen and "box 12" not in thirteen
    # Machines/ is the Machines page's own folder once built, and the machines' pages are in it.
    assert {"id": "m12", "url": "m12/"} in json.loads(picker_machines(thirteen))
    assert "| published\\-seed | Seed CPU |" in thirteen and "the seed's machine" in thirteen
    summary = " ".join(thirteen.split())
    assert "13 measured machines. Their peak per server core is 700 tps on the median machine" in summary
    assert "from 100 to 1,300" in summary
    assert "ran 18 of the 19 experiments (from 17 to 19)" in summary
    # Past a dozen, only the picker's list grows with the machines, within its one line.
    assert len(page(113).splitlines()) == len(thirteen.splitlines())
    assert len(json.loads(picker_machines(page(113)))) == 113


def test_raw_files_are_copied_by_status_and_the_changed_machines_listed(tmp_path: Path) -> None:
    """Each lead's raw files copied where missing or changed; the machines whose files were copied, or whose
    folder went with them, are added to the list publishing reads (and only those)."""
    results, raw = tmp_path / "results", tmp_path / "docs" / "raw"
    for name in ("a/machine.yaml", "a/x/run.csv", "b/machine.yaml"):
        (results / name).parent.mkdir(parents=True, exist_ok=True)
        (results / name).write_text(name)
    leads = {
        "a": {"machine": "a", "raw": ["machine.yaml", "x/run.csv"]},
        "b": {"machine": "b", "raw": ["machine.yaml", "missing.csv"]},
    }
    copy_raw_files(leads, results, raw)
    assert json.loads((raw / RAW_CHANGED).read_text()) == ["a", "b"]
    assert (raw / "a" / "x" / "run.csv").read_text() == "a/x/run.csv"
    (raw / RAW_CHANGED).unlink()  # as publishing leaves it
    copy_raw_files(leads, results, raw)
    assert not (raw / RAW_CHANGED).exists()
    (results / "b" / "machine.yaml").write_text("b, longer now")
    copy_raw_files({"b": leads["b"]}, results, raw)
    assert json.loads((raw / RAW_CHANGED).read_text()) == ["a", "b"]
    assert not (raw / "a").exists()
    assert (raw / "b" / "machine.yaml").read_text() == "b, longer now"
