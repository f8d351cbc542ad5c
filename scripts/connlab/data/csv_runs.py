"""A CSV sorted by its first column, the machine, as runs of lines: one run per machine, which can be replaced
without reading the rest of the file as CSV (connlab.data.aggregate writes an added machine's rows so)."""

from __future__ import annotations


def one_line_each(rows: bytes) -> bool:
    """Whether every row is one line: a value with a line break is quoted, so its first line holds an odd
    number of quotes (a quote inside a value is written twice)."""
    return b'"' not in rows or not any(line.count(b'"') % 2 for line in rows.split(b"\n"))


def replace_runs(body: bytes, rows: bytes, machines: list[bytes]) -> bytes:
    """body with each machine's run of lines replaced by its run in rows (both sorted by machine first)."""
    pieces: list[bytes] = []
    at = 0
    for machine in machines:
        start = _run_bound(body, machine, at, after=False)
        own = rows[_run_bound(rows, machine, 0, after=False) : _run_bound(rows, machine, 0, after=True)]
        pieces += [body[at:start], own]
        at = _run_bound(body, machine, start, after=True)
    pieces.append(body[at:])
    return b"".join(pieces)


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
