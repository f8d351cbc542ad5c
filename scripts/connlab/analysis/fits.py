"""USL fits over the aggregated data, as a DuckDB table (main.usl_fits) the articles and claims query.

Fitted per machine, experiment and workload, on the medians and on every pass, freely and with λ anchored to
the measured single-client throughput. Windows where pgbench saturated its own cores are left out: they
measure the client, not the server. A machine's fits are kept under build/cache by the hash of its curves and
the fitting code, so a rebuild fits only the machines whose measurements changed, and those all at once
(connlab.analysis.usl.fit_usl_many).
"""

from __future__ import annotations

import json
import os
import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import duckdb

from connlab.analysis import usl
from connlab.analysis.bulk import insert_rows
from connlab.analysis.usl import MIN_POINTS, UslFit, fit_usl, fit_usl_many
from connlab.contract import usl_formula
from connlab.contract.cache import (
    canonical_json,
    digest,
    read_json,
    source_digest,
    write_atomically,
)
from connlab.contract.experiment import experiment_names, load_experiment
from connlab.interrupts import WorkerPool
from connlab.paths import CACHE_DIR

FITS_CACHE_DIR = CACHE_DIR / "usl-fits"


def fitted_schemas() -> list[str]:
    """The schemas of the experiments whose experiment.yaml asks for a USL fit (`fit: usl`)."""
    return [name.replace("-", "_") for name in experiment_names() if load_experiment(name).fit == "usl"]


USL_FITS_TABLE = """
CREATE OR REPLACE TABLE main.usl_fits (
    machine VARCHAR, experiment VARCHAR, workload VARCHAR, basis VARCHAR, anchored BOOLEAN,
    lambda_tps DOUBLE, sigma DOUBLE, kappa DOUBLE, r_squared DOUBLE, points INTEGER, distinct_clients INTEGER,
    n_star DOUBLE, ceiling_tps DOUBLE, warning VARCHAR, single_client_tps DOUBLE
)
"""


@dataclass(frozen=True)
class Curve:
    clients: list[float]
    tps: list[float]


def _curves(
    con: duckdb.DuckDBPyConnection, sql: str, parameters: dict[str, object] | None = None
) -> dict[tuple[str, str], Curve]:
    """(machine, workload) -> its curve, from a query of machine, workload, clients, tps in that order."""
    rows = con.execute(sql, parameters or {}).fetchall()
    curves: dict[tuple[str, str], Curve] = defaultdict(lambda: Curve([], []))
    for machine, workload, clients, tps in rows:
        curves[(machine, workload)].clients.append(float(clients))
        curves[(machine, workload)].tps.append(float(tps))
    return dict(curves)


def _windows(
    con: duckdb.DuckDBPyConnection, schema: str, machines: list[str] | None = None
) -> dict[tuple[str, str], Curve]:
    """Every good, server-bound window of the experiment's best profile, per machine and workload, in a
    stable order (a machine's cache key must not change between builds); of these machines only, if given."""
    only = "" if machines is None else "AND list_contains($machines, machine) "
    return _curves(
        con,
        f"SELECT machine, workload, clients, tps FROM {schema}.windows "
        f"WHERE ok AND NOT client_saturated AND tps > 0 {only}ORDER BY machine, workload, clients, tps",
        {} if machines is None else {"machines": machines},
    )


def _medians(curve: Curve) -> Curve:
    by_clients: dict[float, list[float]] = defaultdict(list)
    for clients, tps in zip(curve.clients, curve.tps, strict=True):
        by_clients[clients].append(tps)
    ordered = sorted(by_clients)
    return Curve(ordered, [statistics.median(by_clients[n]) for n in ordered])


def _row(key: tuple[str, str, str], basis: str, fit: UslFit, curve: Curve, single: float | None) -> tuple:
    machine, experiment, workload = key
    return (
        machine, experiment, workload, basis, fit.anchored, fit.lambda_, fit.sigma, fit.kappa, fit.r_squared,
        fit.points, len(set(curve.clients)), fit.peak_clients, fit.ceiling_tps, fit.warning, single,
    )  # fmt: skip


