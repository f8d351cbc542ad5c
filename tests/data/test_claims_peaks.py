"""Claims about where a curve peaks are judged only where the measured points place the peak (issue 52): the
peak's measured neighbours on its curve inside the claim's band or wholly outside it, or, for a figure read
from peaks, every peak placed within a factor of √2. Elsewhere the verdict is "cannot be evaluated", naming
the points between which nothing was measured."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pytest
import yaml

from connlab.data.aggregate import aggregate_all
from connlab.data.claims import CANNOT_EVALUATE, DOES_NOT_HOLD, HOLDS, Threshold, judge_claims
from connlab.data.peak_bracket import Peak, decides, unresolved, value_range
from connlab.errors import LabError
from support.helpers import Rows, db_records

if TYPE_CHECKING:
    from support.rows import RunWriter

BAND_AT_FOUR = Threshold(op="between", value=(2.83, 5.66))
BAND_AT_TWELVE = Threshold(op="between", value=(8.49, 16.97))


# -- the rule, on peaks given by hand ---------------------------------------------------------------------
def test_a_peak_between_far_neighbours_cannot_be_placed() -> None:
    """The quick grid's 1, 4, 32 per core: the peak at 4 may lie anywhere between 1 and 32."""
    reason = unresolved("peak-bracket", BAND_AT_FOUR, 4.0, Peak(4.0, 1.0, 32.0), None, "per server core")
    assert reason is not None
    assert reason.startswith("no point measured between 1 and 32 per server core but the peak's own 4")
    assert reason.endswith("cannot tell whether it is between 2.83 and 5.66")


@pytest.mark.parametrize(
    ("threshold", "peak", "placed"),
    [
        (BAND_AT_FOUR, Peak(4.0, 2.83, 5.66), True),  # half a doubling step either side: inside the band
        (BAND_AT_FOUR, Peak(4.0, 2.8284, 5.6569), True),  # the band is written rounded: √2 itself counts
        (BAND_AT_FOUR, Peak(4.0, 2.0, 8.0), False),  # a doubling grid cannot place it in this band
        (BAND_AT_TWELVE, Peak(4.0, 2.0, 8.0), True),  # but can say it lies below 8.49
        (BAND_AT_TWELVE, Peak(32.0, 16.0, 64.0), False),  # 16.97 lies between 16 and 64
        (BAND_AT_TWELVE, Peak(64.0, 32.0, None), True),  # the last point, but wholly above the band
        (Threshold(op=">=", value=5), Peak(8.0, 6.0, 10.0), True),  # wholly on one side
        (Threshold(op=">=", value=5), Peak(6.0, 4.5, 8.0), True),  # straddles, but within √2 of the peak
        (Threshold(op=">=", value=5), Peak(6.0, 3.0, 12.0), False),
    ],
)
def test_a_peak_bracket_places_the_peak(threshold: Threshold, peak: Peak, placed: bool) -> None:
    assert (unresolved("peak-bracket", threshold, peak.at, peak, None, "per server core") is None) == placed


@pytest.mark.parametrize(
    ("peak", "words"),
    [
        (Peak(1.0, None, 4.0), "the peak is the lowest point measured (1 per server core)"),
        (Peak(4.0, 2.0, None), "the peak is the highest point measured (4 per server core)"),
        (Peak(4.0, None, None), "the peak is the only point measured (4 per server core)"),
    ],
)
def test_a_peak_at_the_end_of_its_grid_says_so(peak: Peak, words: str) -> None:
    reason = unresolved("peak-bracket", BAND_AT_FOUR, peak.at, peak, None, "per server core")
    assert reason is not None and reason.startswith(words)


def test_a_ratio_of_peaks_needs_both_placed() -> None:
    """select-only over mixed, each peaking at 4: on a doubling grid the ratio may lie from 1/4 to 4; on a
    grid of half steps each peak is placed, and the ratio is judged on the medians."""
    half = Threshold(op="between", value=(0.35, 0.71))
    coarse_reads, coarse_writes = Peak(4.0, 2.0, 8.0, "select-only"), Peak(4.0, 2.0, 8.0, "mixed")
    assert value_range(1.0, coarse_reads, coarse_writes) == pytest.approx((0.25, 4.0))
    reason = unresolved("peak-resolution", half, 1.0, coarse_reads, coarse_writes, "per server core")
    assert reason is not None
    assert "but the select-only peak's own 4; no point measured between 2 and 8" in reason
    assert "the value may lie anywhere between 0.25 and 4" in reason
    fine = Peak(4.0, 2.83, 5.66, "select-only"), Peak(4.0, 2.83, 5.66, "mixed")
    assert unresolved("peak-resolution", half, 1.0, *fine, "per server core") is None
    # A ratio whose range lies wholly outside the band is decided whatever the grid.
    far = Peak(32.0, 16.0, 64.0, "select-only"), Peak(1.0, None, 2.0, "mixed")
    assert value_range(32.0, *far) == (8.0, math.inf)
    assert unresolved("peak-resolution", half, 32.0, *far, "per server core") is None


