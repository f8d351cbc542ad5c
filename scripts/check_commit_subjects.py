#!/usr/bin/env python3
"""Every commit after a pinned base has a subject of at most 72 characters and a blank second line.

    python3 scripts/check_commit_subjects.py [BASE]

BASE defaults to the commit id in .ci/subjects-since: that commit and older ones are exempt (hundreds of
older subjects are longer). The commits checked are those HEAD has and BASE has not (`git rev-list
BASE..HEAD`), in the repository of the current folder. Each offending commit is one line,
`<short id>: subject is N characters (at most 72)` or `<short id>: the second line is not blank`, and the
script exits 1; it exits 0 when every commit is fine. The reasoning goes in the body, after the blank line.
Standard library only: .ci/run calls it before the virtualenv exists.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MAX_SUBJECT = 72
BASE_FILE = Path(".ci") / "subjects-since"


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def message(commit: str) -> str:
    """The commit's message as written (git's own %s would join a subject's lines)."""
    raw = subprocess.run(["git", "cat-file", "commit", commit], check=True, capture_output=True).stdout
    return raw.partition(b"\n\n")[2].decode("utf-8", errors="replace")


def problems(commit: str) -> list[str]:
    short = git("rev-parse", "--short", commit).strip()
    lines = message(commit).split("\n")
    found = []
    if len(lines[0]) > MAX_SUBJECT:
        found.append(f"{short}: subject is {len(lines[0])} characters (at most {MAX_SUBJECT})")
    if len(lines) > 1 and lines[1].strip():
        found.append(f"{short}: the second line is not blank (a subject of one line, then a blank line)")
    return found


def main(argv: list[str]) -> int:
    root = Path(git("rev-parse", "--show-toplevel").strip())
    base = argv[0] if argv else (root / BASE_FILE).read_text().strip()
    if subprocess.run(["git", "cat-file", "-e", f"{base}^{{commit}}"], capture_output=True).returncode != 0:
        print(f"{base}: the base commit is not in this clone's history (a shallow clone? fetch it whole)")
        return 1
    found = [
        line for commit in git("rev-list", "--reverse", f"{base}..HEAD").split() for line in problems(commit)
    ]
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
