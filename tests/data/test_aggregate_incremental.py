"""Aggregation kept between builds (connlab.data.aggregate): adding, editing or removing a machine recomputes
that machine's rows only, and what it writes is the same, file for file and table for table, as aggregating
everything anew.

This is also the check that every experiment's SQL keeps to the rule incremental aggregation rests on: each
row of its tables depends on one machine's windows (and the main tables), never on another machine's.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import duckdb
import pytest

from connlab.analysis import fits
from connlab.contract.experiment import experiment_names
from connlab.data import aggregate, aggregate_state, bring_tables, claims
from connlab.data.aggregate import aggregate_all
from connlab.data.answers.inputs import ANSWER_INPUTS_FILE
from connlab.interrupts import INTERRUPTED_EXIT_STATUS
from connlab.paths import AGGREGATE_SQL_NAME, EXPERIMENTS_DIR, REPO_ROOT, RESULTS_DIR

SOURCE_MACHINE = "amd-epyc-2c-24g"


def _bench_module() -> ModuleType:
    """scripts/bench/many_machines.py, whose add_machine makes the benchmark's synthetic machines."""
    path = REPO_ROOT / "scripts" / "bench" / "many_machines.py"
    spec = importlib.util.spec_from_file_location("many_machines", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _add_machine(results: Path) -> str:
    """A copy of a measured machine under a new id, its throughput scaled (the benchmark's own)."""
    return str(_bench_module().add_machine(results, 1, SOURCE_MACHINE))


def _outputs(data: Path) -> dict[str, bytes]:
    """Every file aggregation wrote but the database and the answers' cache, whose keys are the facts files'
    status (facts, claims, answers, machines); and every table of the experiments' schemas in the database,
    its rows sorted, as CSV text."""
    files = {
        str(path.relative_to(data)): path.read_bytes()
        for path in sorted(data.rglob("*"))
        if path.is_file()
        and not path.name.startswith(aggregate.DATABASE_FILE)
        and path.name != ANSWER_INPUTS_FILE
    }
    return {**files, **_tables(data / aggregate.DATABASE_FILE)}


def _tables(database: Path) -> dict[str, bytes]:
    """Each experiment's tables, by schema.table: the rows in order, written as DuckDB writes CSV."""
    schemas = [name.replace("-", "_") for name in experiment_names()]
    tables: dict[str, bytes] = {}
    with duckdb.connect(str(database), read_only=True) as con:
        listed = con.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            f"WHERE table_schema IN ({', '.join(repr(schema) for schema in schemas)}) ORDER BY ALL"
        ).fetchall()
        for schema, table in listed:
            rows = con.execute(f"SELECT * FROM {schema}.{table} ORDER BY ALL").fetchall()
            tables[f"{schema}.{table}"] = repr(rows).encode()
    return tables


@pytest.fixture
def results(tmp_path: Path) -> Path:
    copied = tmp_path / "results"
    shutil.copytree(RESULTS_DIR, copied)
    return copied


@pytest.fixture
def recomputed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(experiment, how) for every experiment aggregate_all brought up to date."""
    seen: list[tuple[str, str]] = []
    bring = bring_tables.bring_tables

    def watched(con, experiment, *args, **kwargs):  # type: ignore[no-untyped-def]
        brought = bring(con, experiment, *args, **kwargs)
        seen.append((experiment, "unchanged" if brought is None else brought.how))
        return brought

    monkeypatch.setattr(bring_tables, "bring_tables", watched)
    return seen


@pytest.fixture
def unseeded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every aggregation into a new folder computes each experiment whole, without a seed database."""
    monkeypatch.setattr(aggregate, "_seed_database", lambda *args: None)


