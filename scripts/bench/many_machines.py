"""How `make site` scales with the number of machines: cold build, no-op build, one machine added.

Each size runs in a temporary copy of the repository with N synthetic machines added to the committed ones:
copies of a measured machine under new ids, every throughput scaled by a factor of its own (0.5 to 2), so
no two machines share a curve. The copy uses this checkout's virtualenv and vendored JavaScript; the
repository itself is never written to. Per size it prints the cold build, the no-op build, the rebuild after
one more machine, the cold build's cost per machine (and, from the second size on, what each machine beyond
the previous size added to it), the heaviest page's gzipped weight (HTML with the scripts and styles it
loads, the chart libraries where it has a chart and the search index; chart specs and data are inline) and
the time headless Chromium takes to draw every chart on that page (the median of five loads, from the
navigation's start to the frame that shows the last chart). Last, a
host check: a fixed piece of CPU work timed before and after the size's builds. It never changes, so it
tells how fast the host itself was while a row was measured: a shared virtual machine can run a third
slower in one hour than in another, and a row is comparable with another only where their host checks
agree. A second table then splits each size's cold and one-added builds by stage (aggregate, render, site),
as each stage reported its own time: where a build's time went.

    .venv/bin/python scripts/bench/many_machines.py --machines 10 100 1000
    .venv/bin/python scripts/bench/many_machines.py --tiny      # the source machine alone: checks it runs

With --compare-with DIR, another checkout of the project (e.g. `git worktree add /tmp/old <commit>`) is
measured as well, alternating with this one at each size (that one first), so that both codes see the same
host at nearly the same time; each row then starts with the code it measured ("other" or "this"). Each code
builds its own checkout's results with its own Makefile, and shares this checkout's virtualenv and
node_modules; a checkout without connlab/__main__.py (before the command's entry moved there) is run as
`python -m connlab.cli`.
"""

from __future__ import annotations

import argparse
import csv
import functools
import gzip
import io
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import yaml

from bench.served_site import charts_drawn_clock, serving
from connlab.site.charts.expressions import expressions_asset_name
from connlab.site.layout import COMPILED_CHARTS_SUBDIR

REPO_ROOT = Path(__file__).resolve().parents[2]
SOURCE_MACHINE = "amd-epyc-2c-24g"
# Shared with the copy, never rebuilt there (make -o): the copy must not reinstall into this virtualenv.
SHARED = (".venv", "node_modules")
STAMPS = (".venv/.installed", "node_modules/.installed")
# Columns that carry throughput; every other figure is copied as measured.
SCALED_COLUMNS = ("tps", "transactions")
CHART_FIGURE = '<figure class="connlab-chart'
COMPILED_SET = "data-vega-set"
SEARCH_FORM = 'data-md-component="search"'
LOCAL_ASSET = re.compile(r'<(?:script|link)[^>]+(?:src|href)="(?!https?:|//|data:)([^"#?]+\.(?:js|css))"')


