"""Raw CSVs -> DuckDB tables -> build/data: the tables in build/data/connlab.duckdb, facts files per article.

This module runs the data stage in order; each step lives in a module of its own: the result files found
(connlab.data.result_files), the main tables (main_tables), each experiment's tables (experiment_tables),
brought up to date incrementally (aggregate_state, bring_tables), the USL fits (connlab.analysis.fits), the
facts files (facts_export), the claims' verdicts (claims) and the short answers (answers). The DuckDB file
is kept between builds, so that adding one machine recomputes one machine; it is where the experiments'
tables are read (`duckdb build/data/connlab.duckdb`, one schema per experiment).
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable, Iterable
from contextlib import suppress
from pathlib import Path

import duckdb

from connlab.analysis.fits import fit_all
from connlab.contract.cache import canonical_json, digest
from connlab.contract.experiment import experiment_names
from connlab.contract.files import write_if_changed
from connlab.contract.names import CLAIMS_SUBDIR, MACHINES_JSON
from connlab.data.aggregate_state import (
    FACTS_STATE,
    changed_machines,
    common_basis,
    experiment_basis,
    facts_state,
    fit_keys,
    forget_state,
    machine_inputs,
    previous_state,
    record_state,
)
from connlab.data.answers.write import write_answers
from connlab.data.bring_tables import EXPERIMENT_WORKERS, bring_up_to_date
from connlab.data.claims import judge_claims, measured_runs
from connlab.data.cursor_pool import CursorPool
from connlab.data.facts_export import export_facts
from connlab.data.main_tables import (
    load_machines,
    register_machines,
    register_measured,
    register_pooler_settings,
    register_pooler_tables,
    register_published,
)
from connlab.data.result_files import result_files_by_experiment
from connlab.data.verdict_conditions import machine_facts
from connlab.data.views import SHARED_MACROS
from connlab.paths import (
    AGGREGATE_SQL_NAME,
    ARTICLES_SRC_DIR,
    CACHE_DIR,
    DATA_DIR,
    EXPERIMENTS_DIR,
    FACTS_DIR,
    PAGES_SRC_DIR,
    RESULTS_DIR,
)

DATABASE_FILE = "connlab.duckdb"
# Each machine.yaml as read, by the file's status (load_machines).
MACHINE_FILES_CACHE = "machine-files.json"
# A database whose experiments were computed from no rows, named by what they were computed from
# (_seed_database).
SEEDS_DIR = CACHE_DIR / "aggregation-seeds"
# The seeds kept, the most recently used: one per code and published figures (the tests aggregate folders
# with several sets of published figures), where any older code's would never match again.
SEEDS_KEPT = 8


def _open_kept(database: Path) -> duckdb.DuckDBPyConnection:
    """The database kept from the last build; a file DuckDB cannot open (another version's, or damaged) is
    started again from nothing, since everything in it can be computed again."""
    try:
        return duckdb.connect(str(database))
    except duckdb.Error:
        database.unlink(missing_ok=True)
        Path(f"{database}.wal").unlink(missing_ok=True)
        return duckdb.connect(str(database))


def _now(task: Callable[[], None]) -> None:
    task()


def _register_main_tables(
    con: duckdb.DuckDBPyConnection, machines: list[dict[str, object]], results_dir: Path
) -> None:
    """The main tables every experiment's SQL may read, but main.measured (connlab.data.main_tables)."""
    register_machines(con, machines)
    register_pooler_tables(con)
    register_published(con, results_dir)
    register_pooler_settings(con)


def _seed_database(
    database: Path, bases: dict[str, str], results_dir: Path, published: list[dict[str, object]]
) -> None:
    """Start a database that does not exist yet from a copy of one whose experiments were computed from no
    rows beside the published folders (an experiment may set a source's figures beside its own; they are
    part of the bases), kept in SEEDS_DIR by the experiments' bases. The aggregation then computes only the
    experiments a machine has rows of, each by the incremental path, instead of every experiment whole: a
    results folder of a few machines has rows of few experiments, and the tests aggregate many such
    folders. The seed is made by the same code, once per bases; one another process removed meanwhile is
    made again."""
    key = digest(*(part for name, basis in sorted(bases.items()) for part in (name, basis)))
    seed = SEEDS_DIR / f"{key}.duckdb"
    try:
        _copy_whole(seed, database)
    except FileNotFoundError:
        pass
    else:
        with suppress(FileNotFoundError):
            os.utime(seed)  # the most recently used are kept
        return
    SEEDS_DIR.mkdir(parents=True, exist_ok=True)
    partial = seed.with_name(f"{seed.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with duckdb.connect(str(partial)) as con:
            _register_main_tables(con, published, results_dir)
            previous_state(con)
            bring_up_to_date(con, {name: {"": basis} for name, basis in bases.items()}, {}, {})
        _copy_whole(partial, database)
        partial.replace(seed)
    finally:
        partial.unlink(missing_ok=True)
    by_use = sorted(SEEDS_DIR.glob("*.duckdb"), key=_modified, reverse=True)
    for unused in by_use[SEEDS_KEPT:]:
        unused.unlink(missing_ok=True)


def _copy_whole(source: Path, target: Path) -> None:
    """The copy appears whole or not at all: a copy interrupted half-way must not be a database."""
    partial = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        shutil.copyfile(source, partial)
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)


def _modified(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return 0.0  # removed by another process meanwhile


def aggregate_all(
    results_dir: Path = RESULTS_DIR,
    out_dir: Path = DATA_DIR,
    later: Callable[[Callable[[], None]], object] = _now,
) -> Path:
    """Bring build/data up to date with results/; return the DuckDB file the claims and articles can query.

    The database is kept between builds: an experiment whose SQL, spec, code and published figures are
    unchanged has only the rows of the machines whose files changed computed again (adding one machine to a
    thousand recomputes one machine). The main tables, fits, facts and claims are made again every time.
    later: what runs the last task, closing the database (DuckDB writes its log into the file), where the
    caller has a later stage to run meanwhile. Everything else is written when this returns: the machines,
    facts and claims, which are all that the site's stages read.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    database = out_dir / DATABASE_FILE
    machines = load_machines(results_dir, out_dir / MACHINE_FILES_CACHE)
    # Each machine.yaml's canonical text, once: every experiment's key and the facts' key include it.
    texts = {str(machine["id"]): canonical_json(machine) for machine in machines}
    common = common_basis(results_dir)
    bases = {
        experiment: experiment_basis(experiment, common)
        for experiment in experiment_names()
        if (EXPERIMENTS_DIR / experiment / AGGREGATE_SQL_NAME).exists()
    }
    if not database.exists():
        _seed_database(database, bases, results_dir, [m for m in machines if m["published"]])
    con = _open_kept(database)
    try:
        previous = previous_state(con)
        for gone in sorted(previous.keys() - set(experiment_names()) - {FACTS_STATE}):
            con.execute(f"DROP SCHEMA IF EXISTS {gone.replace('-', '_')} CASCADE")
            forget_state(con, gone, entirely=True)
        _register_main_tables(con, machines, results_dir)
        files = result_files_by_experiment(results_dir)
        states: dict[str, dict[str, str]] = {}
        for experiment, basis in bases.items():
            states[experiment] = {"": basis, **machine_inputs(texts, files.get(experiment, {}))}
        bring_up_to_date(con, states, previous, files)
        _remove_table_csvs(out_dir, states.keys() | previous.keys())
        register_measured(con)
        # The facts queries write a ratio's range as the experiments' SQL does (views.SHARED_MACROS, made
        # there in each experiment's schema).
        con.execute(f"SET schema = 'main'; {SHARED_MACROS}")
        fit_all(con, fit_keys(states))
        write_if_changed(out_dir / MACHINES_JSON, json.dumps(machines, sort_keys=True))
        # Articles and pages alike may name the figures they quote (the Machines page compares machines).
        facts_dir = out_dir / FACTS_DIR.relative_to(DATA_DIR)
        measured = {str(m["id"]) for m in machines if not m["published"]}
        # An article's facts are split by machine (each machine's page reads its own), and only the machines
        # whose inputs changed since they were last written are written again; a page's (the Machines page
        # compares every machine) stay whole.
        facts_key = facts_state(common, states, texts, measured)
        changed = changed_machines(facts_key, previous.get(FACTS_STATE))
        forget_state(con, FACTS_STATE)
        # Facts and claims read the tables and write files of their own: each article's claims, and each
        # page's facts, are made on a worker while the articles' facts are exported here (they share the
        # table of counts, which one cursor at a time writes).
        read = (measured_runs(con), machine_facts(con))
        with CursorPool(con, EXPERIMENT_WORKERS) as pool:
            judging = [
                pool.submit(
                    judge_claims, claims_file, [str(m["id"]) for m in machines], out_dir / CLAIMS_SUBDIR,
                    [str(m["id"]) for m in machines if not m["published"]], changed, read,
                )
                for claims_file in sorted(ARTICLES_SRC_DIR.glob("*.claims.yaml"))
            ]  # fmt: skip
            jobs = [
                pool.submit(export_facts, facts_sql, facts_dir)
                for facts_sql in sorted(PAGES_SRC_DIR.glob("*.facts.sql"))
            ]
            for facts_sql in sorted(ARTICLES_SRC_DIR.glob("*.facts.sql")):
                export_facts(con, facts_sql, facts_dir, measured, changed)
            for job in jobs:
                job.result()
            judged = {job.result().path.stem: job.result().payload for job in judging}
        # The articles' short answers and each machine's pool size, from the facts just written and the
        # verdicts as they were written (not parsed again from the files).
        write_answers(out_dir, facts_dir, out_dir / CLAIMS_SUBDIR, sorted(measured), results_dir, judged)
        record_state(con, FACTS_STATE, facts_key, previous.get(FACTS_STATE, {}))
    except BaseException:
        con.close()
        raise

    later(con.close)
    return database


def _remove_table_csvs(out_dir: Path, experiments: Iterable[str]) -> None:
    """The experiments' tables as CSV files (build/data/<experiment>/), which older builds wrote on every
    aggregation and no page read: the tables are in the database."""
    for experiment in experiments:
        if experiment != FACTS_STATE and (out_dir / experiment).is_dir():
            shutil.rmtree(out_dir / experiment)
