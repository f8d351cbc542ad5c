"""A run file checked line by line against the two shapes a window's row takes: validation's quickest check.

Beside a cold build of a thousand machines, validation's CPU time went mostly to Python's CSV reader and to
the sets of every column's values (connlab.data.validate's column-wise check). A window's row
has one of two shapes, told apart by its ok column: a window marked ok (pgbench's figures all there, no
failed transaction) and a failed one. Each shape is one regular expression for a line, made from the header
and the columns' types and bounds, and narrower than the columns themselves allow: a number plain and
unquoted (at most 9 digits for an integer, 18 for a bigint, 5 before the point for a latency in ms), a text
unquoted or quoted within its line, and nowhere a character that str.splitlines takes for the end of a line.

Where every line of a file has one of the shapes, every cell is valid, and what is left to check is read
from the named groups: the run, machine and experiment each line names, where each window stands (its
pass, workload, client count and server budget), the cells the cross-field rules read
(connlab.data.window_rules), which validation applies to every line, and the measured figures that tell a
pasted pass (connlab.data.pasted_passes). A file with a line of neither shape
(a window that ran nothing, an empty figure in a window marked ok, a number with an exponent...) is left to
the column-wise check, which answers it or leaves it in turn to the row-by-row one.
tests/data/test_validate.py holds the three to the same answers.
"""

from __future__ import annotations

import csv
import functools
import operator
import re
from dataclasses import dataclass

from connlab.contract.columns import MEASURED_COLUMNS, UPPER_BOUNDS, WINDOW_COLUMNS, Column, any_text_is_valid
from connlab.data.window_rules import COLUMNS_READ

COLUMNS = {column.name: column for column in WINDOW_COLUMNS}
# Read back from a file whose lines all have a shape: what each line names, and where its window stands.
NAMED_COLUMNS = ("run_id", "machine", "experiment")
PLACE_COLUMNS = ("pass_no", "workload", "clients", "server_cpu_budget")
# Why a window beyond the grid was measured: a pass added for spread is beyond the profile's passes.
ADDED_FOR_COLUMN = "added_for"
# Every column read back from a line: those above, the cells the cross-field rules read, and the measured
# figures a pasted pass repeats (connlab.data.pasted_passes).
CAPTURED_COLUMNS = (
    frozenset(NAMED_COLUMNS)
    | frozenset(PLACE_COLUMNS)
    | COLUMNS_READ
    | frozenset(MEASURED_COLUMNS)
    | {ADDED_FOR_COLUMN}
)
# Column names are identifiers: a header of anything else (quotes, a byte-order mark, a CR) is left to the
# other checks, which read it as the CSV module does.
PLAIN_HEADER = re.compile(r"[a-z0-9_]+(?:,[a-z0-9_]+)*")
# Neither a comma, a quote, nor anything str.splitlines ends a line at (validation splits a file so).
_TEXT_CHAR = r"[^,\"\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]"
_QUOTED_CHAR = r"[^\"\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]"
# Well under the CSV module's largest field (131,072 characters), which the row-by-row check reports.
MAX_TEXT = 4096
# Every repetition written here is possessive (+): none of these cells holds a comma, so each ends where its
# characters end, at a comma or the line's end; giving characters back could never make a line match, and
# not keeping the points to give them back at makes the check faster.
UNQUOTED_TEXT = rf"{_TEXT_CHAR}{{1,{MAX_TEXT}}}+"
TEXT = rf'(?>{UNQUOTED_TEXT}|"(?:{_QUOTED_CHAR}|""){{1,{MAX_TEXT}}}+")'
# Digits that keep a number in range: an integer's and a bigint's, and a double's before its point (finite
# without an exponent); a latency in ms below ten minutes' worth (MAX_PLAUSIBLE_MS) has at most five.
INTEGER_DIGITS = {"INTEGER": 9, "BIGINT": 18}
DOUBLE_DIGITS = 300
MS_DIGITS = 5


@dataclass(frozen=True)
class Windows:
    named: dict[str, set[str]]  # each of NAMED_COLUMNS the file has: the values its lines give
    places: list[tuple[str, ...]]  # each line's PLACE_COLUMNS (the ok windows' first)
    rows: list[dict[str, str]]  # each line's captured cells by column, as written (in the same order)


@dataclass(frozen=True)
class _Shapes:
    lines: tuple[re.Pattern[str], ...]  # a window marked ok, then a failed one
    groups: tuple[dict[str, int], ...]  # for each, where a named column's value sits in findall's tuples


