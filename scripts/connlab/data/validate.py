"""`make validate`: every results folder checked as data, one line per problem.

Format: `path:line: field: what is wrong`. Nothing in a results folder is executed or rendered as a
template; YAML is safe-loaded, CSVs are parsed as text, symbolic links are refused rather than followed.
Every path is looked at with os.lstat before anything opens it, and only a regular file is opened: a named
pipe, a socket or a device with a run file's name is refused, never read (opening a FIFO waits for a writer
forever).
"""

from __future__ import annotations

import csv
import math
import os
import re
import stat
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import ValidationError

from connlab.contract.columns import (
    ADDED_FOR_SPREAD,
    MAX_PLAUSIBLE_MS,
    NOT_RUN_COLUMNS,
    PUBLISHED_COLUMNS,
    PUBLISHED_FILE_NAME,
    UPPER_BOUNDS,
    WINDOW_COLUMNS,
    Column,
    any_text_is_valid,
    is_not_run,
)
from connlab.contract.machine_schema import SAFE_ID_PATTERN, MachineFile
from connlab.contract.names import PUBLISHED_PREFIX
from connlab.contract.yaml_models import (
    YamlShapeRefused,
    duplicate_key_problems,
    format_validation_error,
    parse_yaml,
)
from connlab.data import machine_runs, pasted_passes, row_shapes, window_rules
from connlab.paths import MACHINE_FILE_NAME, RESULTS_DIR

MAX_FILE_BYTES = 20 * 2**20
MAX_YAML_BYTES = 64 * 2**10
SAFE_ID = re.compile(SAFE_ID_PATTERN)
RUN_ID = re.compile(r"^(tiny|quick|full)-[0-9]{8}T[0-9]{6}Z$")
# Numbers whose text alone proves them valid for the type (ASCII, in range, finite): at most 9 digits for
# an integer; no exponent and at most 300 digits before the point for a double.
PLAIN_NUMBERS = {
    "INTEGER": re.compile(r"(?:-?[0-9]{1,9}\n)*"),
    "BIGINT": re.compile(r"(?:-?[0-9]{1,9}\n)*"),
    "DOUBLE": re.compile(r"(?:-?[0-9]{1,300}(?:\.[0-9]+)?\n)*"),
}
# A plain number with six digits or more before its point: the only kind that can exceed MAX_PLAUSIBLE_MS.
LONG_NUMBER = re.compile(r"^-?[0-9]{6}", re.MULTILINE)


# A name that reads back as a problem line's field: no colon, space or line break.
PLAIN_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def _shown(text: str) -> str:
    """Contributed text inside a problem line: as written where it is printable on one line, else quoted
    with escapes (a line break in a workload's name would split the problem in two)."""
    return text if text.isprintable() else repr(text)


def _check_value(kind: str, text: str) -> str | None:
    """None when the text is a valid value of the DuckDB type, else the reason."""
    if not text.isascii():
        return f"expected plain ASCII digits for {kind.lower()} (got {text!r})" if kind != "VARCHAR" else None
    try:
        if kind in ("INTEGER", "BIGINT"):
            limit = 2**31 if kind == "INTEGER" else 2**63
            if not -limit <= int(text) < limit:
                return f"{text} is out of range for {kind.lower()}"
        elif kind == "DOUBLE":
            if not math.isfinite(float(text)):
                return f"not a finite number ({text!r})"
        elif kind == "BOOLEAN" and text not in ("true", "false"):
            return f"expected true or false (got {text!r})"
    except ValueError:
        return f"expected {kind.lower()} (got {text!r})"
    return None


MISSING = "missing"
SYMLINK_REFUSED = "symbolic links are not accepted in results"
RUN_FILE_FOLDER = "a folder named like a run file; a run file is a regular file"
# What each kind of file that is not a regular one is called in a problem line.
SPECIAL_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)
# Opened without following a link and without waiting: what lstat said was a regular file may have been
# replaced since (a FIFO's open would otherwise block), and fstat then tells.
OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC


