"""The benchmark scripts under scripts/bench/ run in a tiny mode, so none can rot unnoticed."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path
from types import ModuleType

import pytest

from support.browser import CHROMIUM
from support.paths import PINNED_RESULTS, REPO_ROOT

# A pinned machine with one experiment: a site built from it alone is the quickest whole build.
SMALL_MACHINE = "intel-xeon-16c-126g"


@pytest.mark.e2e
@pytest.mark.usefixtures("require_root", "require_postgres")
def test_the_interrupt_campaign_reports_clean_rounds_and_a_resume(connlab_env: dict[str, str]) -> None:
    result = subprocess.run(
        [sys.executable, "scripts/bench/interrupt_campaign.py", "--rounds", "2", "--profile", "tiny",
         "--min-delay", "1", "--max-delay", "4", "--seed", "3"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=600, check=False, env=connlab_env,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert sum(line.startswith("round ") and ": clean: " in line for line in lines) == 2, result.stdout
    assert "2/2 clean" in lines and "resume ok" in lines, result.stdout


@pytest.mark.e2e
@pytest.mark.usefixtures("require_root", "require_postgres")
def test_the_observer_effect_compares_a_pair(connlab_env: dict[str, str]) -> None:
    result = subprocess.run(
        [sys.executable, "scripts/bench/observer_effect.py", "--pairs", "1", "--clients", "1",
         "--seconds", "1", "--profile", "tiny"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=600, check=False, env=connlab_env,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "pair 1: harness " in result.stdout and "median ratio " in result.stdout, result.stdout


@pytest.mark.e2e
@pytest.mark.usefixtures("require_root", "require_postgres")
def test_the_quick_profile_timer_times_a_tiny_run(connlab_env: dict[str, str]) -> None:
    if shutil.which("hyperfine") is None:
        pytest.skip("hyperfine is not installed (make setup installs it)")
    result = subprocess.run(
        ["bash", "scripts/bench/quick_profile_time.sh", "connect-cost"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=600, check=False,
        env={**connlab_env, "PROFILE": "tiny"},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Time (abs" in result.stdout, result.stdout


@pytest.mark.process
def test_the_load_runs_beside_each_run_and_ends_with_the_script() -> None:
    """Two runs of a command that counts the spinning processes and fails, as a failed suite would. The
    command counts this run's spinners only (CONNLAB_BUSY_TAG): under `make test-under-load` another run's
    spin beside it."""
    result = subprocess.run(
        ["bash", "scripts/bench/under_load.sh", "-n", "2", "-r", "2", "--",
         "bash", "-c", 'pgrep -c -f "^bash -c : $CONNLAB_BUSY_TAG;"; exit 3'],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    lines = result.stdout.splitlines()
    tag = re.fullmatch(r"under load: 2 CPU-bound processes \((connlab-busy-[0-9]+)\) beside: .*", lines[0])
    assert tag, result.stdout
    assert lines[1::2] == ["2", "2"], result.stdout
    assert [re.sub(r"in [0-9]+ s$", "in N s", line) for line in lines[2::2]] == [
        "run 1/2: exit 3 in N s",
        "run 2/2: exit 3 in N s",
    ]
    assert result.returncode == 1, "a failed run fails the script"
    mine = f"^bash -c : {tag[1]};"
    left = subprocess.run(["pgrep", "-f", mine], capture_output=True, text=True, check=False)
    assert left.stdout == "", "a spinning process outlived the script"


@pytest.mark.mkdocs
def test_the_site_build_timer_times_one_cold_and_one_warm_build(tmp_path: Path) -> None:
    """A cold and a warm `make site`, in a build folder of the script's own, from one small pinned machine:
    the script is checked, not the build's time."""
    if shutil.which("hyperfine") is None:
        pytest.skip("hyperfine is not installed (make setup installs it)")
    shutil.copytree(PINNED_RESULTS / SMALL_MACHINE, tmp_path / "results" / SMALL_MACHINE)
    environment = {k: v for k, v in os.environ.items() if k != "CONNLAB_BUILD_DIR"}
    result = subprocess.run(
        ["bash", "scripts/bench/site_build_time.sh"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=900, check=False,
        env={**environment, "CONNLAB_RESULTS_DIR": str(tmp_path / "results"), "RUNS": "1"},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("Benchmark 1: make site") == 2, result.stdout  # cold, then warm


def test_every_bench_script_has_a_test() -> None:
    """A script added under scripts/bench/ must be run here too."""
    source = Path(__file__).read_text()
    for script in sorted((REPO_ROOT / "scripts" / "bench").iterdir()):
        assert f"scripts/bench/{script.name}" in source, script.name


def test_the_browser_benchmarks_serve_a_site_and_clock_its_charts(tmp_path: Path) -> None:
    """scripts/bench/served_site.py, which the page-weight and many-machines benchmarks share: a folder served
    over HTTP as `make serve` serves it, and the page's clock of its first chart drawn or of all of them."""
    from bench.served_site import charts_drawn_clock, serving

    (tmp_path / "index.html").write_text("<p>a page</p>")
    with serving(tmp_path) as root, urllib.request.urlopen(root) as page:
        assert page.read() == b"<p>a page</p>"
    for which in ("some", "every"):
        clock, read = charts_drawn_clock(which, "__drawnAt")
        assert f".{which}(drawn)) return;" in clock and "window.__drawnAt = performance.now()" in clock
        assert read == "() => window.__drawnAt"


@pytest.mark.browser
def test_the_page_weight_benchmark_weighs_an_article(built_site: Path) -> None:
    """One article of the site built from the pinned results, one load at full speed and one slowed down
    (--tiny): a row with its HTML, the requests and bytes of the load, raw and gzipped, and the seconds to
    its first chart at each speed (no figure is judged here: they are for the reader)."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not installed")
    result = subprocess.run(
        [sys.executable, "scripts/bench/page_weight.py", "--tiny", "--site", str(built_site)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    header, row = result.stdout.splitlines()[-2:]
    assert header.split()[:3] == ["article", "html", "reqs"], result.stdout
    fields = row.replace("!", "").split()  # "!": over issue 54's limits
    assert fields[0].startswith("articles/"), row
    assert fields[2] == fields[5] == fields[7] == "KB" and fields[9] == fields[11] == "s", row
    assert int(fields[3]) > 1 and all(float(fields[i]) > 0 for i in (1, 4, 6, 8, 10)), row


@pytest.mark.mkdocs
@pytest.mark.browser
def test_the_many_machines_benchmark_reports_every_figure() -> None:
    """The source machine and its copies alone, in a temporary copy: the script runs end to end and prints one
    row with the cold, no-op and one-machine-added builds, the cost per machine, the heaviest page, the time
    its charts took to draw and the host check before and after (no timing is judged here: the figures are
    for the reader)."""
    result = subprocess.run(
        [sys.executable, "scripts/bench/many_machines.py", "--tiny"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    first = next(index for index, line in enumerate(lines) if "heaviest page" in line)
    header, row = lines[first : first + 2]
    assert header.startswith("machines")
    fields = row.split()
    assert int(fields[0]) == 3  # the source machine, its copy, and the copy added
    # Cold, no-op, one added, per machine, the heaviest page's charts drawn in headless Chromium, and the
    # host check's two timings around them.
    assert [field.rstrip(";") for field in fields].count("s") == 6 and "MB" in fields
    assert any(field.endswith("index.html,") for field in fields)
    before, arrow, after = fields[-4:-1]
    assert arrow == "→" and float(before) > 0 and float(after) > 0
    # Then each build by stage: a cold build runs all three stages, and each reported its time.
    stages_header, stages_row = lines[-2:]
    assert stages_header.split()[:3] == ["machines", "cold", "aggregate"], result.stdout
    cold = stages_row.split()[1:7]
    assert cold[1::2] == ["s", "s", "s"] and all(float(seconds) > 0 for seconds in cold[::2]), result.stdout


def test_each_stage_of_a_build_reports_its_time() -> None:
    """The lines the benchmark reads a build's stages from (connlab/cli.py), and a stage that did not run."""
    bench = many_machines_module()
    printed = (
        ".venv/bin/connlab build aggregate render site\nresults/ is valid\n"
        "aggregated into /repo/build/data in 58.4 s\nrendered 1008 changed page(s) in 23.3 s\n"
        "site built (clean) in 51.9 s\n"
    )
    assert bench.stage_seconds(printed) == {"aggregate": 58.4, "render": 23.3, "site": 51.9}
    row = bench.stages_row({"machines": 17, "cold_aggregate_s": 5.0, "added_site_s": 0.3})
    assert row.split() == ["17", "5.0", "s", "–", "–", "–", "–", "0.3", "s"]
    assert len(row) == len(bench.STAGES_HEADER)


def many_machines_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "many_machines", REPO_ROOT / "scripts" / "bench" / "many_machines.py"
    )
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_the_many_machines_benchmark_prints_what_each_machine_added() -> None:
    """Cold ÷ machines falls while a fixed cost spreads; the marginal cost between sizes is what stays flat
    when the cost per machine is constant (scripts/bench/many_machines.py prints both)."""
    bench = many_machines_module()
    small, medium, large = (
        {"machines": 17, "cold_s": 17.8},
        {"machines": 107, "cold_s": 36.1},
        {"machines": 1007, "cold_s": 226.7},
    )
    assert bench.marginal_cost(None, small) == "–"
    assert bench.marginal_cost(small, medium) == "0.20 s"
    assert bench.marginal_cost(medium, large) == "0.21 s"
    assert bench.marginal_cost(medium, medium) == "–"


def test_a_machine_pages_weight_counts_every_file_charts_js_fetches_for_it(built_site: Path) -> None:
    """The page weight the benchmark prints holds what charts.js fetches for a machine's page: vega and
    vega-embed (not vega-lite: every chart is compiled), the compiled set's variant and its expressions."""
    page = built_site / "machines" / "amd-epyc-2c-24g" / "index.html"
    fetched = many_machines_module().lazy_libraries(built_site, page.read_text(encoding="utf-8"))
    names = sorted(path.name.split(".", 1)[1] if len(path.name) > 64 else path.name for path in fetched)
    assert names == ["expressions.js", "vega-embed.min.js", "vega.min.js", "wide-light.json"]
    assert all(path.is_file() for path in fetched)


@pytest.mark.process  # git lists the checkout's files
def test_the_many_machines_benchmark_copies_the_checkout_it_is_given(tmp_path: Path) -> None:
    """--compare-with: another checkout's files (tracked, and untracked but not ignored) are what its copy
    holds, with this checkout's virtualenv and node_modules; its ignored files stay out."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "Makefile").write_text("site:\n")
    (other / "untracked.txt").write_text("kept")
    (other / "ignored.log").write_text("left out")
    (other / ".gitignore").write_text("*.log\n")
    subprocess.run(["git", "init", "-q"], cwd=other, check=True)
    subprocess.run(["git", "add", "Makefile", ".gitignore"], cwd=other, check=True)
    copy = tmp_path / "copy"
    copy.mkdir()
    many_machines_module().copy_repository(copy, other)
    assert sorted(path.name for path in copy.iterdir()) == [
        ".gitignore", ".venv", "Makefile", "node_modules", "untracked.txt"
    ]  # fmt: skip
    assert (copy / ".venv").resolve() == (REPO_ROOT / ".venv").resolve()
