"""Results kept under build/cache, each named by the SHA-256 of the inputs that made it.

A result is a pure function of its inputs (data, code, library versions), so a file named by their hash is
either the right answer or absent: there is nothing to invalidate. The stages use it for what is costly to
recompute per machine (USL fits, chart specs, SVG fallbacks), so adding one machine recomputes one machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

import orjson


def digest(*parts: str) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(part.encode())
        hasher.update(b"\0")  # ("ab", "c") and ("a", "bc") must differ
    return hasher.hexdigest()


def canonical_json(value: object) -> str:
    """One text per value whatever the order its dicts were built in: the form that is hashed and stored."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def canonical_bytes(value: object) -> bytes:
    """canonical_json's promise (one form per value, whatever the order its dicts were built in) from orjson,
    which is faster than the json module on large values (a thousand machines' verdicts): for keys and files
    that only this form is compared with, not for the text canonical_json makes (floats and spacing are
    written differently)."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS, default=str)


def source_digest(*files: Path) -> str:
    """The code that computes a result is one of its inputs: a change to it must miss the cache."""
    return digest(*(path.read_text(encoding="utf-8") for path in files))


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def read_json(path: Path) -> object | None:
    """A JSON file's value; None where the file is missing. By orjson (loads_fast): rendering reads a few
    facts files per machine page, a tenth of its time with json."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return loads_fast(data)


# JSON files this process wrote, by path, each with its value and the file's status once written. `connlab
# build` runs the stages in one process, and render read back the claims aggregation had just written (33 MB
# at a thousand machines, parsed again for nothing): while the file is as it was written, its value is
# handed on. Whoever reads a value treats it as read-only, as it would one parsed from the file.
_written: dict[Path, tuple[tuple[int, int], object]] = {}
_written_lock = threading.Lock()


def remember_written(path: Path, value: object) -> None:
    """The value of the JSON file just written at path (its text is the value's canonical_bytes)."""
    status = os.stat(path)
    with _written_lock:
        _written[path] = ((status.st_mtime_ns, status.st_size), value)


def read_json_written(path: Path) -> object | None:
    """read_json, but where this process wrote the file and it is unchanged since, the value it wrote."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    with _written_lock:
        kept = _written.get(path)
    if kept is not None and kept[0] == (status.st_mtime_ns, status.st_size):
        return kept[1]
    return read_json(path)


def read_kept_json(path: Path) -> object | None:
    """A result kept under build/cache: None where it is missing or is not JSON (not a file written whole by
    write_atomically, e.g. one left by another version), so that it is computed again."""
    text = read_text(path)
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def loads_fast(data: bytes) -> object:
    """json.loads, by orjson where it can (a third of the time on a thousand machines' claims); what orjson
    refuses and json takes (NaN, integers beyond 64 bits) is read by json."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)


def write_atomically(path: Path, text: str) -> None:
    # A build interrupted mid-write must not leave half a file that a later build takes for a result. The
    # partial file is the writer's own, process and thread: two threads of a render (the pages, and the
    # compiled charts beside them) may keep the same result at once.
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)