def not_a_regular_file(mode: int) -> str | None:
    """None for a regular file; else why it is refused (it is never opened)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return SYMLINK_REFUSED
    if stat.S_ISDIR(mode):
        return "a folder where a regular file belongs"
    kind = next((name for test, name in SPECIAL_KINDS if test(mode)), "a special file")
    return f"{kind}, not a regular file; results/ holds regular files and folders only"


def _open_regular(path: Path) -> tuple[int | None, str | None]:
    """A descriptor open on the regular file at path, or why there is none: lstat first, and an open that
    can neither follow a link nor block, checked again with fstat."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None, MISSING
    except OSError as error:
        return None, f"cannot be read ({error.strerror})"
    reason = not_a_regular_file(mode)
    if reason is not None:
        return None, reason
    try:
        descriptor = os.open(path, OPEN_FLAGS)
    except OSError as error:
        return None, f"cannot be read ({error.strerror})"
    reason = not_a_regular_file(os.fstat(descriptor).st_mode)
    if reason is not None:
        os.close(descriptor)
        return None, reason
    return descriptor, None


def regular_file_bytes(path: Path) -> bytes | None:
    """The whole content of a regular file; None where path is anything else (never opened then)."""
    descriptor, _ = _open_regular(path)
    if descriptor is None:
        return None
    with os.fdopen(descriptor, "rb") as file:
        return file.read()


def _read_text(path: Path, limit: int) -> tuple[str | None, str | None]:
    """The file's text, or the reason it cannot be read as a small UTF-8 text file."""
    descriptor, reason = _open_regular(path)
    if descriptor is None:
        return None, reason
    # One byte past the limit tells a file too large, without a stat of every file first.
    with os.fdopen(descriptor, "rb") as file:
        data = file.read(limit + 1)
    if len(data) > limit:
        return (
            None,
            f"larger than {limit // 1024} KiB" if limit < 2**20 else f"larger than {limit // 2**20} MiB",
        )
    if b"\x00" in data:
        return None, "binary content (NUL bytes); expected UTF-8 text"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as error:
        return None, f"not UTF-8 text (byte {error.start})"


def _check_rows(
    path: Path, text: str, columns: Sequence[Column]
) -> Iterator[tuple[int, dict[str, str]] | str]:
    """Header and cell checks; yields problems (str) and the valid rows with their line numbers."""
    names = [column.name for column in columns]
    reader = csv.reader(text.splitlines(keepends=True))
    header = next(reader, None)
    if header is None:
        yield f"{path}:1: (header): empty file"
        return
    missing = [c.name for c in columns if c.name not in header and not c.added_later]
    unknown = [name for name in header if name not in names]
    for name in missing:
        yield f"{path}:1: {name}: required column missing"
    for name in unknown:
        # A column's name is the line's field: one that could not be read back as one is shown quoted.
        if PLAIN_NAME.fullmatch(name):
            yield f"{path}:1: {name}: unknown column"
        else:
            yield f"{path}:1: (header): unknown column {_shown(name)}"
    if missing or unknown:
        return
    if not text.endswith("\n"):
        yield f"{path}:{text.count(chr(10)) + 1}: (file): does not end with a newline; truncated?"
    rows = iter(reader)
    while True:
        try:
            row = next(rows)
        except StopIteration:
            break
        except csv.Error as error:  # e.g. a field larger than the csv module's limit
            yield f"{path}:{reader.line_num}: (row): unreadable CSV ({error})"
            return
        line_no = reader.line_num
        if len(row) != len(header):
            yield f"{path}:{line_no}: (row): {len(row)} fields, expected {len(header)}"
            continue
        values = dict(zip(header, row, strict=True))
        row_ok = True
        # A column added after a file was written is absent from it, not empty: nothing to check there.
        # A window that ran nothing (its pooler's version lacks a feature) has no counters to require.
        required = NOT_RUN_COLUMNS if is_not_run(values) else None
        for column in (c for c in columns if c.name in values):
            if required is not None and column.name not in required and values[column.name] == "":
                continue
            problem = _cell_problem(column, values[column.name])
            if problem:
                row_ok = False
                yield f"{path}:{line_no}: {column.name}: {problem}"
        for problem in _ok_row_problems(columns, values):
            row_ok = False
            yield f"{path}:{line_no}: {problem}"
        if row_ok:
            yield (line_no, values)
    if reader.line_num <= 1:
        yield f"{path}:1: (file): a header and no rows; delete the file, or rerun to measure"


