"""`connlab validate --format github`: each problem as a GitHub Actions workflow command that annotates the
file and line of a pull request, `::error file=<path>,line=<n>,title=<field>::<what is wrong>`.

Validation's problems are lines, `path:line: field: what is wrong` (connlab.data.validate), and cached as such
(connlab.data.validate_cache); this reads them back. A path is the contributor's, and may itself hold
`:<digits>: `: the split taken is the one whose path exists, the longest where several do. Every value is
escaped as GitHub's own toolkit escapes it (@actions/core, command.ts), so that no file name or value in a
contribution can end the command early or start another: the runner reads workflow commands from each line
of a step's output.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# Where a problem line's path ends: its line number, between a colon and a colon and a space.
LINE_NUMBER = re.compile(r":([0-9]+): ")


@dataclass(frozen=True)
class Problem:
    path: str
    line: int
    field: str
    message: str


def parse_problem(text: str) -> Problem | None:
    """A problem line's parts; None for a line not of that form."""
    splits = [
        (text[: match.start()], int(match.group(1)), text[match.end() :])
        for match in LINE_NUMBER.finditer(text)
        if match.start() > 0
    ]
    existing = [split for split in splits if os.path.lexists(split[0])]
    if not (existing or splits):
        return None
    path, line, rest = existing[-1] if existing else splits[0]
    field, separator, message = rest.partition(": ")
    if not separator:
        field, message = "", rest
    return Problem(path, line, field, message)


def escape_data(text: str) -> str:
    """A command's message: `%`, CR and LF encoded, as @actions/core's escapeData does."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A command's property value: escape_data's, and `:` and `,`, which end a property."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def repository_path(path: str, root: Path) -> str:
    """The path as GitHub names a file of the repository: relative to the checkout's root, with slashes;
    unchanged where it is not under root."""
    absolute = Path(os.path.abspath(path))
    return absolute.relative_to(root).as_posix() if absolute.is_relative_to(root) else path


def annotation(text: str, root: Path) -> str:
    """One problem line as an error annotation on its file and line (its path relative to root, the
    checkout that holds the results); a line not of a problem's form as an error annotation of the run."""
    problem = parse_problem(text)
    if problem is None:
        return f"::error::{escape_data(text)}"
    properties = {
        "file": repository_path(problem.path, root),
        "line": str(problem.line),
        "title": problem.field or "results",
    }
    listed = ",".join(f"{name}={escape_property(value)}" for name, value in properties.items())
    return f"::error {listed}::{escape_data(problem.message)}"


def annotations(problems: Iterable[str], root: Path) -> list[str]:
    return [annotation(problem, root) for problem in problems]
