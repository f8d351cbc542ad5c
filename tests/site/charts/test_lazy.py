"""connlab.site.charts.lazy: a module imported on its first use, from any number of threads at once."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from types import ModuleType

import pytest

from connlab.site.charts.lazy import LazyModule, lazy_import


@pytest.mark.process
def test_many_threads_asking_at_once_all_get_the_whole_module() -> None:
    """Altair imported for the first time by eight threads together (a fresh interpreter, so that nothing
    imported it before): each finds Chart, which Altair defines late in its import."""
    script = textwrap.dedent(
        """
        import sys, threading
        from connlab.site.charts.lazy import lazy_import
        assert "altair" not in sys.modules
        alt = lazy_import("altair")
        start, found = threading.Barrier(8), []
        def ask():
            start.wait()
            found.append(alt.Chart.__name__)
        threads = [threading.Thread(target=ask) for _ in range(8)]
        [thread.start() for thread in threads]
        [thread.join() for thread in threads]
        print(",".join(found))
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().split(",") == ["Chart"] * 8


def test_a_module_imported_already_is_itself_and_a_missing_one_is_named() -> None:
    assert lazy_import("json") is sys.modules["json"]
    assert isinstance(lazy_import(["csv", "__no_such_submodule__"][0]), ModuleType)
    stand_in = LazyModule("colorsys")  # not imported by the test run: the stand-in imports it when asked
    assert stand_in.rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)
    with pytest.raises(ModuleNotFoundError, match="connlab_no_such_module"):
        lazy_import("connlab_no_such_module")
