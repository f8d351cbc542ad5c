"""The process markers cannot lie: a test that starts a process without the marker for it fails."""

from __future__ import annotations

import pytest

from support.paths import TESTS_DIR
from support.process_markers import covers, required_marker


@pytest.mark.parametrize(
    ("argv", "marker"),
    [
        (["/usr/lib/postgresql/15/bin/pg_ctl", "start", "-D", "x"], "e2e"),
        (["runuser", "-u", "postgres", "--", "bash", "-c", "initdb -D /tmp/x"], "e2e"),
        (["taskset", "-c", "1", "pgbench", "-c", "4", "bench"], "e2e"),
        (["/usr/sbin/pgbouncer", "-d", "pgbouncer.ini"], "e2e"),
        (["/usr/bin/python3", "-m", "connlab.cli", "run", "clients-sweep", "--profile", "tiny"], "e2e"),
        ([".venv/bin/connlab", "run-all", "--profile", "quick"], "e2e"),
        (["/usr/lib/postgresql/15/bin/postgres", "--version"], "process"),
        (["/usr/bin/python3", "-m", "connlab.cli", "build", "aggregate", "render", "site"], "mkdocs"),
        ([".venv/bin/mkdocs", "build", "--strict"], "mkdocs"),
        (["/usr/bin/chromium", "--headless"], "browser"),
        (
            ["node", ".venv/lib/python3.11/site-packages/playwright/driver/package/cli.js", "run-driver"],
            "browser",
        ),
        (["/usr/bin/python3", "-m", "connlab.cli", "validate"], "process"),
        (["node", "scripts/connlab/site/charts/compile_vega.mjs"], None),
        (["node", "scripts/connlab/site/charts/compile_expressions.mjs", "a-set"], None),
        (["node", "-e", "console.log(1)"], "process"),
        (["bash", "-n"], "process"),
    ],
)
def test_each_start_asks_for_its_marker(argv: list[str], marker: str | None) -> None:
    assert required_marker(argv) == marker


def test_a_heavier_marker_covers_a_plain_process_but_not_another_kind() -> None:
    assert covers({"e2e"}, "process") and covers({"browser"}, "process") and covers({"process"}, "process")
    assert (
        not covers({"process"}, "e2e") and not covers({"mkdocs"}, "browser") and not covers(set(), "process")
    )


INNER_TESTS = """
import subprocess
import pytest

def test_starts_nothing():
    assert 1 + 1 == 2

def test_unmarked_start():
    subprocess.run(["true"], check=True)

@pytest.mark.process
def test_marked_start():
    subprocess.run(["true"], check=True)

@pytest.mark.process
def test_a_server_under_a_light_marker():
    subprocess.run(["bash", "-c", "exit 0; pg_ctl start"], check=True)

@pytest.mark.e2e
def test_a_server_under_its_marker():
    subprocess.run(["bash", "-c", "exit 0; pg_ctl start"], check=True)
"""


@pytest.mark.process
def test_an_unmarked_test_that_starts_a_process_fails(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a pytest of its own (a subprocess: the audit hook it installs must not join this one's)."""
    monkeypatch.setenv("PYTHONPATH", str(TESTS_DIR))
    pytester.makepyfile(test_inner=INNER_TESTS)
    result = pytester.runpytest_subprocess("-p", "support.process_markers", "-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(passed=5, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_unmarked_start*",
            "*started true without the 'process' marker*",
            "*ERROR at teardown of test_a_server_under_a_light_marker*",
            "*without the 'e2e' marker*",
        ]
    )