def test_decides_needs_the_whole_range_on_one_side() -> None:
    assert decides(Threshold(op="<=", value=1), 0.25, 0.9)
    assert not decides(Threshold(op="<=", value=1), 0.25, 4.0)
    assert decides(BAND_AT_FOUR, 0.0, 2.83)  # wholly below: the true peak lies under the upper neighbour
    assert not decides(BAND_AT_FOUR, 0.0, 4.0)


# -- the claims file's mechanism ---------------------------------------------------------------------------
@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    connection.execute(
        "CREATE TABLE peaks AS SELECT * FROM (VALUES "
        "('quick-box', 4.0, 1.0, 32.0), ('fine-box', 4.0, 3.0, 5.0), ('far-box', 12.0, 10.0, 14.0), "
        "('published-box', 4.0, 1.25, 12.5)) AS t(machine, peak, below, above)"
    )
    return connection


def peak_claim(**extra: Any) -> dict[str, Any]:
    return {
        "id": "peak-at-four",
        "claim": "The curve peaks at four clients per server core.",
        "seed": "16 clients on 4 cores.",
        "reading": "seed",
        "value_label": "clients per core at the peak",
        "threshold": {"op": "between", "value": [2.83, 5.66]},
        "decidable_by": "peak-bracket",
        "query": "SELECT machine, peak AS value, peak, below AS peak_below, above AS peak_above FROM peaks",
        **extra,
    }


def verdicts(con: duckdb.DuckDBPyConnection, tmp_path: Path, measured: list[str], **extra: Any) -> dict:
    path = tmp_path / "demo.claims.yaml"
    path.write_text(yaml.safe_dump({"source": "published-box", "claims": [peak_claim(**extra)]}))
    machines = ["quick-box", "fine-box", "far-box", "published-box"]
    out = judge_claims(con, path, machines, tmp_path / "claims", measured).path
    return {v["machine"]: v for v in json.loads(out.read_text())["claims"][0]["verdicts"]}


