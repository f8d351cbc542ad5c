"""The sweep: run an experiment's windows in pass order on a throwaway cluster, one CSV row per window.

A rerun of the same experiment and profile resumes an interrupted run: windows already in the CSV are
skipped. After the grid, a profile with `refine` measures points where the answer is (connlab.lab.refine),
decided from the rows written, so a resumed run measures the ones still missing. Ctrl-C or SIGTERM at any
moment stops pgbench and the server, and writes no partial row. Windows whose pooler cannot run on this
machine are left out and named at the end (see connlab.lab.bench); the rerun after installing it measures
them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import psycopg
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from connlab.contract.experiment import Plan, Window
from connlab.contract.machine_schema import SAFE_ID_PATTERN
from connlab.contract.provenance import HELD_PROFILES, fingerprint_digest
from connlab.errors import LabError
from connlab.interrupts import raise_if_interrupted
from connlab.lab import machine
from connlab.lab.bench import Bench, calibrate, open_bench, pgbench_deadline_s
from connlab.lab.calibration import Calibration, calibration_off
from connlab.lab.overall import Overall, setup_estimate_s, window_estimate_s
from connlab.lab.refine import Extra, Refinement, next_points, refinement_done, refinement_of, window_of
from connlab.lab.results_file import ResultsFile, find_resumable, new_run_path
from connlab.lab.versions import Benches, BenchOpener, open_benches
from connlab.lab.window import measure_window, unsupported_row
from connlab.paths import LAB_DIR, experiment_results_dir

__all__ = ["measure_window", "open_bench", "pending_windows", "pgbench_deadline_s", "run_sweep"]


class PoolerUnavailable(LabError):
    """Some windows were left out because their pooler is not on this machine; the rest were measured."""

    def __init__(self, message: str, reasons: list[str]) -> None:
        super().__init__(message)
        self.reasons = reasons  # one "<pooler>: not available on this machine" per missing pooler


def _measure_or_stop(
    bench: Bench, plan: Plan, window: Window, number: int, written: int
) -> dict[str, object]:
    """measure_window, with any way the server or pooler failed turned into one line that says which
    window, why, and that what was written is kept."""
    try:
        return measure_window(bench, plan, window, number)
    except (LabError, psycopg.Error) as error:
        problem = bench.health_problem() or _first_line(error)
        raise LabError(
            f"window {number} ({window.workload.id}, {window.clients} clients, pass {window.pass_no}): "
            f"{problem}; the {written} window(s) already written are kept; rerun the same command to resume"
        ) from error


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
    )


def window_line(window: Window, row: dict, remaining_s: float) -> str:
    """What a log file is told of a window once it is measured: its point, its throughput (or that it
    failed) and how long the run has left."""
    # An aborted window may still carry pgbench's tps line: it is a failure, not a figure.
    outcome = f"{row['tps']:,.0f} tps" if row["ok"] and row["tps"] is not None else "failed"
    eta = f"{remaining_s / 60:.0f} min" if remaining_s >= 60 or remaining_s == 0 else "under a minute"
    return f"{window.workload.id} c={window.clients} pass {window.pass_no}: {outcome}; ETA {eta}"


def restarts_poolers(plan: Plan, running_pass: int | None, window: Window) -> bool:
    """Whether the poolers start afresh before this window: a spec whose poolers start per pass, at the
    first window of a pass other than the one they were started for (None: just started, by the bench)."""
    return plan.spec.pooler_start == "per-pass" and running_pass not in (None, window.pass_no)


def pending_windows(plan: Plan, machine_id: str) -> int:
    """How many windows a run of the plan would measure now (all of them, unless a run can resume), its
    refinement counted at the most its budget allows."""
    windows = plan.windows()
    folder = experiment_results_dir(machine_id, plan.experiment)
    refinement = refinement_of(plan)
    results = find_resumable(folder, plan.profile_name, plan.spec_hash, len(windows), _unfinished(refinement))
    if results is None:
        return len(windows) + plan.refinement_windows()
    done = results.done_keys()
    added = sum(1 for row in results.rows if row.get("added_for"))
    grid_left = sum(1 for window in windows if window.key not in done)
    return grid_left + max(0, plan.refinement_windows() - added)


def _unfinished(refinement: Refinement | None) -> Callable[[ResultsFile], bool]:
    """Whether a results file still has refinement to measure (connlab.lab.results_file.find_resumable)."""
    return lambda results: not refinement_done(results.rows, refinement)


def run_provenance(facts: dict[str, object], calibration: Calibration | None) -> dict[str, object]:
    """What every row of this run session carries of its machine (connlab.contract.provenance): the
    fingerprint's digest as machine.yaml's fields give it, the kernel, and the calibration at its start."""
    return {
        "kernel": facts["kernel"],
        "machine_fingerprint": fingerprint_digest(facts),
        "run_calibration_tps": calibration.tps if calibration else None,
        "run_calibration_spread_tps": calibration.spread if calibration else None,
    }


# The plan's windows still to measure, each with its number in the plan.
Numbered = list[tuple[int, Window]]


@dataclass(frozen=True)
class _Bar:
    """The progress bar's tasks: this experiment's, and a run-all's across experiments (None: no run-all)."""

    progress: Progress
    task: TaskID
    all_task: TaskID | None


