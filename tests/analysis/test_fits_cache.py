"""USL fits cached per machine (connlab.analysis.fits.fit_machines): unchanged curves are read back, not
fitted again, and give the same rows; a changed curve is fitted again."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from connlab.analysis import fits
from connlab.analysis.fits import Curve, fit_machines
from connlab.analysis.usl import usl_throughput

CLIENTS = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]


def curves(machine: str, lambda_: float) -> list:
    tps = [float(x) for x in usl_throughput(CLIENTS, lambda_, 0.05, 0.002)]
    return [((machine, "clients-sweep", "mixed"), Curve(list(CLIENTS), tps))]


@pytest.fixture
def fitted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The machines fitted (not read from the cache), in order."""
    machines: list[str] = []
    fit_many_machines = fits.fit_many_machines

    def counting(many: list) -> list[list[tuple]]:
        machines.extend(machine_curves[0][0][0] for machine_curves in many)
        return fit_many_machines(many)

    monkeypatch.setattr(fits, "fit_many_machines", counting)
    return machines


def test_unchanged_machines_are_read_from_the_cache(tmp_path: Path, fitted: list[str]) -> None:
    by_machine = {"a": curves("a", 1000.0), "b": curves("b", 2000.0)}
    first = fit_machines(by_machine, tmp_path)
    assert fitted == ["a", "b"]
    # medians and passes, each free and anchored (the curve has a one-client point)
    assert len(first) == 8 and {row[0] for row in first} == {"a", "b"}
    assert fit_machines(by_machine, tmp_path) == first
    assert fitted == ["a", "b"]
    # One machine added: only it is fitted.
    added = fit_machines({**by_machine, "c": curves("c", 3000.0)}, tmp_path)
    assert fitted == ["a", "b", "c"]
    assert added[:8] == first


def test_a_changed_curve_is_fitted_again(tmp_path: Path, fitted: list[str]) -> None:
    fit_machines({"a": curves("a", 1000.0)}, tmp_path)
    rows = fit_machines({"a": curves("a", 1500.0)}, tmp_path)
    assert fitted == ["a", "a"]
    lambda_tps = rows[0][5]
    assert lambda_tps == pytest.approx(1500.0, rel=1e-6)


def test_many_machines_are_fitted_in_worker_shares_with_the_same_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A machine's fits do not depend on the machines solved with it, so shares give the same rows."""
    pools: list[int] = []

    class CountedPool(fits.WorkerPool):
        def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            pools.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(fits, "WorkerPool", CountedPool)
    machines = [
        curves(f"m{index:03d}", 1000.0 + 37.0 * index) for index in range(fits.MIN_MACHINES_FOR_WORKERS)
    ]
    shared = fits.fit_in_shares(machines, workers=2)
    assert pools == [1]
    assert shared == fits.fit_many_machines(machines)
    assert [rows[0][0] for rows in shared] == [f"m{index:03d}" for index in range(len(machines))]
    assert fits.fit_in_shares(machines[:3], workers=2) == shared[:3] and pools == [1]


def windows_db(curves_by_machine: dict[str, float]) -> duckdb.DuckDBPyConnection:
    """A database with clients_sweep.windows: one good window per client count, on the USL curve with the
    machine's lambda."""
    con = duckdb.connect()
    con.execute("CREATE SCHEMA clients_sweep")
    con.execute(
        "CREATE TABLE clients_sweep.windows (machine VARCHAR, workload VARCHAR, clients DOUBLE, tps DOUBLE, "
        "ok BOOLEAN, client_saturated BOOLEAN)"
    )
    set_curves(con, curves_by_machine)
    return con


def set_curves(con: duckdb.DuckDBPyConnection, curves_by_machine: dict[str, float]) -> None:
    for machine, lambda_ in curves_by_machine.items():
        con.execute("DELETE FROM clients_sweep.windows WHERE machine = ?", [machine])
        for _key, curve in curves(machine, lambda_):
            for clients, tps in zip(curve.clients, curve.tps, strict=True):
                con.execute(
                    "INSERT INTO clients_sweep.windows VALUES (?, 'mixed', ?, ?, true, false)",
                    [machine, clients, tps],
                )


def fitted_lambdas(con: duckdb.DuckDBPyConnection) -> dict[str, float]:
    rows = con.execute(
        "SELECT machine, lambda_tps FROM main.usl_fits WHERE basis = 'medians' AND NOT anchored"
    ).fetchall()
    return {str(machine): round(float(lambda_tps)) for machine, lambda_tps in rows}


def test_fit_all_keeps_the_rows_of_machines_whose_key_is_unchanged() -> None:
    """main.usl_fits is kept between builds: a machine whose key is unchanged keeps its rows (its windows are
    not read again), a changed or added one is fitted again, and a machine gone loses its rows."""
    con = windows_db({"a": 1000.0, "b": 2000.0})
    fits.fit_all(con, {"a": "a1", "b": "b1"})
    assert fitted_lambdas(con) == {"a": 1000, "b": 2000}
    # a's windows change but its key does not: its rows are the kept ones. b's key changes: fitted again.
    set_curves(con, {"a": 1100.0, "b": 2500.0, "c": 3000.0})
    fits.fit_all(con, {"a": "a1", "b": "b2", "c": "c1"})
    assert fitted_lambdas(con) == {"a": 1000, "b": 2500, "c": 3000}
    fits.fit_all(con, {"c": "c1"})
    assert fitted_lambdas(con) == {"c": 3000}
    # Without keys, everything is fitted from the windows as they are.
    fits.fit_all(con)
    assert fitted_lambdas(con) == {"a": 1100, "b": 2500, "c": 3000}
