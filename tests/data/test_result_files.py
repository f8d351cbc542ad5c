"""Where the measured rows are (connlab.data.result_files): every machine's CSVs per experiment with their
status, published folders and anything not a regular file left out, and a rewritten file's status new."""

from __future__ import annotations

import os
from pathlib import Path

from connlab.data.result_files import machine_paths, result_files_by_experiment


def _write(path: Path, text: str = "machine\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_each_experiments_files_per_machine_without_published_folders_or_links(tmp_path: Path) -> None:
    results = tmp_path / "results"
    first = _write(results / "beta" / "clients-sweep" / "full-1.csv")
    second = _write(results / "alpha" / "clients-sweep" / "full-2.csv")
    third = _write(results / "alpha" / "clients-sweep" / "full-1.csv")
    _write(results / "alpha" / "connect-cost" / "notes.txt")
    _write(results / "published-ref" / "clients-sweep" / "full-1.csv")
    os.mkfifo(results / "alpha" / "clients-sweep" / "full-3.csv")
    (results / "delta").symlink_to(results / "alpha", target_is_directory=True)
    listed = result_files_by_experiment(results)
    assert list(listed) == ["clients-sweep"]
    assert {machine: [path for path, _ in files] for machine, files in listed["clients-sweep"].items()} == {
        "alpha": [str(third), str(second)],
        "beta": [str(first)],
    }
    assert machine_paths(listed["clients-sweep"], {"beta", "alpha"}) == [third, second, first]
    assert machine_paths(listed["clients-sweep"], {"beta"}) == [first]
    assert result_files_by_experiment(tmp_path / "none") == {}


def test_a_rewritten_file_has_a_new_status(tmp_path: Path) -> None:
    path = _write(tmp_path / "results" / "alpha" / "clients-sweep" / "full-1.csv")
    before = result_files_by_experiment(tmp_path / "results")["clients-sweep"]["alpha"]
    _write(path, "machine\nalpha\n")
    after = result_files_by_experiment(tmp_path / "results")["clients-sweep"]["alpha"]
    assert [name for name, _ in before] == [name for name, _ in after]
    assert before[0][1] != after[0][1]