class _Sweep:
    """The measuring of one window after another into the results file, with the progress bar and the log
    line: the grid's windows and refinement's alike."""

    def __init__(
        self,
        plan: Plan,
        machine_id: str,
        results: ResultsFile,
        benches: Benches,
        provenance: dict[str, object],
        console: Console,
        overall: Overall | None,
        planned: int,
    ) -> None:
        self.plan, self.machine_id, self.results, self.benches = plan, machine_id, results, benches
        self.provenance, self.console, self.overall, self.planned = provenance, console, overall, planned
        self.running_pass: int | None = None  # the pass the poolers were started for: None, by the bench

    def run(self, todo: Numbered, refinement: Refinement | None, unavailable: set[str]) -> None:
        """The grid's windows still to measure, then refinement's, under one progress bar whose total counts
        refinement at the most its budget allows."""
        plan, results, overall = self.plan, self.results, self.overall
        with _progress(self.console) as progress:
            added = sum(1 for row in results.rows if row.get("added_for"))
            refining = max(0, plan.refinement_windows() - added) if refinement else 0
            task = progress.add_task(f"{plan.experiment} ({plan.profile_name})", total=len(todo) + refining)
            all_task = progress.add_task(overall.line(), total=None) if overall else None
            bar = _Bar(progress, task, all_task)
            self.measure_grid(bar, todo)
            if refinement is not None:
                self.refine(bar, refinement, unavailable)
            self.release_unused(bar)

    def measure_grid(self, bar: _Bar, todo: Numbered) -> None:
        """The plan's windows, in pass order."""
        for number, window in todo:
            raise_if_interrupted()  # a signal whose KeyboardInterrupt was dropped stops the sweep here
            description = (
                f"{self.plan.experiment} pass {window.pass_no} {window.workload.id} c={window.clients}"
            )
            self.measure(bar, number, window, description)

    def refine(self, bar: _Bar, refinement: Refinement, unavailable: set[str]) -> None:
        """Refinement's windows (connlab.lab.refine), a round at a time, each decided from the rows written,
        until it asks for none; a pooler not on this machine is asked nothing."""
        while True:
            extras = [e for e in next_points(self.results.rows, refinement) if e.workload not in unavailable]
            if not extras:
                return
            for extra in extras:
                raise_if_interrupted()
                self.measure_extra(bar, extra)

    def release_unused(self, bar: _Bar) -> None:
        """The budget is a bound: what refinement did not need is not left on the bar, nor in the ETA."""
        progress = bar.progress
        unused = progress.tasks[0].remaining or 0
        progress.update(bar.task, total=progress.tasks[0].completed)
        if self.overall:
            self.overall.advance(unused * window_estimate_s(self.plan))

    def measure_extra(self, bar: _Bar, extra: Extra) -> None:
        """A window refinement asked for, numbered after the plan's and the extras already written."""
        added = sum(1 for row in self.results.rows if row.get("added_for"))
        if extra.key in self.results.done_keys():
            raise LabError(f"refinement asked again for a window already measured: {extra}")
        window = window_of(self.plan, extra)
        description = f"{self.plan.experiment} {extra.workload} {extra.describe()}"
        number = self.planned + added + 1
        self.measure(bar, number, window, description, extra)

    def measure(
        self, bar: _Bar, number: int, window: Window, description: str, extra: Extra | None = None
    ) -> None:
        """One window measured (or recorded as its pooler's unsupported feature) and its row appended; the
        bar, and a log file's line, told."""
        plan, overall, progress = self.plan, self.overall, bar.progress
        progress.update(bar.task, description=description)
        bench = self.benches.activate(window.workload.postgres)
        if restarts_poolers(plan, self.running_pass, window):
            bench.restart_poolers()
        self.running_pass = window.pass_no
        reason = bench.unsupported.get(window.workload.target)
        if reason is not None:
            row = unsupported_row(bench, plan, window, number, reason)
        else:
            row = _measure_or_stop(bench, plan, window, number, len(self.results.rows))
        added_for = extra.added_for if extra else None
        identity = {"run_id": self.results.run_id, "machine": self.machine_id}
        self.results.append({**identity, **row, "added_for": added_for, **self.provenance})
        if not row["ok"]:
            progress.console.print(
                f"  window {number}: {row['workload']} c={row['clients']} failed: {row['error']}"
            )
        progress.advance(bar.task)
        if overall and bar.all_task is not None:
            overall.advance(window_estimate_s(plan))
            progress.update(bar.all_task, description=overall.line())
        if not self.console.is_terminal:
            # A log file gets no live bar; one line per window keeps the ETA visible there.
            left = progress.tasks[0].remaining or 0
            remaining = progress.tasks[0].time_remaining
            if remaining is None:
                # Until the pace is known (a run of a few long windows), what the spec says.
                remaining = left * window_estimate_s(plan)
            across = f" ({overall.line()})" if overall else ""
            place = f"{number}/{self.planned}" if extra is None else f"{number}/{self.planned} + refining"
            why = f" ({extra.describe()})" if extra else ""
            self.console.print(
                f"[{place}] {window_line(window, row, remaining)}{why}{across}",
                highlight=False,
            )