def _ok_row_problems(columns: Sequence[Column], values: dict[str, str]) -> Iterator[str]:
    """A window marked ok must carry what ok means: pgbench's figures, and no failed transaction."""
    if values.get("ok") != "true":
        return
    for column in columns:
        if column.required_when_ok and values.get(column.name, "") == "":
            yield f"{column.name}: empty in a window marked ok (ok=true means pgbench reported it)"
    failed = values.get("failed_transactions", "")
    if failed.isdigit() and int(failed) > 0:
        yield f"failed_transactions: {failed} in a window marked ok (ok=true means none failed)"


def _column_is_clean(column: Column, distinct: set[str]) -> bool:
    """Whether _cell_problem passes every non-empty text of a column. Plain numbers are checked in bulk
    (one match over them all, then their least and greatest value against the bounds): a column of
    measurements has as many distinct texts as rows."""
    texts = distinct - {""}
    if any_text_is_valid(column):
        return True
    plain = PLAIN_NUMBERS.get(column.type)
    joined = "\n".join(texts) + "\n"
    if plain is None or column.pattern is not None or not plain.fullmatch(joined):
        return not any(_cell_problem(column, text) for text in texts)
    if not texts:
        return True
    upper = UPPER_BOUNDS.get(column.name)
    # Plain numbers without a minus sign are at least 0, and without six digits before the point below ten
    # minutes of milliseconds: most columns are told clean without converting their values, the costly part
    # of the check on a column of measurements.
    bounded_below = column.minimum is None or (column.minimum == 0 and "-" not in joined)
    plausible_ms = not column.name.endswith("_ms") or LONG_NUMBER.search(joined) is None
    if upper is None and bounded_below and plausible_ms:
        return True
    numbers = list(map(float, texts))
    low, high = min(numbers), max(numbers)
    return (
        (column.minimum is None or low >= column.minimum)
        and (upper is None or (low >= 1 and high <= upper))
        and not (column.name.endswith("_ms") and high > MAX_PLAUSIBLE_MS)
    )


def _cell_problem(column: Column, text: str) -> str | None:
    if text == "":
        return "required value is empty" if column.required else None
    problem = _check_value(column.type, text)
    if problem:
        return problem
    upper = UPPER_BOUNDS.get(column.name)
    if upper and not 1 <= int(text) <= upper:
        return f"{text} is outside 1..{upper}"
    if column.minimum is not None and float(text) < column.minimum:
        return f"negative value {text}" if column.minimum == 0 else f"{text} is below {column.minimum:g}"
    if column.pattern is not None and not re.match(column.pattern, text):
        return f"expected {column.pattern_hint}"
    if column.name.endswith("_ms") and float(text) > MAX_PLAUSIBLE_MS:
        return f"{text} ms is more than ten minutes: latencies are in milliseconds"
    return None


def validate_csv(
    path: Path, machine_id: str | None = None, runs: list[machine_runs.RunProvenance] | None = None
) -> Iterator[str]:
    """A raw run file: columns, types, ranges, and that its passes are complete. runs, where given, gains
    the run's provenance (connlab.data.machine_runs) from the text read here, so it is read once."""
    text, reason = _read_text(path, MAX_FILE_BYTES)
    if text is None:
        yield f"{path}:1: (file): {reason}"
        return
    if runs is not None:
        runs.extend(machine_runs.read_provenance(path, text))
    found = _shaped_file_problems(path, text, machine_id)
    if found is None:
        found = _clean_file_problems(path, text, machine_id)
    yield from (found if found is not None else _window_problems(path, text, machine_id))


