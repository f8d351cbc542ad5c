"""The pooler-memory sampler: the smaps_rollup parser on a real rollup (golden), the tree sum, and the
sampler's peaks over real processes (this test's own and a child it starts; no server needed)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from connlab.lab.pooler_memory import TreeMemory, parse_rollup, snapshot
from connlab.probes.pooler_memory.sampler import POOLER_MEMORY_COLUMNS, PoolerMemorySampler

KIB = 1024


def test_parse_rollup_golden(golden_dir: Path) -> None:
    text = (golden_dir.parent / "pooler_memory" / "smaps_rollup.txt").read_text()
    assert parse_rollup(text) == (1744 * KIB, 364 * KIB)


def test_parse_rollup_without_the_fields() -> None:
    assert parse_rollup("") == (0, 0)


def test_snapshot_sums_the_tree_and_skips_processes_gone(golden_dir: Path) -> None:
    text = (golden_dir.parent / "pooler_memory" / "smaps_rollup.txt").read_text()
    alive, gone = psutil.Process(), psutil.Process()
    readings = iter([text, None])
    reading = snapshot([alive, gone], read=lambda pid: next(readings))
    assert reading == TreeMemory(1744 * KIB, 364 * KIB, 1)


@pytest.mark.process
def test_sampler_peaks_over_a_growing_tree() -> None:
    """A child that fills 64 MiB after a moment: the peak must see it, and count two processes."""
    grow = "import time; time.sleep(0.6); block = bytes(range(256)) * (1 << 18); time.sleep(1.5)"
    child = subprocess.Popen([sys.executable, "-c", grow])
    me = psutil.Process()

    def tree() -> list[psutil.Process]:
        # This process and the child it started: not the helpers an earlier test may have left running
        # beside it (multiprocessing's resource tracker lives as long as this process).
        return [me, *(process for process in me.children() if process.pid == child.pid)]

    try:
        with PoolerMemorySampler(tree, interval_s=0.1) as sampler:
            first = snapshot(tree())
            time.sleep(1.4)
    finally:
        child.kill()
        child.wait()
    figures = sampler.figures()
    assert set(figures) == set(POOLER_MEMORY_COLUMNS)
    assert figures["pooler_processes_peak"] == 2
    assert figures["pooler_rss_peak_bytes"] >= first.rss_bytes + (60 << 20)
    assert first.pss_bytes <= figures["pooler_pss_peak_bytes"] <= figures["pooler_rss_peak_bytes"]
    assert figures["pooler_memory_samples"] >= 5
    times = [seconds for seconds, _ in sampler.samples]
    assert times == sorted(times)


def test_sampler_without_processes_has_no_figures() -> None:
    with PoolerMemorySampler(lambda: [], interval_s=0.05) as sampler:
        time.sleep(0.12)
    assert sampler.figures() == {
        "pooler_rss_peak_bytes": None, "pooler_pss_peak_bytes": None, "pooler_processes_peak": None,
        "pooler_memory_samples": 0,
    }  # fmt: skip


def test_series_takes_the_first_reading_at_each_step() -> None:
    sampler = PoolerMemorySampler(lambda: [])
    readings = [(0.0, 1), (4.9, 2), (10.2, 3), (10.7, 4), (19.9, 5), (31.0, 6)]
    sampler.samples = [(seconds, TreeMemory(kib * 1024, 0, 1)) for seconds, kib in readings]
    assert sampler.series_kib(10) == [1, 3, 6]  # 19.9 s is before the 20 s mark


def test_probe_reports_the_window_peaks_the_series_and_the_start_reading() -> None:
    """The pooler_memory probe over a fake pooler whose tree is this test process: every column of its
    declaration, the start reading the adapter took, and a series that validation accepts."""
    import re
    from types import SimpleNamespace

    from connlab.contract.columns import WINDOW_COLUMNS
    from connlab.contract.probes.registry import PROBES
    from connlab.lab.samplers.base import WindowContext
    from connlab.lab.samplers.registry import SAMPLERS

    me = psutil.Process()
    pooler = SimpleNamespace(processes=lambda: [me], start_memory=TreeMemory(1 << 20, 1 << 19, 3))
    context = WindowContext("", 10, 1, None, pooler)  # type: ignore[arg-type]
    with SAMPLERS["pooler_memory"](context) as probe:
        time.sleep(0.6)
    figures = probe.figures()
    assert set(figures) == set(PROBES["pooler_memory"].column_names)
    assert (figures["pooler_start_rss_bytes"], figures["pooler_start_processes"]) == (1 << 20, 3)
    assert figures["pooler_rss_peak_bytes"] > 0 and figures["pooler_processes_peak"] == 1
    pattern = next(column.pattern for column in WINDOW_COLUMNS if column.name == "pooler_rss_series_kib")
    assert pattern and re.fullmatch(pattern, str(figures["pooler_rss_series_kib"]))
    declared = {column.name: column for column in WINDOW_COLUMNS}
    assert all(
        declared[name].minimum == 0
        for name in PROBES["pooler_memory"].column_names
        if name != "pooler_rss_series_kib"
    )
