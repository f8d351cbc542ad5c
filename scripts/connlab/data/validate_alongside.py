"""Validation beside the aggregation: `connlab aggregate --validate` checks results/ in a second process while
this one aggregates, so a build waits for the longer of the two instead of their sum (at a thousand machines
the two take about as long, and the aggregation keeps only one of two cores busy).

The aggregation's tables count only once validation has passed. When it finds a problem, its lines are what
the command reports, with its exit status, whatever the aggregation made of the bad file; make then leaves
its stamp alone, so the next build aggregates again.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from connlab.interrupts import group_guard, hold_interrupts

VALIDATE_COMMAND = (sys.executable, "-m", "connlab.cli", "validate")


@dataclass(frozen=True)
class ValidationOutcome:
    returncode: int
    stdout: str  # one line per problem
    stderr: str  # the summary line, or the error that stopped it

    def relay(self) -> None:
        """Print what validation printed, each stream to its own."""
        sys.stdout.write(self.stdout)
        sys.stdout.flush()
        sys.stderr.write(self.stderr)
        sys.stderr.flush()


@dataclass(frozen=True)
class Validation:
    process: subprocess.Popen[str]
    out: IO[str]
    errors: IO[str]

    def outcome(self) -> ValidationOutcome:
        """Wait for validation to end; what it found."""
        self.process.wait()
        self.out.seek(0)
        self.errors.seek(0)
        return ValidationOutcome(self.process.returncode, self.out.read(), self.errors.read())


@contextlib.contextmanager
def validation_alongside() -> Iterator[Validation]:
    """`connlab validate` started in a session of its own, for the block to ask its outcome of.

    Its output goes to files, not pipes, so however many problems it prints it never waits for this process
    to read them. Its own session keeps a terminal's Ctrl-C from reaching it: this process stops it, with
    its workers, when the block ends early; it only reads results/ and writes its cache atomically."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as errors:
        command = list(VALIDATE_COMMAND)
        release = hold_interrupts()
        try:
            process = subprocess.Popen(command, stdout=out, stderr=errors, text=True, start_new_session=True)
        except BaseException:
            release()
            raise
        with group_guard(process):
            release()  # a Ctrl-C that came while the process started is raised here, where the guard stops it
            yield Validation(process, out, errors)
            process.wait()