# Published curves are fitted too (one point per client count, as printed), under this experiment name so that
# they never pass for a measured sweep; an article that printed its own fit is judged by that fit instead.
PUBLISHED_EXPERIMENT = "published-curve"


def _published_curves(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], Curve]:
    return _curves(
        con,
        "SELECT machine, workload, clients, tps FROM clients_sweep.curves "
        "WHERE published AND tps > 0 AND machine NOT IN "
        "(SELECT machine FROM main.published WHERE experiment = 'usl-fit') "
        "ORDER BY machine, workload, clients",
    )


MachineCurves = list[tuple[tuple[str, str, str], Curve]]  # ((machine, experiment, workload), every pass)


def fit_many_machines(machines: list[MachineCurves]) -> list[list[tuple]]:
    """Every fit of each machine's sweeps (medians and passes, free and, with a one-client point, anchored),
    every fit of them all solved together."""
    plans: list[list[tuple[tuple[str, str, str], str, Curve, float | None]]] = []
    problems: list[tuple[list[float], list[float], float | None]] = []
    for curves in machines:
        plan = []
        for key, passes in curves:
            medians = _medians(passes)
            if len(medians.clients) < MIN_POINTS:
                continue
            single = medians.tps[0] if medians.clients[0] == 1 else None
            for basis, curve in (("medians", medians), ("passes", passes)):
                for anchor in (None, single) if single is not None else (None,):
                    plan.append((key, basis, curve, single))
                    problems.append((curve.clients, curve.tps, anchor))
        plans.append(plan)
    fitted = iter(fit_usl_many(problems))
    return [
        [_row(key, basis, next(fitted), curve, single) for key, basis, curve, single in plan]
        for plan in plans
    ]


def _cache_key(curves: MachineCurves, code: str) -> str:
    # The curve as asdict would give it, without asdict's deep copy (a thousand machines' every window).
    return digest(code, canonical_json([(key, {"clients": c.clients, "tps": c.tps}) for key, c in curves]))


# Fewer machines to fit than this are fitted in this process: starting workers (NumPy, SciPy) costs more.
MIN_MACHINES_FOR_WORKERS = 64


def fit_in_shares(machines: list[MachineCurves], workers: int | None = None) -> list[list[tuple]]:
    """fit_many_machines, with many machines split in contiguous shares over worker processes, one per
    core: a machine's fits do not depend on the machines solved with it (fit_usl_many), so the rows are
    the same, and the cores share a cold build's fits instead of one fitting while the others idle."""
    workers = min(workers or os.cpu_count() or 1, len(machines))
    if workers <= 1 or len(machines) < MIN_MACHINES_FOR_WORKERS:
        return fit_many_machines(machines) if machines else []
    size = -(-len(machines) // workers)
    shares = [machines[first : first + size] for first in range(0, len(machines), size)]
    with WorkerPool(len(shares)) as pool:
        return [rows for share in pool.map(fit_many_machines, shares) for rows in share]


def fit_machines(by_machine: dict[str, MachineCurves], cache_dir: Path = FITS_CACHE_DIR) -> list[tuple]:
    """Every machine's fits, from the cache where its curves and the code are unchanged."""
    code = fits_code()
    keys = {machine: _cache_key(curves, code) for machine, curves in by_machine.items()}
    cached = {machine: read_json(cache_dir / f"{key}.json") for machine, key in keys.items()}
    missing = [machine for machine, rows in cached.items() if rows is None]
    fitted = fit_in_shares([by_machine[machine] for machine in missing])
    for machine, rows in zip(missing, fitted, strict=True):
        text = canonical_json(rows)
        write_atomically(cache_dir / f"{keys[machine]}.json", text)
        cached[machine] = json.loads(text)  # as a cached machine's rows read back: the table is the same
    return [tuple(row) for machine in by_machine for row in cached[machine]]  # type: ignore[union-attr]


def _table_exists(con: duckdb.DuckDBPyConnection, schema: str, table: str) -> bool:
    # fetchall, not fetchone: DuckDB refuses the connection's next registration while a result is unread.
    (found,) = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
        [schema, table],
    ).fetchall()
    return bool(found[0])


