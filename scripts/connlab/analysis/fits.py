"""USL fits over the aggregated data, as a DuckDB table (main.usl_fits) the articles and claims query.

Fitted per machine, experiment and workload, on the medians and on every pass, freely and with λ anchored to
the measured single-client throughput. Windows where pgbench saturated its own cores are left out: they
measure the client, not the server.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass

import duckdb

from connlab.analysis.usl import MIN_POINTS, UslFit, fit_usl
from connlab.contract.experiment import experiment_names, load_experiment


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


def _curves(con: duckdb.DuckDBPyConnection, sql: str) -> dict[tuple[str, str], Curve]:
    """(machine, workload) -> its curve, from a query of machine, workload, clients, tps in that order."""
    rows = con.execute(sql).fetchall()
    curves: dict[tuple[str, str], Curve] = defaultdict(lambda: Curve([], []))
    for machine, workload, clients, tps in rows:
        curves[(machine, workload)].clients.append(float(clients))
        curves[(machine, workload)].tps.append(float(tps))
    return dict(curves)


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


def _windows(con: duckdb.DuckDBPyConnection, schema: str) -> dict[tuple[str, str], Curve]:
    """Every good, server-bound window of the experiment's best profile, per machine and workload."""
    return _curves(
        con,
        f"SELECT machine, workload, clients, tps FROM {schema}.windows "
        "WHERE ok AND NOT client_saturated AND tps > 0 ORDER BY machine, workload, clients",
    )


def _published_curves(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], Curve]:
    return _curves(
        con,
        "SELECT machine, workload, clients, tps FROM clients_sweep.curves "
        "WHERE published AND tps > 0 AND machine NOT IN "
        "(SELECT machine FROM main.published WHERE experiment = 'usl-fit') "
        "ORDER BY machine, workload, clients",
    )


def fit_all(con: duckdb.DuckDBPyConnection) -> int:
    """Create main.usl_fits; return the number of fits made."""
    con.execute(USL_FITS_TABLE)
    rows = []
    for schema in fitted_schemas():
        exists = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
            [schema, "windows"],
        ).fetchone()
        if not exists or not exists[0]:
            continue
        for (machine, workload), passes in _windows(con, schema).items():
            medians = _medians(passes)
            if len(medians.clients) < MIN_POINTS:
                continue
            single = medians.tps[0] if medians.clients[0] == 1 else None
            key = (machine, schema.replace("_", "-"), workload)
            for basis, curve in (("medians", medians), ("passes", passes)):
                rows.append(_row(key, basis, fit_usl(curve.clients, curve.tps), curve, single))
                if single is not None:
                    anchored = fit_usl(curve.clients, curve.tps, anchor_lambda=single)
                    rows.append(_row(key, basis, anchored, curve, single))
    has_curves = con.execute(
        "SELECT count(*) FROM information_schema.tables "
        "WHERE table_schema = 'clients_sweep' AND table_name = 'curves'"
    ).fetchone()
    if has_curves and has_curves[0]:
        for (machine, workload), curve in _published_curves(con).items():
            if len(curve.clients) >= MIN_POINTS:
                key = (machine, PUBLISHED_EXPERIMENT, workload)
                rows.append(_row(key, "medians", fit_usl(curve.clients, curve.tps), curve, None))
    if rows:
        con.executemany("INSERT INTO main.usl_fits VALUES (" + ", ".join("?" * 15) + ")", rows)
    return len(rows)
