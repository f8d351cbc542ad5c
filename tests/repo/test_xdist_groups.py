"""`make test` runs with `--dist loadgroup`: a module marked `xdist_group` runs on one worker, so its
module-scoped fixture (test_site_pages.py's visit of every page, minutes long) is built once, not once per
worker. pytest 9.2 with pytest-xdist 3.8 drops the grouping without a word; this catches such a pair."""

from __future__ import annotations

import pytest

GROUPED_MODULE = """
import os
import pytest

pytestmark = [pytest.mark.xdist_group("one-worker")]

@pytest.fixture(scope="module")
def expensive():
    with open(os.environ["SETUPS_FILE"], "a") as setups:
        setups.write(os.environ.get("PYTEST_XDIST_WORKER", "main") + "\\n")
    yield

@pytest.mark.parametrize("n", range(8))
def test_uses_it(expensive, n):
    assert n >= 0
"""

OTHER_MODULE = """
import pytest

@pytest.mark.parametrize("n", range(16))
def test_elsewhere(n):
    assert n >= 0
"""


@pytest.mark.process
def test_a_grouped_module_builds_its_fixture_once(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    setups = pytester.path / "setups.txt"
    monkeypatch.setenv("SETUPS_FILE", str(setups))
    pytester.makepyfile(test_grouped=GROUPED_MODULE, test_other=OTHER_MODULE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "3", "--dist", "loadgroup")
    result.assert_outcomes(passed=24)
    workers = setups.read_text().split()
    assert len(workers) == 1, f"the grouped module's fixture was built on {len(workers)} workers: {workers}"