# Each measured machine's key of what its rows in main.usl_fits were fitted from (fit_all's machine_keys):
# otherwise every machine's windows would be read into Python, and their curves hashed, on every build.
FIT_KEYS_TABLE = "main.fit_keys"
# Where an older build kept each machine's fitted rows as JSON beside its key; main.usl_fits keeps them now.
OLD_FIT_ROWS_TABLE = "main.fit_rows"


def fit_all(con: duckdb.DuckDBPyConnection, machine_keys: dict[str, str] | None = None) -> int:
    """Bring main.usl_fits up to date; return the number of fits it holds. machine_keys: each measured
    machine's key of everything its fits are made from (its inputs to the fitted experiments, their basis
    and this code); a machine whose key is the one its rows were made with keeps them, and is not read
    again. Without machine_keys (or where no machine's key is known) the table is made anew."""
    con.execute(f"DROP TABLE IF EXISTS {OLD_FIT_ROWS_TABLE}")
    con.execute(f"CREATE TABLE IF NOT EXISTS {FIT_KEYS_TABLE} (machine VARCHAR, key VARCHAR)")
    kept: set[str] = set()
    if machine_keys is not None and _table_exists(con, "main", "usl_fits"):
        kept = {
            machine
            for machine, key in con.execute(f"SELECT machine, key FROM {FIT_KEYS_TABLE}").fetchall()
            if machine_keys.get(machine) == key
        }
    if kept:
        # The rows of the machines fitted again, or gone, go; and the published fits, made again below.
        con.execute(
            "DELETE FROM main.usl_fits WHERE experiment = ? OR NOT list_contains(?, machine)",
            [PUBLISHED_EXPERIMENT, sorted(kept)],
        )
    else:
        # Every machine is fitted again, with this code: the table is made anew, in this code's shape.
        con.execute(USL_FITS_TABLE)
    redone = None if machine_keys is None else sorted(set(machine_keys) - kept)
    by_machine: dict[str, MachineCurves] = defaultdict(list)
    for schema in fitted_schemas():
        if not _table_exists(con, schema, "windows"):
            continue
        for (machine, workload), passes in _windows(con, schema, redone).items():
            by_machine[machine].append(((machine, schema.replace("_", "-"), workload), passes))
    rows = fit_machines(dict(sorted(by_machine.items())))
    if _table_exists(con, "clients_sweep", "curves"):
        for (machine, workload), curve in _published_curves(con).items():
            if len(curve.clients) >= MIN_POINTS:
                key = (machine, PUBLISHED_EXPERIMENT, workload)
                rows.append(_row(key, "medians", fit_usl(curve.clients, curve.tps), curve, None))
    insert_rows(con, "main.usl_fits", rows)
    if machine_keys is not None:
        # Every machine that was read again has its key recorded (those without a curve to fit too), once
        # its rows are in: a build stopped before then fits it again.
        con.execute(f"DELETE FROM {FIT_KEYS_TABLE} WHERE NOT list_contains(?, machine)", [sorted(kept)])
        insert_rows(con, FIT_KEYS_TABLE, [(machine, machine_keys[machine]) for machine in redone or []])
    ((counted,),) = con.execute("SELECT count(*) FROM main.usl_fits").fetchall()
    return int(counted)


def fits_code() -> str:
    """The fitting code, for a machine's key."""
    return source_digest(Path(usl.__file__), Path(usl_formula.__file__), Path(__file__))