def copy_repository(target: Path, checkout: Path = REPO_ROOT) -> None:
    """The checkout's tracked and untracked-but-not-ignored files, with their times (make compares them),
    and this checkout's virtualenv and node_modules."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=checkout, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, listed):
        source = checkout / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    for name in SHARED:
        (target / name).symlink_to(REPO_ROOT / name)


def _scale_csv(text: str, machine_id: str, factor: float) -> str:
    rows = list(csv.DictReader(io.StringIO(text)))
    if not rows:
        return text
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        if "machine" in row:
            row["machine"] = machine_id
        # Transactions are whole: tps follows their rounded count, so that the two still agree over the
        # window's time (validation checks that they do).
        ratio = factor
        if row.get("transactions") and float(row["transactions"]) > 0:
            scaled_transactions = round(float(row["transactions"]) * factor)
            ratio = scaled_transactions / float(row["transactions"])
            row["transactions"] = str(scaled_transactions)
        for column in SCALED_COLUMNS:
            if column != "transactions" and row.get(column):
                row[column] = f"{float(row[column]) * ratio:.4f}"
        writer.writerow(row)
    return out.getvalue()


def add_machine(results: Path, index: int, source: str = SOURCE_MACHINE) -> str:
    """results/synthetic-<index>: the source machine under a new id, throughput scaled."""
    machine_id = f"synthetic-{index:04d}"
    factor = 0.5 + 1.5 * ((index * 0.6180339887) % 1.0)  # spread over 0.5..2, different for every index
    for path in (results / source).rglob("*"):
        if not path.is_file():
            continue
        target = results / machine_id / path.relative_to(results / source)
        target.parent.mkdir(parents=True, exist_ok=True)
        text = path.read_text(encoding="utf-8")
        if path.name == "machine.yaml":
            data = yaml.safe_load(text)
            data["id"] = machine_id
            if data.get("calibration_tps"):
                data["calibration_tps"] = round(float(data["calibration_tps"]) * factor, 1)
            text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
        elif path.suffix == ".csv":
            text = _scale_csv(text, machine_id, factor)
        target.write_text(text, encoding="utf-8")
    return machine_id


# The last line of each stage `make site` ran (connlab/cli.py), which ends with the stage's own time.
STAGE_LINE = re.compile(r"^(aggregated into|rendered|site built)\b.* in (\d+(?:\.\d+)?) s$", re.M)
STAGE_NAMES = {"aggregated into": "aggregate", "rendered": "render", "site built": "site"}


def stage_seconds(output: str) -> dict[str, float]:
    """The seconds each stage of a build took, by stage name, from what the build printed; a stage that was
    not due is absent."""
    return {STAGE_NAMES[what]: float(seconds) for what, seconds in STAGE_LINE.findall(output)}


def make_site(copy: Path) -> tuple[float, dict[str, float]]:
    """The build's wall time, and each stage's as the build reported it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONNLAB_")}
    # The copy's own code, not this checkout's (the virtualenv installs this checkout in editable mode).
    env["PYTHONPATH"] = str(copy / "scripts")
    command = ["make", "--no-print-directory", *(f"-o{stamp}" for stamp in STAMPS), "site"]
    if not (copy / "scripts" / "connlab" / "__main__.py").is_file():
        # The virtualenv's `connlab` script imports connlab.__main__, which older code does not have.
        command.append(f"CONNLAB={copy / '.venv' / 'bin' / 'python'} -m connlab.cli")
    started = time.perf_counter()
    result = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"make site failed in {copy}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return elapsed, stage_seconds(result.stderr)


def lazy_libraries(site: Path, html: str) -> list[Path]:
    """What charts.js fetches on a page with a chart, in the site: vega and vega-embed, vega-lite where a
    figure names no compiled chart, and, where figures name a compiled set, the variant a desktop in the
    light palette draws (assets/vega/<set>.wide-light.json) and the script of its expressions' functions
    (assets/vega/<set>.expressions.js)."""
    charts_js = site / "assets" / "charts.js"
    names = dict(
        re.findall(r'var (VEGA(?:_LITE|_EMBED)?) = "([^"]+)"', charts_js.read_text(encoding="utf-8"))
    )
    if set(names) != {"VEGA", "VEGA_LITE", "VEGA_EMBED"}:
        sys.exit(f"{charts_js}: no VEGA, VEGA_LITE and VEGA_EMBED; the page weight would leave them out")
    figures = re.findall(r"<figure class=\"connlab-chart[^>]*>", html)
    libraries = ["VEGA", "VEGA_EMBED"] + (
        ["VEGA_LITE"] if any(COMPILED_SET not in f for f in figures) else []
    )
    sets = sorted({match for f in figures for match in re.findall(COMPILED_SET + r'="([^"]+)"', f)})
    return [charts_js.parent / names[name] for name in libraries] + [
        site / COMPILED_CHARTS_SUBDIR / asset
        for name in sets
        for asset in (f"{name}.wide-light.json", expressions_asset_name(name))
    ]


def page_weight(page: Path, site: Path) -> int:
    """Gzipped bytes of the page, of every local script and stylesheet it loads, of the chart libraries
    charts.js fetches when the page has a chart, and of the search index the theme fetches."""
    html = page.read_text(encoding="utf-8")
    total = len(gzip.compress(html.encode(), 6))
    assets = {(page.parent / reference).resolve() for reference in LOCAL_ASSET.findall(html)}
    if CHART_FIGURE in html:
        assets |= {library.resolve() for library in lazy_libraries(site, html)}
    if SEARCH_FORM in html:  # the theme fetches the search index as every page starts
        assets.add((site / "search" / "search_index.json").resolve())
    for asset in sorted(assets):
        if asset.is_file() and asset.is_relative_to(site.resolve()):
            total += gzipped_size(asset)
    return total