def run_sweep(
    plan: Plan,
    machine_id: str,
    console: Console | None = None,
    overall: Overall | None = None,
    opener: BenchOpener = open_bench,
    only_workloads: Sequence[str] = (),
) -> Path:
    """Run (or resume) the plan; return the CSV path. With `overall`, the progress also covers the other
    experiments of a run-all. opener: what opens the bench, a throwaway cluster's (open_bench) or a named
    server's (connlab.lab.remote.bench). only_workloads: measure these workloads' windows now and leave the
    others to a later run of the same command without it, which resumes the same file (a full profile of
    several hours can be measured one workload at a time)."""
    console = console or Console(stderr=True)
    _refuse_unknown_names(plan, machine_id, only_workloads)
    windows = plan.windows()
    refinement = refinement_of(plan, only_workloads)
    results = _resume(plan, machine_id, windows, console)
    todo = _windows_to_measure(windows, results, only_workloads, console)
    LAB_DIR.mkdir(parents=True, exist_ok=True)
    with open_benches(plan, f"{plan.experiment}-{results.run_id}", opener) as benches:
        bench = benches.activate(plan.spec.workloads[0].postgres)
        provenance = _record_machine(plan, machine_id, bench, console)
        for reason in bench.unavailable.values():
            console.print(f"[yellow]{reason}[/]: its windows are left out of this run", highlight=False)
        for reason in bench.unsupported.values():
            console.print(f"[yellow]{reason}[/]: its windows are recorded as such", highlight=False)
        left_out = [(n, w) for n, w in todo if w.workload.target in bench.unavailable]
        todo = [(n, w) for n, w in todo if w.workload.target not in bench.unavailable]
        if overall:
            overall.advance(setup_estimate_s(plan) + len(left_out) * window_estimate_s(plan))
        sweep = _Sweep(plan, machine_id, results, benches, provenance, console, overall, len(windows))
        sweep.run(todo, refinement, set(bench.unavailable))
    if left_out:
        _refuse_left_out(left_out, bench, results)
    return results.path