def _value(column: Column, ok: bool) -> str | None:
    """A non-empty value of the column on a line of the shape, as a regular expression; None where the
    column's check is not written as one."""
    if column.name == "ok":
        return "true" if ok else "false"
    if column.name == "failed_transactions" and ok:
        return "0"  # a window marked ok had no failed transaction
    if column.type == "VARCHAR":
        pattern = column.pattern
        if pattern is None and not any_text_is_valid(column):
            return None
        if pattern is None:
            # A named value is compared as written: quoted, it would be one value written two ways.
            return UNQUOTED_TEXT if column.name in NAMED_COLUMNS + PLACE_COLUMNS else TEXT
        # A whole-value pattern (^...$) is the same inside a line, between commas; any other is not.
        return f"(?:{pattern[1:-1]})" if pattern.startswith("^") and pattern.endswith("$") else None
    if column.type == "BOOLEAN":
        return "(?:true|false)"
    if column.minimum not in (None, 0):
        return None
    sign = "-?" if column.minimum is None else ""
    if column.type in INTEGER_DIGITS:
        upper = UPPER_BOUNDS.get(column.name)
        if upper is not None:
            return f"[1-9][0-9]{{0,{len(str(upper)) - 2}}}+"  # 1 up to the bound's digits less one
        digits = MS_DIGITS if column.name.endswith("_ms") else INTEGER_DIGITS[column.type]
        return f"{sign}[0-9]{{1,{digits}}}+"
    if column.type == "DOUBLE" and column.name not in UPPER_BOUNDS:
        digits = MS_DIGITS if column.name.endswith("_ms") else DOUBLE_DIGITS
        return rf"{sign}[0-9]{{1,{digits}}}+(?:\.[0-9]++)?+"
    return None


def _cell(column: Column, ok: bool) -> str | None:
    value = _value(column, ok)
    if value is None:
        return None
    if column.name in CAPTURED_COLUMNS:
        value = f"(?P<{column.name}>{value})"
    # Empty where the column may be: never where it is required, nor a figure pgbench reports in an ok window.
    # (A required cell left empty in a window that ran nothing is for the other checks.)
    may_be_empty = not column.required and not (ok and column.required_when_ok)
    if not may_be_empty:
        return value
    # A column's own pattern is the contract's, which may match a comma: it keeps its backtracking.
    return f"(?:{value})?" if column.pattern is not None else f"(?:{value})?+"


@functools.lru_cache(maxsize=64)
def _shapes(header_line: str) -> _Shapes | None:
    """The two shapes of a line under this header; None where the header is not a plain list of the known
    columns, each once, with every column but those added later."""
    if not PLAIN_HEADER.fullmatch(header_line):
        return None
    header = header_line.split(",")
    if len(set(header)) != len(header) or not set(header) <= COLUMNS.keys():
        return None
    if any(column.name not in header and not column.added_later for column in WINDOW_COLUMNS):
        return None
    if not set(PLACE_COLUMNS) <= set(header):
        return None
    lines, groups = [], []
    for ok in (True, False):
        cells = [_cell(COLUMNS[name], ok) for name in header]
        if any(cell is None for cell in cells):
            return None
        line = re.compile("^" + ",".join(cells) + "$", re.MULTILINE)  # type: ignore[arg-type]
        lines.append(line)
        groups.append({name: index - 1 for name, index in line.groupindex.items()})
    return _Shapes(tuple(lines), tuple(groups))


def read_windows(header_line: str, body: str) -> Windows | None:
    """The named columns and the places of a file's windows, where every line of its body (each ending in a
    newline) has one of the two shapes; None otherwise, and the file is for the other checks."""
    shapes = _shapes(header_line)
    count = body.count("\n")
    if shapes is None or count == 0 or not body.endswith("\n"):
        return None
    # A line is shorter than the CSV module's largest field everywhere but in a file that long.
    if len(body) > csv.field_size_limit() and max(map(len, body.split("\n"))) > csv.field_size_limit():
        return None
    named: dict[str, set[str]] = {name: set() for name in NAMED_COLUMNS if name in shapes.groups[0]}
    places: list[tuple[str, ...]] = []
    cells: list[dict[str, str]] = []
    matched = 0
    for line, groups in zip(shapes.lines, shapes.groups, strict=True):
        rows = line.findall(body)
        matched += len(rows)
        if rows:
            values = list(zip(*rows, strict=True))  # each group's values, in the lines' order
            for name in named:
                named[name].update(values[groups[name]])
            places += zip(*(values[groups[name]] for name in PLACE_COLUMNS), strict=True)
            names, picked = tuple(groups), operator.itemgetter(*groups.values())
            cells += (dict(zip(names, picked(row), strict=True)) for row in rows)
        if matched == count:
            break
    # One match at most per line (a match is a whole line): as many matches as lines is every line.
    return Windows(named, places, cells) if matched == count else None
