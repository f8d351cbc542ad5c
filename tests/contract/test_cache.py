"""connlab.contract.cache: results kept under build/cache, written whole."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from connlab.contract.cache import (
    canonical_bytes,
    read_json_written,
    read_kept_json,
    remember_written,
    write_atomically,
)
from connlab.contract.names import ANSWERS_SUBDIR, CLAIMS_SUBDIR
from connlab.data.aggregate import aggregate_all
from support.paths import PINNED_RESULTS


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


def test_a_json_file_this_process_wrote_is_read_back_as_written_while_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "claims.json"
    value = {"claims": [{"id": "a", "value": 1.5}]}
    path.write_bytes(canonical_bytes(value))
    remember_written(path, value)
    assert read_json_written(path) is value  # not parsed again
    path.write_bytes(canonical_bytes({"claims": []}) + b" ")  # another writer: the file says otherwise now
    assert read_json_written(path) == {"claims": []}
    assert read_json_written(tmp_path / "missing.json") is None


@pytest.mark.slow
def test_what_aggregation_hands_on_is_what_its_files_say(tmp_path: Path) -> None:
    """The claims and answers aggregation keeps in memory for the render in the same process are the values
    its files hold, once it is done: nothing it did after writing them changed them, and every value
    survives the JSON round trip (no tuple, no NaN)."""
    aggregate_all(results_dir=PINNED_RESULTS, out_dir=tmp_path / "data")
    files = sorted((tmp_path / "data" / CLAIMS_SUBDIR).glob("*.json"))
    files += sorted((tmp_path / "data" / ANSWERS_SUBDIR).glob("*.json"))
    assert len(files) >= 9
    for path in files:
        kept = read_json_written(path)
        assert kept is read_json_written(path), f"{path.name} was not handed on"
        assert kept == json.loads(path.read_bytes()), path.name
