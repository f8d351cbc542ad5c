"""A CSV sorted by its first column, the machine, as runs of lines: one run per machine, which can be replaced
without reading the rest of the file as CSV (connlab.data.aggregate writes an added machine's rows so)."""

from __future__ import annotations

from dataclasses import dataclass


def one_line_each(rows: bytes) -> bool:
    """Whether every row is one line: a value with a line break is quoted, so its first line holds an odd
    number of quotes (a quote inside a value is written twice)."""
    return b'"' not in rows or not any(line.count(b'"') % 2 for line in rows.split(b"\n"))


@dataclass(frozen=True)
class Splice:
    """A file's lines from `start` on with some machines' runs replaced, as pieces to write one after the
    other: slices of the file's bytes (memoryviews, not copies: the largest file is 15 MB at a thousand
    machines, and every copy or scan of it holds Python's lock while the pages are rendered on another
    thread) and the new runs."""

    pieces: list[memoryview | bytes]
    lines_removed: int
    lines_added: int
    changed: bool  # whether any new run differs from the one it replaces


def splice_runs(data: bytes, start: int, rows: bytes, machines: list[bytes]) -> Splice:
    """data's lines from offset `start` (a line's start; before it, the header) with each machine's run of
    lines replaced by its run in rows (both sorted by machine first, machines in byte order)."""
    view = memoryview(data)
    pieces: list[memoryview | bytes] = []
    removed = added = 0
    changed = False
    at = start
    for machine in machines:
        first = _run_bound(data, machine, at, after=False)
        last = _run_bound(data, machine, first, after=True)
        own = rows[_run_bound(rows, machine, 0, after=False) : _run_bound(rows, machine, 0, after=True)]
        pieces += [view[at:first], own]
        removed += data.count(b"\n", first, last)
        added += own.count(b"\n")
        changed = changed or view[first:last] != own
        at = last
    pieces.append(view[at:])
    return Splice(pieces, removed, added, changed)


def replace_runs(body: bytes, rows: bytes, machines: list[bytes]) -> bytes:
    """body with each machine's run of lines replaced by its run in rows (both sorted by machine first)."""
    return b"".join(splice_runs(body, 0, rows, machines).pieces)


def _run_bound(lines: bytes, machine: bytes, low: int, after: bool) -> int:
    """The offset of the first line from `low` (a line's start) whose machine sorts above `machine` (after) or
    not below it: a binary search over the lines' byte offsets."""
    high = len(lines)
    while low < high:
        middle = (low + high) // 2
        start = lines.rfind(b"\n", low, middle) + 1 or low
        first = lines[start : lines.find(b",", start)]
        if first < machine or (after and first == machine):
            low = lines.find(b"\n", start) + 1 or len(lines)
        else:
            high = start
    return low