def test_a_measured_peak_is_judged_only_where_its_neighbours_place_it(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    found = verdicts(con, tmp_path, ["quick-box", "fine-box", "far-box"])
    quick = found["quick-box"]
    assert quick["verdict"] == CANNOT_EVALUATE
    assert quick["reason"].startswith("no point measured between 1 and 32 per server core")
    assert quick["value"] == 4.0  # the figure stays, beside why it decides nothing
    assert found["fine-box"]["verdict"] == HOLDS
    assert found["far-box"]["verdict"] == DOES_NOT_HOLD
    # The source's curve prints a few of the points it measured: its own figure is judged as printed.
    assert found["published-box"]["verdict"] == HOLDS


def test_a_claim_decided_by_its_peak_must_return_it(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    with pytest.raises(LabError, match="decidable_by peak-bracket needs the column peak"):
        verdicts(con, tmp_path, ["quick-box"], query="SELECT machine, peak AS value FROM peaks")
    with pytest.raises(LabError, match="peak needs its neighbours too"):
        verdicts(con, tmp_path, ["quick-box"], query="SELECT machine, peak AS value, peak FROM peaks")


def test_a_measured_machine_without_its_peak_stops_the_build(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    query = (
        "SELECT machine, peak AS value, CASE WHEN machine <> 'fine-box' THEN peak END AS peak, "
        "below AS peak_below, above AS peak_above FROM peaks"
    )
    with pytest.raises(LabError, match="fine-box: a claim decided by its peaks must return the peak"):
        verdicts(con, tmp_path, ["fine-box"], query=query)


# -- the articles' claims over aggregated machines ---------------------------------------------------------
def sweep_rows(workload: str, curve: dict[int, float]) -> Rows:
    """Three passes of a curve on one server core (clients per core = clients), 2% apart."""
    return [
        {
            "workload": workload,
            "clients": clients,
            "tps": tps * factor,
            "pass_no": pass_no,
            "latency_avg_ms": clients * 1000 / (tps * factor),
        }
        for pass_no, factor in enumerate((0.98, 1.0, 1.02), start=1)
        for clients, tps in curve.items()
    ]


# The quick profile's grid, 1, 4, 32 and 400 clients per core, both workloads peaking at 4.
QUICK = {1: 1000.0, 4: 4000.0, 32: 3000.0, 400: 1500.0}
# Fine grids around the peak: half-step neighbours at 3 and 5, and at 10 and 14.
AT_FOUR = {1: 1000.0, 2: 2000.0, 3: 3500.0, 4: 4000.0, 5: 3800.0, 8: 3400.0, 32: 2000.0}
AT_TWELVE = {1: 1000.0, 4: 3000.0, 8: 3500.0, 10: 3900.0, 12: 4000.0, 14: 3950.0, 32: 3000.0}


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory, write_run: RunWriter) -> dict[str, dict[str, dict]]:
    """Three machines through the whole aggregation: the quick grid, a fine grid peaking at 4 per core for
    both workloads, and one whose read-write curve peaks at 12."""
    root = tmp_path_factory.mktemp("peaks")
    results = root / "results"
    write_run(results, "quick-grid", sweep_rows("mixed", QUICK) + sweep_rows("tpcb-like", QUICK), "quick")
    write_run(results, "fine-at-four", sweep_rows("mixed", AT_FOUR) + sweep_rows("tpcb-like", AT_FOUR))
    write_run(results, "fine-at-twelve", sweep_rows("mixed", AT_FOUR) + sweep_rows("tpcb-like", AT_TWELVE))
    database = aggregate_all(results_dir=results, out_dir=root / "data")
    neighbours = db_records(
        database,
        "SELECT machine, workload, peak_per_core_below, peak_per_core_above FROM clients_sweep.peak_ranges "
        "WHERE machine = 'quick-grid' ORDER BY workload",
    )
    assert [(r["peak_per_core_below"], r["peak_per_core_above"]) for r in neighbours] == [(1, 32), (1, 32)]
    found: dict[str, dict[str, dict]] = {}
    for article in ("too-many-connections", "pool-sizing"):
        for claim in json.loads((root / "data" / "claims" / f"{article}.json").read_text())["claims"]:
            found[claim["id"]] = {v["machine"]: v for v in claim["verdicts"]}
    return found


@pytest.mark.slow
@pytest.mark.parametrize("claim_id", ["peak-four-per-core", "read-write-peaks-12-per-core"])
def test_the_quick_grid_cannot_place_the_peak(judged: dict[str, dict[str, dict]], claim_id: str) -> None:
    quick = judged[claim_id]["quick-grid"]
    assert quick["verdict"] == CANNOT_EVALUATE
    assert quick["reason"].startswith("no point measured between 1 and 32 per server core")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("claim_id", "machine", "verdict"),
    [
        ("peak-four-per-core", "fine-at-four", HOLDS),
        ("read-write-peaks-12-per-core", "fine-at-four", DOES_NOT_HOLD),
        ("read-write-peaks-12-per-core", "fine-at-twelve", HOLDS),
        # select-only was not run: the ratio of peaks has no data.
        ("reads-peak-at-half", "fine-at-four", "not measured"),
    ],
)
def test_a_fine_grid_still_decides(
    judged: dict[str, dict[str, dict]], claim_id: str, machine: str, verdict: str
) -> None:
    assert judged[claim_id][machine]["verdict"] == verdict


@pytest.mark.slow
def test_a_figure_over_a_peak_on_a_fine_grid_is_judged(judged: dict[str, dict[str, dict]]) -> None:
    """The folk formula (cores × 2 + 1 = 3 on one core) against a read-write peak at 12 clients placed
    between 10 and 14: 4 times the formula, judged against the seed's 5."""
    folk = judged["folk-formula-too-low"]["fine-at-twelve"]
    assert folk["value"] == pytest.approx(4.0)
    assert folk["verdict"] == DOES_NOT_HOLD
    assert judged["folk-formula-too-low"]["quick-grid"]["verdict"] == CANNOT_EVALUATE