@functools.cache
def gzipped_size(asset: Path) -> int:
    """One compression per script or stylesheet, however many pages load it."""
    return len(gzip.compress(asset.read_bytes(), 6))


def heaviest_page(site: Path) -> tuple[str, int]:
    weights = {str(page.relative_to(site)): page_weight(page, site) for page in site.rglob("*.html")}
    name = max(weights, key=lambda key: weights[key])
    return name, weights[name]


CHROMIUM = Path("/usr/bin/chromium")
# The first frame after every chart of the page was drawn: the last chart completes the page.
CHARTS_DRAWN_CLOCK, CHARTS_DRAWN_AT = charts_drawn_clock("every", "__connlabChartsDrawnAt")


# Loads of the page whose median is its drawing time: one load varies by a fifth from the next on this
# machine, more than a change worth measuring.
DRAW_LOADS = 5


def chart_draw_seconds(site: Path, page: str, loads: int = DRAW_LOADS) -> float | None:
    """The median, over a few loads, of the seconds from the start of headless Chromium's navigation to the
    page (served locally, cache empty: a fresh browser each time) until the first frame after every chart on
    it was drawn; None where Chromium or Playwright is missing. Clocked by the page itself
    (CHARTS_DRAWN_CLOCK): a check polled from outside the page would wait for whatever runs after the last
    chart, and Material's script may be busy right then. Served as
    `make serve` serves the site, by Python's threading HTTP server: one that answered one request at a time
    would hold the chart libraries back behind the search index, as no web server does."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not CHROMIUM.is_file():
        return None
    timings = []
    with serving(site) as root, sync_playwright() as playwright:
        url = f"{root}{page.removesuffix('index.html')}"
        for _ in range(loads):
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
            tab = browser.new_page(viewport={"width": 1400, "height": 900})
            tab.add_init_script(CHARTS_DRAWN_CLOCK)
            tab.goto(url, wait_until="load")
            tab.wait_for_function(f"() => ({CHARTS_DRAWN_AT})() !== undefined", timeout=60_000)
            timings.append(tab.evaluate(CHARTS_DRAWN_AT) / 1000)
            browser.close()
    return statistics.median(timings)


Figures = dict[str, float | str | int]  # one size's row


def host_check_seconds(repeats: int = 5) -> float:
    """The median time of a fixed piece of work, interpreted Python and then zlib in C, the two kinds of work
    a build does: the same work on every run of this script, whatever the repository holds."""
    payload = bytes(range(256)) * 80_000  # 20 MB
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        total = 0
        for value in range(4_000_000):
            total += value * value
        zlib.compress(payload, 6)
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def measure(
    synthetic: int, keep: bool, checkout: Path = REPO_ROOT, draw_loads: int = DRAW_LOADS, alone: bool = False
) -> Figures:
    """One size's row; `alone`: the copies beside the source machine only, the checkout's other folders
    left out (--tiny, which checks that the script runs, not how the site grows)."""
    copy = Path(tempfile.mkdtemp(prefix="connlab-machines-"))
    host_before = host_check_seconds()
    try:
        copy_repository(copy, checkout)
        results = copy / "results"
        if alone:
            for folder in results.iterdir():
                if folder.is_dir() and folder.name != SOURCE_MACHINE:
                    shutil.rmtree(folder)
        for index in range(1, synthetic):
            add_machine(results, index)
        machines = sum(1 for path in results.glob("*/machine.yaml"))
        cold, cold_stages = make_site(copy)
        noop, _ = make_site(copy)
        add_machine(results, synthetic)
        added, added_stages = make_site(copy)
        page, weight = heaviest_page(copy / "build" / "site")
        drawn = chart_draw_seconds(copy / "build" / "site", page, draw_loads)
        return {
            "machines": machines + 1, "cold_s": cold, "noop_s": noop, "added_s": added,
            "heaviest_page": page, "heaviest_mb": weight / 1e6, "cold_s_per_machine": cold / machines,
            "drawn_s": drawn, "host_before_s": host_before, "host_after_s": host_check_seconds(),
            **{f"cold_{stage}_s": seconds for stage, seconds in cold_stages.items()},
            **{f"added_{stage}_s": seconds for stage, seconds in added_stages.items()},
        }  # fmt: skip
    finally:
        if keep:
            print(f"kept {copy}", file=sys.stderr)
        else:
            shutil.rmtree(copy, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machines", type=int, nargs="+", default=[10, 100], help="synthetic machines")
    parser.add_argument(
        "--tiny",
        action="store_true",
        help="the source machine and two copies of it alone, the page drawn once: checks the script runs",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary copies (paths on stderr)")
    parser.add_argument(
        "--compare-with",
        type=Path,
        metavar="DIR",
        help="another checkout (git worktree add DIR <commit>), measured alternately with this one",
    )
    args = parser.parse_args()
    sizes = [2] if args.tiny else args.machines
    codes = {"this": REPO_ROOT}
    if args.compare_with is not None:
        other = args.compare_with.resolve()
        if not (other / "Makefile").is_file() or not (other / "scripts" / "connlab").is_dir():
            sys.exit(f"{other}: not a checkout of this project (no Makefile, no scripts/connlab)")
        codes = {"other": other, "this": REPO_ROOT}

    def label(code: str) -> str:
        """Each row's code, where two are compared."""
        return f"{code:<5}  " if len(codes) > 1 else ""

    print(
        label("code") + "machines  cold make site  no-op  one added  cold per machine  cold per machine more"
        "  heaviest page (gzipped), drawn in; host check before → after"
    )
    previous: dict[str, Figures] = {}
    rows = []
    for size in sizes:
        for code, checkout in codes.items():
            r = measure(size, args.keep, checkout, 1 if args.tiny else DRAW_LOADS, alone=args.tiny)
            rows.append((code, r))
            drawn = "no Chromium here" if r["drawn_s"] is None else f"{r['drawn_s']:.2f} s"
            print(
                label(code) + f"{r['machines']:>8}  {r['cold_s']:>12.1f} s  {r['noop_s']:>4.2f} s"
                f"  {r['added_s']:>7.1f} s  {r['cold_s_per_machine']:>14.2f} s"
                f"  {marginal_cost(previous.get(code), r):>21}"
                f"  {r['heaviest_mb']:.2f} MB {r['heaviest_page']}, {drawn};"
                f" {r['host_before_s']:.2f} → {r['host_after_s']:.2f} s",
                flush=True,
            )
            previous[code] = r
    print()
    print(label("code") + STAGES_HEADER)
    for code, r in rows:
        print(label(code) + stages_row(r))