_WINDOW_COLUMN_NAMES = frozenset(column.name for column in WINDOW_COLUMNS)


def _clean_file_problems(path: Path, text: str, machine_id: str | None) -> list[str] | None:
    """The problems of a file whose every row is valid (only incomplete passes remain possible), checked
    column by column on each column's distinct values; None when any check fails or the file is unusual,
    and the row-by-row check then names every problem with its line.

    A cell's check depends on its column and text alone, and a results file repeats few distinct texts
    per column (ids, client counts, pass numbers), so a thousand machines' files are checked in a
    fraction of the row-by-row time. Whatever this returns equals what _window_problems yields
    (tests/data/test_validate.py compares the two on valid and broken files).
    """
    if not RUN_ID.match(path.stem) or not text.endswith("\n"):
        return None
    try:
        rows = list(csv.reader(text.splitlines(keepends=True)))
    except csv.Error:
        return None
    if len(rows) < 2:
        return None
    header, body = rows[0], rows[1:]
    at = {name: index for index, name in enumerate(header)}
    if len(at) != len(header) or not at.keys() <= _WINDOW_COLUMN_NAMES:
        return None
    if any(column.name not in at and not column.added_later for column in WINDOW_COLUMNS):
        return None
    if any(len(row) != len(header) for row in body):
        return None
    cells = list(zip(*body, strict=True))
    ok_rows = [value == "true" for value in cells[at["ok"]]]
    not_run = [
        is_not_run({"ok": ok, "error": error})
        for ok, error in zip(cells[at["ok"]], cells[at["error"]], strict=True)
    ]
    for column in WINDOW_COLUMNS:
        if column.name not in at:
            if column.required_when_ok and any(ok_rows):
                return None
            continue
        values = cells[at[column.name]]
        if not _column_is_clean(column, set(values)):
            return None
        if "" not in values:
            continue
        if column.required and (
            column.name in NOT_RUN_COLUMNS
            or any(value == "" and not skipped for value, skipped in zip(values, not_run, strict=True))
        ):
            return None
        if column.required_when_ok and any(
            value == "" and ok for value, ok in zip(values, ok_rows, strict=True)
        ):
            return None
    if "failed_transactions" in at and any(
        ok and failed.isdigit() and int(failed) > 0
        for ok, failed in zip(ok_rows, cells[at["failed_transactions"]], strict=True)
    ):
        return None
    context = window_rules.row_context(path.parent.name)
    if any(window_rules.window_problems(dict(zip(header, row, strict=True)), context) for row in body):
        return None
    named = {name: set(cells[at[name]]) for name in row_shapes.NAMED_COLUMNS}
    places = list(zip(*(cells[at[name]] for name in row_shapes.PLACE_COLUMNS), strict=True))
    if any(
        pasted_passes.is_pasted(
            dict(zip(header, body[later], strict=True)), dict(zip(header, body[earlier], strict=True))
        )
        for later, earlier in pasted_passes.same_throughput(places, cells[at["tps"]])
    ):
        return None
    added_for = cells[at["added_for"]] if "added_for" in at else [""] * len(body)
    return _places_problems(path, machine_id, named, places, added_for)


