"""`connlab validate` with a cache per machine folder (connlab.data.validate_cache): the same problems as
validate_results, an unchanged folder not checked again, an edited one checked again."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from connlab.data import validate, validate_cache
from connlab.data.validate import validate_results
from connlab.data.validate_cache import validate_results_cached

if TYPE_CHECKING:
    from support.rows import RunWriter


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders actually checked, in order."""
    folders: list[str] = []
    check = validate.validate_machine_folder

    def counting(folder: Path):  # type: ignore[no-untyped-def]
        folders.append(folder.name)
        return check(folder)

    monkeypatch.setattr(validate, "validate_machine_folder", counting)
    return folders


def test_the_cache_reports_what_validate_reports(
    tmp_path: Path, write_run: RunWriter, checked: list[str]
) -> None:
    results, cache = tmp_path / "results", tmp_path / "cache"
    write_run(results, "good-box", [{"tps": 100.0}], profile="full")
    bad = write_run(results, "bad-box", [{"tps": 100.0}], profile="full")
    bad.write_text(bad.read_text().replace("good-box", "x").replace("bad-box", "other-box"))
    (results / "stray.txt").write_text("not a machine")
    expected = validate_results(results)
    assert any("bad-box" in problem for problem in expected) and any("stray" in p for p in expected)
    checked.clear()
    assert validate_results_cached(results, cache) == expected
    assert sorted(checked) == ["bad-box", "good-box"]
    assert validate_results_cached(results, cache) == expected
    assert sorted(checked) == ["bad-box", "good-box"], "unchanged folders were checked again"


def test_an_edited_folder_is_checked_again(tmp_path: Path, write_run: RunWriter, checked: list[str]) -> None:
    results, cache = tmp_path / "results", tmp_path / "cache"
    path = write_run(results, "a-box", [{"tps": 100.0}], profile="full")
    assert validate_results_cached(results, cache) == []
    path.write_text(path.read_text().replace("a-box", "b-box", 1))
    problems = validate_results_cached(results, cache)
    assert checked == ["a-box", "a-box"]
    assert problems == validate_results(results) and problems


def test_an_unchanged_folder_is_not_read_again(
    tmp_path: Path, write_run: RunWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files' status answers for their contents; an edit is still seen where the file keeps its size and
    its modification time is put back (its change time moves)."""
    results, cache = tmp_path / "results", tmp_path / "cache"
    path = write_run(results, "a-box", [{"tps": 100.0}], profile="full")
    hashed: list[str] = []
    hash_folder = validate_cache.folder_key

    def counting(folder: Path, code: str) -> str:
        hashed.append(folder.name)
        return hash_folder(folder, code)

    monkeypatch.setattr(validate_cache, "folder_key", counting)
    assert validate_results_cached(results, cache) == []
    assert validate_results_cached(results, cache) == []
    assert hashed == ["a-box"], "an unchanged folder's files were read again"
    before = path.stat()
    time.sleep(0.01)  # a change time that differs even on a coarse clock
    path.write_text(path.read_text().replace("a-box", "b-box", 1))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    assert validate_results_cached(results, cache), "the edited file was taken for the one validated"
    assert hashed == ["a-box", "a-box"]


def test_many_new_folders_are_checked_in_workers_with_the_same_answer(
    tmp_path: Path, write_run: RunWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    pools: list[int] = []

    class CountedPool(validate_cache.WorkerPool):
        def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            pools.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(validate_cache, "WorkerPool", CountedPool)
    results, cache = tmp_path / "results", tmp_path / "cache"
    for index in range(validate_cache.MIN_FOLDERS_FOR_WORKERS + 1):
        write_run(results, f"box-{index:02d}", [{"tps": 100.0}], profile="full")
    bad = write_run(results, "bad-box", [{"tps": 100.0}], profile="full")
    bad.write_text(bad.read_text().replace("bad-box", "other-box"))
    expected = validate_results(results)
    assert any("bad-box" in problem for problem in expected)
    assert validate_results_cached(results, cache) == expected
    assert pools == [1] or (os.cpu_count() or 1) == 1
    assert len(list(cache.glob("*.json"))) == validate_cache.MIN_FOLDERS_FOR_WORKERS + 2
    assert validate_results_cached(results, cache) == expected
    assert len(pools) <= 1, "folders in the cache were checked again"


def test_the_status_signature_lists_what_rglob_lists_in_its_order(tmp_path: Path) -> None:
    """The walk with os.scandir gives the signature pathlib's sorted rglob and lstat gave (so the kept keys
    stay valid), where a name sorts differently as text and as a path, and a link to a folder is not
    followed."""
    folder = tmp_path / "machine"
    for name in ("a-c", "a/b", "a.b/c"):
        (folder / name).mkdir(parents=True)
    (folder / "a" / "b" / "run.csv").write_text("x\n")
    (folder / "a-c" / "run.csv").write_text("y\n")
    (folder / "link").symlink_to(folder / "a", target_is_directory=True)

    def by_rglob(path: Path) -> str:
        parts = [str(path.resolve())]
        for item in sorted(path.rglob("*")):
            status = item.lstat()
            parts.append(
                f"{item.relative_to(path)}\0{status.st_mode}\0{status.st_size}\0{status.st_mtime_ns}"
                f"\0{status.st_ctime_ns}\0{status.st_ino}"
            )
        return validate_cache.digest(*parts)

    assert validate_cache.stat_signature(folder) == by_rglob(folder)
    before = validate_cache.stat_signature(folder)
    (folder / "a-c" / "run.csv").write_text("z\n")
    assert validate_cache.stat_signature(folder) != before
