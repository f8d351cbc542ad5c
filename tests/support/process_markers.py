"""Markers that cannot lie: a test that starts a process must say so with its marker.

The tiers select tests by marker (`make check` runs only the tests that start no process), so a marker left
off would put a PostgreSQL cluster or a browser into the fast tier, and it would go unnoticed until that tier
grew slow. Python's audit hooks see every process this interpreter starts (subprocess, fork, exec, spawn);
the project's site stage raises its own event when it runs MkDocs in-process. Each start is classified, and a
test whose markers do not cover what it started fails with one line naming the command.

Markers, from heaviest to lightest:
    e2e      starts PostgreSQL or a pooler (directly, or through `connlab run`)
    browser  drives Chromium
    mkdocs   builds a site with MkDocs (in-process or not)
    process  starts any other process (the connlab command line, node, make, a fork)
A heavier marker covers the lighter `process`; `soak` names a test allowed to run past a minute, and `slow`
one that starts nothing but works for seconds, which `make check` leaves to `make test`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from pathlib import PurePath
from typing import Any

import pytest

# The audit event the site stage raises when it runs MkDocs in this interpreter (no process to see).
from connlab.contract.poolers.registry import CONFIGS
from connlab.site.publish.build import MKDOCS_AUDIT_EVENT as MKDOCS_EVENT

PROCESS_MARKERS = ("e2e", "browser", "mkdocs", "process")
MARKER_HELP = {
    "e2e": "starts a real PostgreSQL or a pooler (a throwaway cluster)",
    "browser": "drives Chromium against a built site",
    "mkdocs": "builds a site with MkDocs",
    "process": "starts a process other than PostgreSQL, a pooler, Chromium or MkDocs",
    "soak": "may run longer than a minute (named here so that the rule has its exceptions in one place)",
    "slow": "does seconds of work of its own (a whole aggregation, a sweep over every cell): `make test` "
    "runs it, `make check` leaves it out",
}

# Programs whose start means a server, a pooler (each pooler folder's declared binary) or a load against one.
SERVER_PROGRAMS = {"postgres", "pg_ctl", "initdb", "pgbench"} | {config.binary for config in CONFIGS.values()}
# connlab subcommands that start a throwaway cluster, and those that build the site with MkDocs.
CONNLAB_RUNS = {"run", "run-all", "contribute"}
CONNLAB_SITE = {"site", "build"}
VERSION_FLAGS = {"--version", "-V"}
# The one process a test may start unmarked: rendering a chart compiles the chart kinds with node, once per
# build folder (connlab.site.charts.compiled, kept in its cache). Which test of a worker renders first is a
# matter of order, so no marker could name it; it is a step of rendering, seconds once per worker.
CHART_COMPILERS = {"compile_vega.mjs", "compile_expressions.mjs"}


def required_marker(argv: Sequence[str]) -> str | None:
    """The lightest marker that covers starting this command line; None for the chart compiler."""
    words = [word for arg in argv for word in str(arg).split()]
    names = [PurePath(word).name for word in words]
    if names[:1] == ["node"] and CHART_COMPILERS & set(names):
        return None
    if any(name in SERVER_PROGRAMS for name in names) and not VERSION_FLAGS & set(words):
        return "e2e"
    if "connlab" in names or "connlab.cli" in words:
        command = set(words)
        if command & CONNLAB_RUNS:
            return "e2e"
        if command & CONNLAB_SITE:
            return "mkdocs"
    if any("chrom" in name for name in names) or any("playwright" in word for word in words):
        return "browser"
    if "mkdocs" in names:
        return "mkdocs"
    return "process"


def covers(markers: set[str], needed: str | None) -> bool:
    return (
        needed is None or needed in markers or (needed == "process" and bool(markers & set(PROCESS_MARKERS)))
    )


class ProcessWatch:
    """The test now running and what it started that its markers do not cover."""

    def __init__(self) -> None:
        self.markers: set[str] | None = None  # None: outside a test (collection, session teardown)
        self.unmarked: list[str] = []

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if self.markers is None:
            return
        if event == "subprocess.Popen":
            argv = args[1] if isinstance(args[1], (list, tuple)) else [args[1]]
            needed, what = required_marker([str(a) for a in argv]), " ".join(str(a) for a in argv)
        elif event in ("os.exec", "os.posix_spawn", "os.spawn"):
            needed, what = required_marker([str(a) for a in args[1]]), " ".join(str(a) for a in args[1])
        elif event == "os.fork":
            needed, what = "process", "a fork of the test's interpreter"
        elif event == MKDOCS_EVENT:
            needed, what = "mkdocs", f"an in-process MkDocs build of {args[0]}"
        else:
            return
        if not covers(self.markers, needed):
            self.unmarked.append(f"started {what[:160]} without the {needed!r} marker")

    def start(self, item: pytest.Item) -> None:
        self.markers = {mark.name for mark in item.iter_markers()}
        self.unmarked = []

    def stop(self) -> None:
        self.markers = None


WATCH = ProcessWatch()
# Fixtures that start processes for the tests that use them: such a test carries the fixture's marker
# whether or not its own module says so (the fixture's process is then started in that test's setup).
FIXTURE_MARKERS = {"browser": "browser", "built_site": "mkdocs", "docs_from_fixtures": "process"}


def pytest_configure(config: pytest.Config) -> None:
    for name, meaning in MARKER_HELP.items():
        config.addinivalue_line("markers", f"{name}: {meaning}")
    # An audit hook cannot be removed: it stays for the interpreter's life and watches only while a test runs.
    sys.addaudithook(WATCH.audit)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for fixture, marker in FIXTURE_MARKERS.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(marker)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    WATCH.start(item)
    try:
        yield
    finally:
        WATCH.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if call.when == "teardown" and WATCH.unmarked:
        report.outcome = "failed"
        report.longrepr = "unmarked process start: " + "; ".join(dict.fromkeys(WATCH.unmarked))