def _shaped_file_problems(path: Path, text: str, machine_id: str | None) -> list[str] | None:
    """The problems of a file each of whose lines has the shape of a valid window's row
    (connlab.data.row_shapes) and keeps the cross-field rules: only incomplete passes remain possible. None
    where a line has neither shape or breaks a rule, and the column-wise check answers instead."""
    if not RUN_ID.match(path.stem):
        return None
    header_line, _, body = text.partition("\n")
    windows = row_shapes.read_windows(header_line, body)
    if windows is None:
        return None
    context = window_rules.row_context(path.parent.name)
    if any(window_rules.window_problems(row, context) for row in windows.rows):
        return None
    rows = windows.rows
    rates = [row["tps"] for row in rows]
    if any(
        pasted_passes.is_pasted(rows[later], rows[earlier])
        for later, earlier in pasted_passes.same_throughput(windows.places, rates)
    ):
        return None
    added_for = [row.get("added_for", "") for row in rows]
    return _places_problems(path, machine_id, windows.named, windows.places, added_for)


def _places_problems(
    path: Path,
    machine_id: str | None,
    named: dict[str, set[str]],
    places: list[tuple[str, ...]],
    added_for: Sequence[str],
) -> list[str] | None:
    """The problems of a file whose every cell is valid, from the run, experiment and machine its rows name
    and each window's place (row_shapes.PLACE_COLUMNS): the passes it lacks. None where a row names another
    run, experiment or machine, or a window repeats; the row-by-row check names those with their lines, as
    it does a pasted pass, which the callers look for."""
    expected = {"run_id": path.stem, "experiment": path.parent.name}
    if machine_id is not None:
        expected["machine"] = machine_id
    if any(named.get(name) != {value} for name, value in expected.items()):
        return None
    if len(set(places)) != len(places):
        return None
    passes: dict[tuple[str, str, str], set[int]] = defaultdict(set)
    for (pass_no, workload, clients, budget), why in zip(places, added_for, strict=True):
        if why != ADDED_FOR_SPREAD:
            passes[(workload, clients, budget)].add(int(pass_no))
    return list(_incomplete_passes(path, passes))


def _window_problems(path: Path, text: str, machine_id: str | None) -> Iterator[str]:
    """Row by row: every problem, each with its line."""
    if not RUN_ID.match(path.stem):
        yield f"{path}:1: (file): run file names are <profile>-<UTC time>.csv, e.g. full-20260101T000000Z.csv"
    seen: dict[tuple[str, str, str], int] = {}
    passes: dict[tuple[str, str], set[int]] = defaultdict(set)
    valid_rows: list[tuple[int, dict[str, str]]] = []
    context = window_rules.row_context(path.parent.name)
    for item in _check_rows(path, text, WINDOW_COLUMNS):
        if isinstance(item, str):
            yield item
            continue
        line_no, values = item
        for problem in window_rules.window_problems(values, context):
            yield f"{path}:{line_no}: {problem}"
        if values["run_id"] != path.stem:
            yield f"{path}:{line_no}: run_id: {values['run_id']!r} does not match the file name"
        if machine_id is not None and values["machine"] != machine_id:
            yield f"{path}:{line_no}: machine: {values['machine']!r} does not match the folder {machine_id!r}"
        if values["experiment"] != path.parent.name:
            yield f"{path}:{line_no}: experiment: {values['experiment']!r} does not match the folder"
        point = (values["workload"], values["clients"], values["server_cpu_budget"])
        key = (values["pass_no"], *point)
        if key in seen:
            repeated = f"pass {key[0]}, {_shown(key[1])} at {key[2]} clients on {key[3]} cores"
            yield f"{path}:{line_no}: (row): {repeated} repeats line {seen[key]}"
        seen[key] = line_no
        # A pass added where the point's passes disagreed (connlab.lab.refine) is beyond the profile's.
        if values.get("added_for") != ADDED_FOR_SPREAD:
            passes[point].add(int(values["pass_no"]))
        valid_rows.append((line_no, values))
    yield from _pasted_passes(path, valid_rows)
    yield from _incomplete_passes(path, passes)