def _refuse_unknown_names(plan: Plan, machine_id: str, only_workloads: Sequence[str]) -> None:
    """A workload the plan does not have, a machine id that is no safe folder name, or the folder of another
    machine: refused before anything starts."""
    known = [workload.id for workload in plan.spec.workloads]
    unknown = [name for name in only_workloads if name not in known]
    if unknown:
        raise LabError(
            f"{plan.experiment} has no workload {', '.join(map(repr, unknown))}; "
            f"its workloads: {', '.join(known)}"
        )
    if not re.fullmatch(SAFE_ID_PATTERN, machine_id):
        raise LabError(
            f"machine id {machine_id!r} is not a safe folder name: use lower-case letters, digits, "
            f"'.', '_' or '-' (set MACHINE or --machine)"
        )
    # connlab.cli chose the id so; a caller that names one itself is held to the same rule.
    machine.refuse_another_machines_folder(machine_id)


def _resume(plan: Plan, machine_id: str, windows: list[Window], console: Console) -> ResultsFile:
    """The results file this run writes: an unfinished run's of the same profile and spec, resumed (its
    refinement counted whole, whatever workloads this run measures), else a new one."""
    folder = experiment_results_dir(machine_id, plan.experiment)
    results = find_resumable(
        folder, plan.profile_name, plan.spec_hash, len(windows), _unfinished(refinement_of(plan))
    )
    if results is None:
        return ResultsFile(new_run_path(folder, plan.profile_name))
    console.print(f"resuming {results.path} ({len(results.rows)} of {len(windows)} windows done)")
    return results


def _windows_to_measure(
    windows: list[Window], results: ResultsFile, only_workloads: Sequence[str], console: Console
) -> Numbered:
    """The plan's windows the results file does not hold yet, numbered in the plan; with only_workloads,
    those workloads' only, the others named as left to a later run."""
    done = results.done_keys()
    todo = [(number, window) for number, window in enumerate(windows, 1) if window.key not in done]
    later = [window for _, window in todo if only_workloads and window.workload.id not in only_workloads]
    if later:
        todo = [(number, window) for number, window in todo if window.workload.id in only_workloads]
        console.print(
            f"measuring {', '.join(only_workloads)} only: {len(later)} window(s) of "
            f"{', '.join(dict.fromkeys(window.workload.id for window in later))} are left to a later run "
            "of the same command without --workload, which resumes this file",
            highlight=False,
            soft_wrap=True,
        )
    return todo


def _record_machine(plan: Plan, machine_id: str, bench: Bench, console: Console) -> dict[str, object]:
    """machine.yaml written from the bench just opened (with this run's calibration where it is measured,
    warned where it lies off the folder's), and what every row of this run carries of the machine
    (run_provenance)."""
    facts = machine.collect(
        bench.cluster.version, bench.budget.method, plan.profile_name, bench.cluster.bindir
    )
    # A run over several PostgreSQL versions would calibrate on one of them, not necessarily the
    # machine's own: that figure says nothing of the machine, so it is neither measured nor held to the
    # folder's.
    calibration = None if plan.spec.server.versions else calibrate(bench, plan)
    if calibration is not None and plan.profile_name in HELD_PROFILES:
        off = calibration_off(machine_id, calibration)
        if off:
            console.print(f"[yellow]warning[/]: {off}", highlight=False, soft_wrap=True)
        facts["calibration_tps"], facts["calibration_spread_tps"] = calibration.tps, calibration.spread
    provenance = run_provenance(facts, calibration)
    facts.update(bench.machine_facts())
    machine.write_machine_file(machine_id, facts, keep_postgres=bool(plan.spec.server.versions))
    return provenance


def _refuse_left_out(left_out: Numbered, bench: Bench, results: ResultsFile) -> NoReturn:
    """Once the rest is measured: the windows whose pooler is not on this machine, named in one error."""
    # Two instances of one missing kind (a pooler with and without a setting) say it once.
    reasons = list(dict.fromkeys(bench.unavailable.values()))
    raise PoolerUnavailable(
        f"{len(left_out)} window(s) not measured, their pooler cannot run here: "
        f"{'; '.join(reasons)}. The {len(results.rows)} window(s) measured are kept "
        f"in {results.path}; rerun the same command once it is installed to measure the rest",
        reasons=reasons,
    )
