"""Where the measured rows are: every machine's CSV files under results/, per experiment, each with the
status (size, times, inode) that tells whether it changed since the last build. Published folders are left
out (connlab.data.main_tables reads their figures), and so is anything that is not a regular file."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from connlab.contract.names import PUBLISHED_PREFIX
from connlab.paths import RESULTS_DIR


def is_regular_file(path: Path) -> bool:
    """A regular file in a real folder (results/<folder>/<file>, no link on the way): the only kind
    aggregation opens. A FIFO named like a results file would wait for a writer forever when opened
    (validation names such a path; aggregation leaves it out)."""
    try:
        return stat.S_ISREG(path.lstat().st_mode) and not path.parent.is_symlink()
    except OSError:
        return False


# Each experiment's result files, per machine in name order: (path, status) in path order.
ResultFiles = dict[str, dict[str, list[tuple[str, str]]]]


def result_files_by_experiment(results_dir: Path = RESULTS_DIR) -> ResultFiles:
    """Every measured machine's CSVs, per experiment and machine, each with its status (`status_text`), from
    one walk of results/: a glob per experiment walked a thousand machines' folders twenty times, and
    pathlib's glob and stat cost twice what os.scandir does. Paths stay text, and only the files read become
    Path objects (making one per file was a third of the walk at a thousand machines)."""
    by_experiment: ResultFiles = {}
    if not results_dir.is_dir():
        return by_experiment
    for machine in _folder_names(str(results_dir)):
        if machine.startswith(PUBLISHED_PREFIX):
            continue
        machine_folder = os.path.join(results_dir, machine)
        for experiment in _folder_names(machine_folder):
            with os.scandir(os.path.join(machine_folder, experiment)) as entries:
                csvs = [
                    entry
                    for entry in entries
                    if entry.name.endswith(".csv") and entry.is_file(follow_symlinks=False)
                ]
            if csvs:
                csvs.sort(key=_name)
                by_experiment.setdefault(experiment, {})[machine] = [
                    (entry.path, status_text(entry.name, entry.stat())) for entry in csvs
                ]
    return dict(sorted(by_experiment.items()))


def _folder_names(folder: str) -> list[str]:
    with os.scandir(folder) as entries:
        return sorted(entry.name for entry in entries if entry.is_dir(follow_symlinks=False))


def machine_paths(files: dict[str, list[tuple[str, str]]], machines: Iterable[str]) -> list[Path]:
    """The machines' result files (of one experiment), in path order."""
    return [Path(path) for machine in sorted(machines) for path, _ in files.get(machine, [])]


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


def status_text(name: str, status: os.stat_result) -> str:
    # A file's size, times and inode change whenever it is written or replaced; hashing the contents of every
    # machine's files on every build grew with the machine count.
    return f"{name}\0{status.st_size}\0{status.st_mtime_ns}\0{status.st_ctime_ns}\0{status.st_ino}"