def _pasted_passes(path: Path, rows: list[tuple[int, dict[str, str]]]) -> Iterator[str]:
    """Each row that repeats a row of another pass of its window value for value (connlab.data.pasted_passes),
    named once, with the first row it repeats."""
    places = [tuple(values[name] for name in row_shapes.PLACE_COLUMNS) for _, values in rows]
    rates = [values["tps"] for _, values in rows]
    named: set[int] = set()
    for later, earlier in pasted_passes.same_throughput(places, rates):
        (line_no, values), (earlier_line, earlier_values) = rows[later], rows[earlier]
        if later in named or not pasted_passes.is_pasted(values, earlier_values):
            continue
        named.add(later)
        window = (
            f"{_shown(values['workload'])} at {values['clients']} clients on {values['server_cpu_budget']}"
        )
        yield (
            f"{path}:{line_no}: (row): pass {values['pass_no']} of {window} cores repeats pass "
            f"{earlier_values['pass_no']} (line {earlier_line}) value for value, tps, latencies and CPU: a "
            f"pass pasted from another, not measured"
        )


def _incomplete_passes(path: Path, passes: dict[tuple[str, str, str], set[int]]) -> Iterator[str]:
    if not passes:
        return
    expected = set(range(1, max(max(found) for found in passes.values()) + 1))
    for (workload, clients, _budget), found in sorted(passes.items()):
        if found != expected:
            missing = ", ".join(str(number) for number in sorted(expected - found))
            yield (
                f"{path}:1: pass_no: {_shown(workload)} at {clients} clients lacks pass(es) {missing}; an "
                f"interrupted run resumes with the same `make run` command, or delete the file"
            )


def validate_published_csv(path: Path) -> Iterator[str]:
    text, reason = _read_text(path, MAX_FILE_BYTES)
    if text is None:
        yield f"{path}:1: (file): {reason}"
        return
    for item in _check_rows(path, text, PUBLISHED_COLUMNS):
        if isinstance(item, str):
            yield item
        else:
            line_no, values = item
            yield from (f"{path}:{line_no}: {problem}" for problem in window_rules.published_problems(values))


def load_machine_file(path: Path) -> tuple[MachineFile | None, list[str]]:
    """machine.yaml safe-loaded and checked against the schema."""
    text, reason = _read_text(path, MAX_YAML_BYTES)
    if text is None:
        reason = "missing; `connlab run` writes it" if reason == MISSING else reason
        return None, [f"{path}:1: (file): {reason}"]
    try:
        root, data = parse_yaml(text, contributed=True)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        problem = getattr(error, "problem", None) or "not valid YAML"
        if "constructor" in problem:
            problem = "YAML tags (such as !!python/...) are not accepted; plain values only"
        if isinstance(error, YamlShapeRefused):
            problem = f"{problem}: not a machine description"
        return None, [f"{path}:{mark.line + 1 if mark else 1}: (yaml): {problem}"]
    if not isinstance(data, dict):
        return None, [f"{path}:1: (top level): expected a mapping of keys to values"]
    duplicates = duplicate_key_problems(path, root)
    if duplicates:
        return None, duplicates
    try:
        return MachineFile.model_validate(data), []
    except ValidationError as error:
        return None, format_validation_error(path, error, root, data)


@dataclass(frozen=True)
class FolderEntry:
    path: Path
    # "link" (a symbolic link, never followed), "dir", "file" (a regular file) or "special" (a named pipe, a
    # socket or a device: never opened)
    kind: str


def folder_entries(folder: Path) -> list[FolderEntry]:
    """Everything under folder, not through symbolic links, in the order of sorted(folder.rglob("*")), each
    with its kind as the folder's listing gives it: one os.scandir walk, where rglob and a stat of every path
    for its kind cost system time that grows with the machines."""
    found: list[tuple[tuple[str, ...], FolderEntry]] = []

    def walk(directory: str, names: tuple[str, ...]) -> None:
        with os.scandir(directory) as listing:
            for entry in listing:
                below = (*names, entry.name)
                kind = (
                    "link"
                    if entry.is_symlink()
                    else "dir"
                    if entry.is_dir()
                    else "file"
                    if entry.is_file(follow_symlinks=False)
                    else "special"
                )
                found.append((below, FolderEntry(folder.joinpath(*below), kind)))
                if kind == "dir":
                    walk(entry.path, below)

    walk(str(folder), ())
    return [entry for _, entry in sorted(found, key=lambda item: item[0])]