@pytest.mark.slow
@pytest.mark.usefixtures("unseeded")
def test_adding_then_removing_a_machine_matches_aggregating_anew(
    results: Path, tmp_path: Path, recomputed: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = tmp_path / "kept"
    aggregate_all(results_dir=results, out_dir=kept)
    before = _outputs(kept)
    assert {how for _, how in recomputed} == {"computed"}

    changed: list[set[str]] = []
    update = bring_tables.update_machines

    def watched_update(con, experiment, machines, *args, **kwargs):  # type: ignore[no-untyped-def]
        changed.append(set(machines))
        return update(con, experiment, machines, *args, **kwargs)

    monkeypatch.setattr(bring_tables, "update_machines", watched_update)
    facts_for: list[set[str] | None] = []
    export = aggregate.export_facts

    def watched_export(con, facts_sql, out_dir, measured=None, changed=None):  # type: ignore[no-untyped-def]
        if measured is not None:
            facts_for.append(changed)
        return export(con, facts_sql, out_dir, measured, changed)

    monkeypatch.setattr(aggregate, "export_facts", watched_export)
    kept_verdicts: list[bool] = []
    check = claims.check_claim

    def watched_check(*args, **kwargs):  # type: ignore[no-untyped-def]
        kept_verdicts.append(args[-1] is not None if len(args) > 5 else kwargs.get("kept") is not None)
        return check(*args, **kwargs)

    monkeypatch.setattr(claims, "check_claim", watched_check)
    windows_of: list[list[str] | None] = []
    windows = fits._windows

    def watched_windows(con, schema, machines=None):  # type: ignore[no-untyped-def]
        windows_of.append(machines)
        return windows(con, schema, machines)

    monkeypatch.setattr(fits, "_windows", watched_windows)
    new_machine = _add_machine(results)
    recomputed.clear()
    aggregate_all(results_dir=results, out_dir=kept)
    # Each article's facts are written again for the new machine alone.
    assert facts_for and all(machines == {new_machine} for machines in facts_for)
    measured_by_source = {path.name for path in (results / SOURCE_MACHINE).iterdir() if path.is_dir()}
    assert {e for e, how in recomputed if how == "updated"} == measured_by_source
    assert "computed" not in {how for _, how in recomputed}
    assert changed and all(machines == {new_machine} for machines in changed)
    # The other machines' verdicts were read back.
    assert kept_verdicts.count(True) > len(kept_verdicts) / 2
    # Only the new machine's windows were read to fit.
    assert windows_of and all(machines == [new_machine] for machines in windows_of)

    anew = tmp_path / "anew"
    aggregate_all(results_dir=results, out_dir=anew)
    with_new = _outputs(kept)
    assert with_new == _outputs(anew)
    assert with_new != before and any(new_machine.encode() in text for text in with_new.values())

    shutil.rmtree(results / new_machine)
    aggregate_all(results_dir=results, out_dir=kept)
    assert _outputs(kept) == before


@pytest.mark.slow
def test_editing_a_machine_replaces_its_rows(
    results: Path, tmp_path: Path, recomputed: list[tuple[str, str]]
) -> None:
    """An edited machine has rows already: they are replaced, not kept beside the new ones."""
    new_machine = _add_machine(results)
    kept = tmp_path / "kept"
    aggregate_all(results_dir=results, out_dir=kept)
    edited = sorted((results / new_machine / "clients-sweep").glob("*.csv"))[0]
    header, *rows = edited.read_text(encoding="utf-8").splitlines()
    # One window fewer: a row left behind by the update would show as a row the new aggregation lacks.
    edited.write_text("\n".join([header, *rows[:-1]]) + "\n", encoding="utf-8")
    recomputed.clear()
    aggregate_all(results_dir=results, out_dir=kept)
    assert dict(recomputed)["clients-sweep"] == "updated"
    anew = tmp_path / "anew"
    aggregate_all(results_dir=results, out_dir=anew)
    assert _outputs(kept) == _outputs(anew)


@pytest.mark.slow
def test_a_changed_basis_or_a_lost_state_computes_the_experiment_whole(
    results: Path, tmp_path: Path, recomputed: list[tuple[str, str]]
) -> None:
    kept = tmp_path / "kept"
    aggregate_all(results_dir=results, out_dir=kept)
    before = _outputs(kept)
    # A published figure is read by every experiment's basis.
    published = next(results.glob("published-*/published.csv"))
    published.write_text(published.read_text() + "\n", encoding="utf-8")
    recomputed.clear()
    aggregate_all(results_dir=results, out_dir=kept)
    assert {how for _, how in recomputed} == {"computed"}
    # An aggregation interrupted between changing tables and recording them leaves no state behind.
    with duckdb.connect(str(kept / aggregate.DATABASE_FILE)) as con:
        con.execute(f"DELETE FROM {aggregate_state.STATE_TABLE} WHERE experiment = 'clients-sweep'")
    recomputed.clear()
    aggregate_all(results_dir=results, out_dir=kept)
    assert dict(recomputed)["clients-sweep"] == "computed"
    assert {how for e, how in recomputed if e != "clients-sweep"} == {"unchanged"}
    assert _outputs(kept) == before


@pytest.mark.slow
def test_a_database_started_from_a_seed_is_the_one_computed_whole(
    results: Path, tmp_path: Path, recomputed: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new folder's database starts from the seed (the experiments computed from no rows): only the
    experiments with rows are brought up to date, by the incremental path, and every file and table is
    the one computing each experiment whole gives."""
    aggregate_all(results_dir=results, out_dir=tmp_path / "first")  # makes the seed, where none is kept
    recomputed.clear()
    seeded = tmp_path / "seeded"
    aggregate_all(results_dir=results, out_dir=seeded)
    with_rows = {path.parent.name for path in results.glob("*/*/*.csv")}
    assert {experiment for experiment, how in recomputed if how != "unchanged"} == with_rows
    assert {how for _, how in recomputed} == {"updated", "unchanged"}
    monkeypatch.setattr(aggregate, "_seed_database", lambda *args: None)
    whole = tmp_path / "whole"
    aggregate_all(results_dir=results, out_dir=whole)
    assert _outputs(seeded) == _outputs(whole)


@pytest.mark.slow
def test_a_database_that_cannot_be_opened_is_started_again(results: Path, tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / aggregate.DATABASE_FILE).write_bytes(b"not a database")
    aggregate_all(results_dir=results, out_dir=kept)
    assert "clients_sweep.points" in _tables(kept / aggregate.DATABASE_FILE)


def test_each_experiment_reads_its_own_schema_and_the_main_tables_only() -> None:
    """Experiments are brought up to date several at a time (bring_tables.bring_up_to_date): one whose SQL
    read another's tables could read them half updated."""
    schemas = {name.replace("-", "_") for name in experiment_names()}
    for sql in sorted(EXPERIMENTS_DIR.glob(f"*/{AGGREGATE_SQL_NAME}")):
        text = re.sub(r"--[^\n]*", "", sql.read_text(encoding="utf-8"))
        named = set(re.findall(r"\b([a-z_][a-z0-9_]*)\s*\.\s*[a-z_]", text)) & schemas
        assert named <= {sql.parent.name.replace("-", "_")}, f"{sql} reads {sorted(named)}"


# `connlab.cli aggregate`, marking (argv[1]) the first experiment whose tables were brought up to date, with
# no seed database.
MARKED_AGGREGATION = """
import sys
from pathlib import Path

from connlab.data import aggregate, bring_tables

marker = Path(sys.argv[1])
# Every experiment computed in the database itself, not in a seed made first (connlab.data.aggregate).
aggregate._seed_database = lambda *args: None
bring = bring_tables.bring_tables


def marked(*args, **kwargs):
    brought = bring(*args, **kwargs)
    marker.touch()
    return brought


bring_tables.bring_tables = marked
sys.argv = ["connlab", "aggregate"]
from connlab.cli import main

main()
"""


@pytest.mark.process
def test_ctrl_c_while_experiments_are_updated_leaves_what_the_next_run_completes(
    results: Path, tmp_path: Path
) -> None:
    """SIGINT to the command's process group, as a terminal's Ctrl-C sends it, while the experiments' workers
    bring their tables up to date: one line, exit status 130, and the next aggregation writes what
    aggregating anew writes."""
    build = tmp_path / "build"
    marker = tmp_path / "first-experiment-done"
    env = {**os.environ, "CONNLAB_RESULTS_DIR": str(results), "CONNLAB_BUILD_DIR": str(build)}
    command = subprocess.Popen(
        [sys.executable, "-c", MARKED_AGGREGATION, str(marker)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    # The first experiment's tables committed: the workers are in the middle of the experiments.
    while command.poll() is None and time.monotonic() < deadline and not marker.exists():
        time.sleep(0.005)
    os.killpg(command.pid, signal.SIGINT)
    _, stderr = command.communicate(timeout=60)
    assert command.returncode == INTERRUPTED_EXIT_STATUS, stderr
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1] == "interrupted; rerun the same command to finish"
    experiments = [path.parent.name for path in EXPERIMENTS_DIR.glob(f"*/{AGGREGATE_SQL_NAME}")]
    made = {table.split(".")[0] for table in _tables(build / "data" / aggregate.DATABASE_FILE)}
    committed = [name for name in experiments if name.replace("-", "_") in made]
    assert 0 < len(committed) < len(experiments), "the signal came before or after the experiments' updates"
    aggregate_all(results_dir=results, out_dir=build / "data")
    anew = tmp_path / "anew"
    aggregate_all(results_dir=results, out_dir=anew)
    assert _outputs(build / "data") == _outputs(anew)
