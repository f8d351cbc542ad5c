"""The CSV contract's row (connlab.contract.columns.window_columns): each probe's columns placed after the
column it names, a column two probes fill declared once, a probe that cannot be placed refused in one line."""

from __future__ import annotations

import pytest

from connlab.contract.column import Column
from connlab.contract.columns import OWN_COLUMNS, WINDOW_COLUMNS, window_columns
from connlab.contract.probes.declaration import Probe
from connlab.contract.probes.registry import PROBES
from connlab.errors import LabError

OWN = (Column("a", "INTEGER", "first"), Column("b", "INTEGER", "second"))
X = Column("x", "INTEGER", "the first probe's")
Y = Column("y", "INTEGER", "the second probe's")


def probe(name: str, columns: tuple[Column, ...], after: str | None) -> Probe:
    return Probe(name, 1.0, columns, "a test's", after=after)


def names(columns: tuple[Column, ...]) -> list[str]:
    return [column.name for column in columns]


def test_a_probe_follows_the_column_it_names_even_another_probes() -> None:
    # Declared in the order that needs a second round: p2 follows p1's column.
    probes = {"p2": probe("p2", (Y,), "x"), "p1": probe("p1", (X,), "a"), "p3": probe("p3", (X,), None)}
    assert names(window_columns(OWN, probes)) == ["a", "x", "y", "b"]


def test_a_probe_naming_no_column_comes_last() -> None:
    assert names(window_columns(OWN, {"p": probe("p", (X, Y), None)})) == ["a", "b", "x", "y"]


@pytest.mark.parametrize(
    ("probes", "refusal"),
    [
        ({"p": probe("p", (X,), "nowhere")}, "probe p: after 'nowhere': no such column in a results row"),
        (
            {"p": probe("p", (Column("b", "VARCHAR", "again"),), "a")},
            "probe p: column b: declared differently by the window's own columns",
        ),
        (
            {"p": probe("p", (X,), "a"), "q": probe("q", (Column("x", "DOUBLE", "again"),), "a")},
            "probe q: column x: declared differently by probe p",
        ),
    ],
)
def test_a_probe_that_cannot_be_placed_is_refused_in_one_line(probes: dict[str, Probe], refusal: str) -> None:
    with pytest.raises(LabError) as refused:
        window_columns(OWN, probes)
    assert str(refused.value) == refusal


def test_the_row_is_the_windows_columns_and_every_probes_each_once() -> None:
    row = names(WINDOW_COLUMNS)
    assert len(row) == len(set(row))
    assert set(row) == set(names(OWN_COLUMNS)) | {n for p in PROBES.values() for n in p.column_names}
    # Where the probes' columns were before they moved into their folders (results files keep the order).
    assert row[row.index("clients_connected") + 1 : row.index("client_cpu_budget")] == [
        "server_backends_max", "wait_samples", "wait_events", *PROBES["memory"].column_names,
    ]  # fmt: skip
