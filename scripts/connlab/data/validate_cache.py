"""`connlab validate` with each machine folder's problems kept under build/cache by the hash of its files and
of the validating code: a build after one machine was added validates that machine's folder alone.

A folder's key is the hash of its files' contents, so an edited file or a new symbolic link is validated
again. Reading every file to hash it grows with the machines, so each folder's key is also
kept beside the files' status (size, times, inode): a folder whose files all have the status they had is not
read again. Editing a file moves its change time (ctime) even where its size and modification time are put
back.

Validation also reads the experiments' specs (the profiles each defines), so they are part of the code's
hash: a profile added or removed validates every folder again.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from collections.abc import Callable
from pathlib import Path

from connlab.contract import columns, machine_schema, yaml_models
from connlab.contract.cache import digest, read_json, source_digest, write_atomically
from connlab.data import pasted_passes, row_shapes, validate, window_rules
from connlab.interrupts import WorkerPool
from connlab.paths import CACHE_DIR, EXPERIMENT_FILE_NAME, EXPERIMENTS_DIR, RESULTS_DIR

VALIDATE_CACHE_DIR = CACHE_DIR / "validate"
VALIDATING_CODE = (validate, row_shapes, window_rules, pasted_passes, columns, machine_schema, yaml_models)
# Imported by validation only once a run file is read (window_rules): named, not imported, here.
SPEC_CODE = "connlab.contract.experiment"


def validating_inputs() -> list[Path]:
    """The code that validates, and the experiments' specs it reads."""
    spec_code = importlib.util.find_spec(SPEC_CODE)
    assert spec_code is not None and spec_code.origin is not None, SPEC_CODE
    specs = sorted(EXPERIMENTS_DIR.glob(f"*/{EXPERIMENT_FILE_NAME}"))
    return [Path(str(module.__file__)) for module in VALIDATING_CODE] + [Path(spec_code.origin), *specs]


def folder_key(folder: Path, code: str, entries: list[validate.FolderEntry] | None = None) -> str:
    """The folder's name, and each file's path, kind (link, special or not) and content; entries:
    validate.folder_entries(folder), where the caller has them. Only a regular file is read (a named pipe's
    read would wait for a writer forever)."""
    parts = [code, folder.name]
    for entry in validate.folder_entries(folder) if entries is None else entries:
        data = validate.regular_file_bytes(entry.path) if entry.kind == "file" else None
        content = hashlib.sha256(data).hexdigest() if data is not None else ""
        parts.append(f"{entry.path.relative_to(folder)}\0{entry.kind}\0{content}")
    return digest(*parts)


def stat_signature(folder: Path) -> str:
    """Each file's path and status: what changes when a file is written, replaced, added or removed."""
    parts = [str(folder.resolve())]
    for names, status in sorted(_statuses(folder)):
        parts.append(
            f"{'/'.join(names)}\0{status.st_mode}\0{status.st_size}\0{status.st_mtime_ns}"
            f"\0{status.st_ctime_ns}\0{status.st_ino}"
        )
    return digest(*parts)


def _statuses(
    folder: str | Path, names: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], os.stat_result]]:
    """Every file and folder under folder (not through symbolic links), as the names of its path below it,
    with its own status (lstat), in the order of Path.rglob sorted: a walk with os.scandir, which costs half
    what pathlib's rglob and lstat did over a thousand machines' folders."""
    found = []
    with os.scandir(folder) as entries:
        for entry in entries:
            below = (*names, entry.name)
            found.append((below, entry.stat(follow_symlinks=False)))
            if entry.is_dir(follow_symlinks=False):
                found += _statuses(entry.path, below)
    return found


def _status_index(folder: Path, code: str, cache_dir: Path) -> Path:
    """Where the folder's key is kept for its files' present status."""
    return cache_dir / "status" / f"{digest(code, stat_signature(folder))}.json"


def known_folder_key(folder: Path, code: str, cache_dir: Path) -> str:
    """folder_key, without reading the files where their status is the one it was computed for."""
    index = _status_index(folder, code, cache_dir)
    known = read_json(index)
    if isinstance(known, str):
        return known
    key = folder_key(folder, code)
    write_atomically(index, json.dumps(key))
    return key


# Fewer folders to check than this are checked in this process: starting workers would cost more.
MIN_FOLDERS_FOR_WORKERS = 16


def _keyed_and_checked(job: tuple[Path, str]) -> tuple[str, list[str]]:
    """A folder's key (its files read and hashed) and its problems, in a worker."""
    folder, code = job
    entries = validate.folder_entries(folder)  # one walk for both
    return folder_key(folder, code, entries), list(validate.validate_machine_folder(folder, entries))


def cached_folder_problems(
    cache_dir: Path = VALIDATE_CACHE_DIR, folders: list[Path] | None = None
) -> Callable[[Path], list[str]]:
    """validate_machine_folder, answered from the cache where the folder and the code are unchanged. With
    the folders about to be asked for, those missing from the cache are checked first, in worker processes
    across the cores when there are many (a cold build checks every row of every machine's files). A
    folder whose files have a status never seen is hashed by the worker that checks it: hashing every folder
    here first would leave the other cores idle meanwhile."""
    code = source_digest(*validating_inputs())
    checked: dict[Path, list[str]] = {}
    indexes = {folder: _status_index(folder, code, cache_dir) for folder in folders or []}
    keys = {folder: key for folder, index in indexes.items() if isinstance(key := read_json(index), str)}
    due = [folder for folder in indexes if folder not in keys]
    due += [
        folder for folder, key in keys.items() if not isinstance(read_json(cache_dir / f"{key}.json"), list)
    ]
    workers = min(os.cpu_count() or 1, len(due))
    if len(due) >= MIN_FOLDERS_FOR_WORKERS and workers > 1:
        with WorkerPool(workers) as pool:
            found = list(pool.map(_keyed_and_checked, [(folder, code) for folder in due], chunksize=8))
        for folder, (key, problems) in zip(due, found, strict=True):
            write_atomically(cache_dir / f"{key}.json", json.dumps(problems))
            write_atomically(indexes[folder], json.dumps(key))
            keys[folder] = key
            checked[folder] = problems

    def folder_problems(folder: Path) -> list[str]:
        if folder in checked:
            return checked[folder]
        key = keys.get(folder) or known_folder_key(folder, code, cache_dir)
        cached = read_json(cache_dir / f"{key}.json")
        if isinstance(cached, list):
            return [str(problem) for problem in cached]
        problems = list(validate.validate_machine_folder(folder))
        write_atomically(cache_dir / f"{key}.json", json.dumps(problems))
        return problems

    return folder_problems


def validate_results_cached(
    results_dir: Path = RESULTS_DIR, cache_dir: Path = VALIDATE_CACHE_DIR
) -> list[str]:
    """What validate_results reports, in the same order, from the cache where a folder is unchanged."""
    folders = (
        [entry for entry in sorted(results_dir.iterdir()) if entry.is_dir() and not entry.is_symlink()]
        if results_dir.exists()
        else []
    )
    return validate.validate_results(results_dir, cached_folder_problems(cache_dir, folders))