def validate_machine_folder(folder: Path, entries: list[FolderEntry] | None = None) -> Iterator[str]:
    """Every problem in one machine's folder; entries: folder_entries(folder), where the caller has them."""
    if not SAFE_ID.fullmatch(folder.name):
        shown = folder.parent / folder.name.encode("unicode_escape").decode("ascii")
        yield f"{shown}:1: (folder): machine id must be lower-case letters, digits, '.', '_' or '-'"
        return
    machine, problems = load_machine_file(folder / MACHINE_FILE_NAME)
    yield from problems
    published = folder.name.startswith(PUBLISHED_PREFIX)
    if machine is not None:
        if machine.id != folder.name:
            where = folder / MACHINE_FILE_NAME
            yield f"{where}:1: id: {machine.id!r} must equal the folder name {folder.name!r}"
        if machine.published != published:
            yield (
                f"{folder / MACHINE_FILE_NAME}:1: published: published reference data lives in folders named "
                f"published-<name> with `published: true`, and only there"
            )
    runs: list[machine_runs.RunProvenance] = []
    for entry in folder_entries(folder) if entries is None else entries:
        path = entry.path
        relative = path.relative_to(folder)
        if relative == Path(MACHINE_FILE_NAME):
            continue  # checked (symlink included) by load_machine_file
        if entry.kind == "link":
            yield f"{path}:1: (file): {SYMLINK_REFUSED}"
        elif entry.kind == "special":
            yield f"{path}:1: (file): {_special_reason(path)}"
        elif entry.kind == "dir":
            if path.suffix == ".csv":
                yield f"{path}:1: (folder): {RUN_FILE_FOLDER}"
        elif published and relative == Path(PUBLISHED_FILE_NAME):
            yield from validate_published_csv(path)
        elif not published and path.suffix == ".csv" and len(relative.parts) == 2:
            yield from validate_csv(path, folder.name, runs)
        else:
            expected = PUBLISHED_FILE_NAME if published else "<experiment>/<run-id>.csv"
            yield f"{path}:1: (file): unexpected file; this folder holds {MACHINE_FILE_NAME} and {expected}"
    # One id, one machine: the runs agree with machine.yaml's fingerprint and calibration.
    yield from machine_runs.folder_problems(folder / MACHINE_FILE_NAME, machine, runs)


def _special_reason(path: Path) -> str:
    """Why a path the folder's listing calls neither a file, a folder nor a link is refused."""
    try:
        return not_a_regular_file(os.lstat(path).st_mode) or "replaced while it was read; validate again"
    except OSError as error:
        return f"cannot be read ({error.strerror})"


def validate_results(
    results_dir: Path = RESULTS_DIR,
    folder_problems: Callable[[Path], Iterable[str]] = validate_machine_folder,
) -> list[str]:
    """Every problem in results/; folder_problems checks one machine folder (validate_cache passes one that
    reuses earlier answers)."""
    problems: list[str] = []
    entries = sorted(results_dir.iterdir()) if results_dir.exists() else []
    for entry in entries:
        if entry.is_symlink():
            # Following it would read data from outside results/.
            problems.append(f"{entry}:1: (folder): symbolic links are not accepted in results")
        elif entry.is_dir():
            problems.extend(folder_problems(entry))
        elif entry.name != ".gitkeep" or not stat.S_ISREG(entry.lstat().st_mode):
            problems.append(f"{entry}:1: (file): results/ holds one folder per machine and nothing else")
    return problems
