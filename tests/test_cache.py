"""connlab.contract.cache: results kept under build/cache, written whole."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from connlab.contract.cache import read_kept_json, write_atomically


def test_threads_of_one_process_may_keep_the_same_result_at_once(tmp_path: Path) -> None:
    """A render keeps a chart kind's template from the page thread and from the thread that compiles the
    charts at once: each writer's partial file must be its own, or one's rename finds the file gone."""
    path = tmp_path / "kept" / "result.json"

    def keep(value: int) -> None:
        for _ in range(200):
            write_atomically(path, f'{{"value": {value}}}')

    with ThreadPoolExecutor(4) as pool:
        for done in [pool.submit(keep, value) for value in range(4)]:
            done.result()
    assert read_kept_json(path) in [{"value": value} for value in range(4)]
    assert [child.name for child in path.parent.iterdir()] == ["result.json"], "a partial file was left"