# The stage table's columns, by title: each build's stages, as stage_seconds names them.
STAGE_COLUMNS = {
    f"{title} {stage}": f"{build}_{stage}_s"
    for build, title in (("cold", "cold"), ("added", "one added"))
    for stage in ("aggregate", "render", "site")
}
STAGES_HEADER = "machines  " + "  ".join(STAGE_COLUMNS)


def stages_row(r: Figures) -> str:
    """Where a size's cold and one-added builds spent their time, stage by stage, each figure under its
    title ("–": the stage did not run or did not say)."""
    cells = []
    for title, key in STAGE_COLUMNS.items():
        seconds = r.get(key)
        cells.append(("–" if seconds is None else f"{float(seconds):.1f} s").rjust(len(title)))
    return f"{r['machines']:>8}  " + "  ".join(cells)


def marginal_cost(previous: Figures | None, current: Figures) -> str:
    """What each machine beyond the previous size added to the cold build: cold ÷ machines falls while a
    fixed cost is spread over more machines, this stays flat where the cost per machine is constant."""
    if previous is None or current["machines"] == previous["machines"]:
        return "–"
    cold = float(current["cold_s"]) - float(previous["cold_s"])
    return f"{cold / (int(current['machines']) - int(previous['machines'])):.2f} s"


if __name__ == "__main__":
    main()
