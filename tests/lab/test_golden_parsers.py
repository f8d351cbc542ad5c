"""Every parser of system text against real captured text (tests/golden/<parser>/, see its README.md).

Each folder's expected.json maps a file name to what the parser must return for it; the parsers take
text, so none of this needs root, a cluster or the machine the text came from.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from connlab.lab.counters import count_time_wait, parse_pressure_total_us, parse_proc_stat
from connlab.lab.cpu_budget import parse_keyed_counters
from connlab.lab.machine import parse_cpu_model, parse_hypervisor_flag, parse_os_name
from connlab.poolers.pgbouncer.adapter import pool_waits
from connlab.probes.memory.sampler import parse_process_memory
from connlab.probes.wait_events.probe import decode_wait_events, encode_wait_events
from support.paths import GOLDEN_DIR


def _show_pools(path: Path) -> dict[str, list[float]]:
    rows = list(csv.reader(path.open()))
    return {database: list(pool_waits(rows[0], rows[1:], database)) for database in ("bench", "bench_pool1")}


def _memory(path: Path) -> dict[str, int]:
    memory = parse_process_memory(path.read_text(), (path.parent / "status.txt").read_text())
    return {"rss": memory.rss_bytes, "pss": memory.pss_bytes, "anon_rss": memory.anon_rss_bytes}


def _cpuinfo(path: Path) -> dict[str, Any]:
    text = path.read_text()
    return {"model": parse_cpu_model(text), "hypervisor": parse_hypervisor_flag(text)}


def _wait_events(path: Path) -> list[dict[str, int]]:
    cells = path.read_text().splitlines()
    decoded = [decode_wait_events(cell) for cell in cells]
    assert [encode_wait_events(counts) for counts in decoded] == cells  # the encoding reads back
    return decoded


PARSERS: dict[str, tuple[str, Callable[[Path], Any]]] = {
    "proc_stat": ("*.txt", lambda path: list(parse_proc_stat(path.read_text()))),
    "pressure": ("*.txt", lambda path: parse_pressure_total_us(path.read_text())),
    "net_tcp": ("*.txt", lambda path: count_time_wait(path.read_text())),
    "smaps_rollup": ("smaps_rollup.txt", _memory),
    "cgroup_v1": ("*.stat", lambda path: parse_keyed_counters(path.read_text())),
    "cgroup_v2": ("*.stat", lambda path: parse_keyed_counters(path.read_text())),
    "cpuinfo": ("*.txt", _cpuinfo),
    "os_release": ("*.txt", lambda path: parse_os_name(path.read_text())),
    "show_pools": ("*.csv", _show_pools),
    "wait_events": ("*.txt", _wait_events),
}
CASES = [
    pytest.param(parser, path, id=f"{parser}/{path.name}")
    for parser, (pattern, _) in PARSERS.items()
    for path in sorted((GOLDEN_DIR / parser).glob(pattern))
]


@pytest.mark.parametrize(("parser", "path"), CASES)
def test_parser_reads_the_captured_text(parser: str, path: Path) -> None:
    expected = json.loads((GOLDEN_DIR / parser / "expected.json").read_text())
    assert PARSERS[parser][1](path) == expected[path.name]


def test_every_golden_folder_has_a_parser_and_cases() -> None:
    folders = {path.name for path in GOLDEN_DIR.iterdir() if path.is_dir()}
    # Read by their own tests: pgbench's reports (test_pgbench.py), the configs each pooler adapter writes
    # (test_pooler_adapters.py) and the pooler memory sampler's rollups (test_pooler_memory.py).
    assert folders == {*PARSERS, "pgbench", "poolers", "pooler_memory"}
    for parser in PARSERS:
        expected = json.loads((GOLDEN_DIR / parser / "expected.json").read_text())
        assert sorted(expected) == sorted(p.name for p in (GOLDEN_DIR / parser).glob(PARSERS[parser][0]))
