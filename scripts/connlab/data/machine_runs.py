"""One id, one machine: the runs of a machine folder agree with its machine.yaml, and so with each other.

Every run written since the fingerprint was recorded carries, on each row, the digest of its machine's
fingerprint, its kernel and the calibration measured at its start (connlab.contract.provenance). A run
whose fingerprint differs from the folder's was measured on another machine: one line per such run names
its file and what it differs from. The folder's fingerprint is machine.yaml's; where machine.yaml lacks it
(a file written before it was recorded), the first run that has one stands in. Runs written before these
columns existed carry none of them: nothing here is asked of them. A run whose calibration lies off the
folder's is not refused here: the verdicts that read it are marked (connlab.data.main_tables).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from connlab.contract.machine_schema import MachineFile
from connlab.contract.provenance import fingerprint_digest

FINGERPRINT_COLUMN = "machine_fingerprint"
WAY_OUT = "move it to a folder of its own (a run names one with MACHINE=<new id>)"


@dataclass(frozen=True)
class RunProvenance:
    """One run session's provenance as its rows give it, at the first line that gives it."""

    path: Path
    line: int
    fingerprint: str
    kernel: str
    calibration_tps: float | None
    calibration_spread: float | None


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text else None
    except ValueError:
        return None  # validation of the cell itself reports it


def read_provenance(path: Path, text: str) -> list[RunProvenance]:
    """Each distinct provenance a run file's rows carry (a resumed run: one per session, most often the
    same), with the line it first appears on; empty for a file without the columns."""
    header_end = text.find("\n")
    if text.find(FINGERPRINT_COLUMN, 0, header_end if header_end >= 0 else len(text)) < 0:
        return []  # a file written before the columns: not parsed a second time
    found: dict[tuple[str, ...], RunProvenance] = {}
    reader = csv.DictReader(text.splitlines(keepends=True))
    try:
        for row in reader:
            fingerprint = row.get(FINGERPRINT_COLUMN) or ""
            if not fingerprint:
                continue
            key = (
                fingerprint,
                row.get("kernel") or "",
                row.get("run_calibration_tps") or "",
                row.get("run_calibration_spread_tps") or "",
            )
            if key not in found:
                found[key] = RunProvenance(
                    path, reader.line_num, fingerprint, key[1], _number(key[2]), _number(key[3])
                )
    except csv.Error:
        pass  # the file's own check names it
    return list(found.values())


def _fingerprint_problems(
    machine_file: Path, machine: MachineFile | None, runs: list[RunProvenance]
) -> Iterator[str]:
    digest = fingerprint_digest(machine.model_dump()) if machine is not None else None
    if digest is not None and machine is not None:
        reference, kernel, where = digest, machine.kernel, str(machine_file)
    else:
        # machine.yaml predates the fingerprint: its kernel still tells, and the runs are held to the first.
        if machine is not None:
            for run in runs:
                if run.kernel and run.kernel != machine.kernel:
                    here = f"kernel {run.kernel}"
                    yield _another_machine(run, "kernel", machine_file, here, machine.kernel)
            runs = [run for run in runs if not run.kernel or run.kernel == machine.kernel]
        if not runs:
            return
        reference, kernel, where = runs[0].fingerprint, runs[0].kernel, f"{runs[0].path}:{runs[0].line}"
    for run in runs:
        if run.fingerprint != reference:
            here = f"fingerprint {run.fingerprint}, kernel {run.kernel or '?'}"
            yield _another_machine(run, FINGERPRINT_COLUMN, where, here, f"{reference}, kernel {kernel}")


def _another_machine(run: RunProvenance, field: str, where: object, here: str, there: str) -> str:
    """The line for a run whose `field` says it was measured on another machine than `where` records."""
    return (
        f"{run.path}:{run.line}: {field}: measured on another machine than {where} records ({here} here; "
        f"{there} there); {WAY_OUT}"
    )


def folder_problems(
    machine_file: Path, machine: MachineFile | None, runs: Iterable[RunProvenance]
) -> Iterator[str]:
    """The runs of one machine folder (read_provenance of each run file) whose fingerprint disagrees with
    its machine.yaml, or, where it records none, with the folder's first run that does."""
    ordered = sorted(runs, key=lambda run: (str(run.path), run.line))
    yield from _fingerprint_problems(machine_file, machine, ordered)
