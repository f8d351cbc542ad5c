"""What the kept database's tables and the facts files were made from, so that a build recomputes only what
changed: each experiment's basis (code, specs, its SQL, published figures) and each machine's inputs (its
machine.yaml and its files' status), recorded in main.aggregate_state; the same for the articles' facts,
and the key of each machine's USL fits."""

from __future__ import annotations

from pathlib import Path

import duckdb

from connlab.analysis.bulk import insert_rows
from connlab.analysis.fits import fits_code, fitted_schemas
from connlab.contract.cache import digest, source_digest
from connlab.contract.names import PUBLISHED_PREFIX
from connlab.data.main_tables import POOLER_FACTS_MODULE
from connlab.paths import AGGREGATE_SQL_NAME, ARTICLES_SRC_DIR, EXPERIMENT_FILE_NAME, EXPERIMENTS_DIR

# What each experiment's tables were computed from, kept in the database between builds: the experiment's
# basis (code, spec, SQL, published figures) under machine '', and each machine's inputs under its id.
STATE_TABLE = "main.aggregate_state"
DATA_CODE = Path(__file__).resolve().parent
CONTRACT_CODE = DATA_CODE.parent / "contract"
# The data stage's part of each pooler's folder: the main tables it adds (connlab.data.main_tables).
POOLER_FACTS_CODE = DATA_CODE.parent / "poolers"


def experiment_basis(experiment: str, common: str) -> str:
    folder = EXPERIMENTS_DIR / experiment
    return digest(common, (folder / AGGREGATE_SQL_NAME).read_text(encoding="utf-8"))


def common_basis(results_dir: Path) -> str:
    """What every experiment's tables depend on besides its own SQL and each machine's rows: the code of the
    data stage (the pooler folders' facts.py included) and the contract, every spec (main.pooler_settings
    reads them all), the published figures and DuckDB's version."""
    pooler_facts = POOLER_FACTS_CODE.glob(f"*/{POOLER_FACTS_MODULE}.py")
    code = sorted([*DATA_CODE.glob("*.py"), *CONTRACT_CODE.rglob("*.py"), *pooler_facts])
    specs = sorted(EXPERIMENTS_DIR.glob(f"*/{EXPERIMENT_FILE_NAME}"))
    published = sorted(path for path in results_dir.glob(f"{PUBLISHED_PREFIX}*/*") if path.is_file())
    return digest(
        duckdb.__version__,
        source_digest(*code, *specs, *published),
        *(str(path.relative_to(results_dir)) for path in published),
    )


def machine_inputs(machines: dict[str, str], files: dict[str, list[tuple[str, str]]]) -> dict[str, str]:
    """Each machine with rows of the experiment (files: its CSVs with their status, per machine): the key of
    its machine.yaml (machines: each one's canonical text) and of its files' status."""
    return {
        machine: digest(machines.get(machine, "null"), *(status for _, status in entries))
        for machine, entries in files.items()
    }


def previous_state(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, str]]:
    con.execute(
        f"CREATE TABLE IF NOT EXISTS {STATE_TABLE} (experiment VARCHAR, machine VARCHAR, key VARCHAR)"
    )
    state: dict[str, dict[str, str]] = {}
    for experiment, machine, key in con.execute(f"SELECT * FROM {STATE_TABLE}").fetchall():
        state.setdefault(experiment, {})[machine] = key
    return state


def forget_state(con: duckdb.DuckDBPyConnection, experiment: str, *, entirely: bool = False) -> None:
    """Forget the experiment's state before its tables change: its basis is enough, since a state without one
    matches no basis and the next aggregation computes the experiment whole. entirely: every entry (an
    experiment that is gone)."""
    basis_only = "" if entirely else " AND machine = ''"
    con.execute(f"DELETE FROM {STATE_TABLE} WHERE experiment = ?{basis_only}", [experiment])


def record_state(
    con: duckdb.DuckDBPyConnection, experiment: str, state: dict[str, str], previous: dict[str, str]
) -> None:
    """Record the experiment's new state once its tables and files are written, over the one read at the start
    (previous): only the entries that differ are written, and the basis always, so that adding one machine
    writes one machine's entries, not every machine's for every experiment."""
    differ = {machine: key for machine, key in state.items() if machine == "" or previous.get(machine) != key}
    replaced = sorted(differ.keys() | (previous.keys() - state.keys()))
    con.execute(
        f"DELETE FROM {STATE_TABLE} WHERE experiment = ? AND machine IN (SELECT unnest(?::VARCHAR[]))",
        [experiment, replaced],
    )
    insert_rows(con, STATE_TABLE, [(experiment, machine, key) for machine, key in differ.items()])


def fit_keys(states: dict[str, dict[str, str]]) -> dict[str, str]:
    """Each machine's key of what its USL fits are made from: the fitting code, and each fitted experiment's
    basis and the machine's inputs to it (its windows there come from nothing else)."""
    fitted = sorted(name for name in states if name.replace("-", "_") in fitted_schemas())
    code = fits_code()
    machines = {machine for name in fitted for machine in states[name] if machine}
    return {
        machine: digest(
            code, *(f"{name}\0{states[name]['']}\0{states[name].get(machine, '')}" for name in fitted)
        )
        for machine in machines
    }


# The aggregation state's entry for the articles' facts files (no experiment has this name).
FACTS_STATE = "(facts)"
ANALYSIS_CODE = DATA_CODE.parent / "analysis"


def facts_state(
    common: str, states: dict[str, dict[str, str]], machines: dict[str, str], measured: set[str]
) -> dict[str, str]:
    """What the articles' facts and claims files were written from: under '', their queries and claims, the
    fitting code and every experiment's basis; under each measured machine, its inputs to every experiment
    and its machine row."""
    queries = sorted([*ARTICLES_SRC_DIR.glob("*.facts.sql"), *ARTICLES_SRC_DIR.glob("*.claims.yaml")])
    basis = digest(
        common,
        source_digest(*queries, *sorted(ANALYSIS_CODE.glob("*.py"))),
        *(str(path.name) for path in queries),
        *(f"{experiment}\0{state['']}" for experiment, state in sorted(states.items())),
    )
    return {
        "": basis,
        **{
            machine: digest(
                machines.get(machine, "null"),
                *(f"{experiment}\0{state.get(machine, '')}" for experiment, state in sorted(states.items())),
            )
            for machine in sorted(measured)
        },
    }


def changed_machines(state: dict[str, str], previous: dict[str, str] | None) -> set[str] | None:
    """The measured machines whose facts must be written again; None: all (the basis changed, or no state
    was kept: a first build, or one interrupted while writing facts)."""
    if not previous or previous.get("") != state[""]:
        return None
    return {
        machine
        for machine in state.keys() | previous.keys()
        if machine and state.get(machine) != previous.get(machine)
    }
