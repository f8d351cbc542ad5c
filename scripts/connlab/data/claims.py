"""An article's claims, checked on every machine, with three-valued verdicts that carry their range.

site_src/articles/<slug>.claims.yaml names the article's published source and lists claims: an id, a
sentence, what the seed measured, whether the claim is the seed's own statement or a reading of the project's,
a threshold, and a DuckDB query over the aggregated tables returning one row per machine:

- `machine`, `value` (the figure on the medians), optionally `low` and `high` (the range the passes allow);
- optionally `reason`: why the claim cannot be evaluated there, in words ("5 client counts; a fit needs 6");
- optionally `client_saturated` (whether any pass at the points the value rests on was client-bound, by the
  rule of connlab.data.views.CLIENT_BOUND_SQL), `client_cpu` (the most of its cores pgbench used there, a
  share) and `client_cores`;
- optionally `bound`: 'at least' or 'at most', the direction a client-bound point biases the value (a
  client-bound pooled rate is a floor on what the pooler could do, so a speed-up over it is 'at least');
- optionally `readings`: how many readings the value rests on, where that is one (a single start, a single
  long window), so the page says it; a verdict whose experiments all ran one pass on the machine (a profile
  of one pass) rests on one reading whatever the query says;
- for a claim with `decidable_by` (a claim about where a curve peaks, or a figure read from a peak): `peak`,
  `peak_below`, `peak_above` (the peak and its measured neighbours on its curve), optionally `peak_of` (the
  curve's name) and `peak_gap` (the words for the gap, where the neighbours are not one curve's points), and
  for a value divided by a second peak the same columns named `over_peak...` (connlab.data.peak_bracket). On
  a measured machine the claim is judged only where those points resolve it; elsewhere it cannot be
  evaluated, saying between which points nothing was measured. A source's printed figure is judged as
  printed: the points an article prints are not the grid it measured.

The verdict is computed here, never in the query, so every claim is judged by the same rule. The range
convention is one for every figure: a figure's range runs from its smallest to its largest pass, and a ratio's
from the smallest numerator over the largest denominator to the largest over the smallest (or, where both
sides are read in the same window, from the smallest to the largest of the passes' own ratios). A claim
*holds* when the value and the whole range meet the threshold, *does not hold* when none of them does, and is
*inconclusive* when the range straddles the threshold. A machine the query does not return has no data for
the claim ("not measured"); a row with no value must say why, or the build stops: a claim that cannot be
checked must not be published as if it had been.

The load generator is never the measurement: where the claim's points were client-bound (the one rule of
connlab.data.views.CLIENT_BOUND_SQL: pgbench near its limit, the server and the pooler well below theirs), the
verdict is "cannot be evaluated" with pgbench's figure, unless the query states the bias's direction; then
the value is a bound, and only what the bound decides is judged (an 'at least' value that already meets
'at least 18.9' holds; one below it decides nothing). A claim that reads an experiment with client-bound
windows on a machine and does not say whether its own points were stops the build, naming both. Each verdict
carries the dates its experiments were measured on that machine (main.measured), and what it was measured
under (connlab.data.verdict_conditions: profile, steal, CPU pressure, versions, cores), so that a page can say
what differs where machines' verdicts differ.

Quick runs indicate, full runs decide: a verdict on a measured machine whose claim reads windows of a profile
less thorough than full (quick or tiny: the least thorough of the claim's experiments on that machine, by
connlab.data.verdict_conditions.PROFILE_ORDER) carries `indicative: true` (is_indicative, the one place the
flag is computed). It is shown, marked, and never counted where the verdicts decide something: the summary
here, the short answers' figures and verdict counts and the findings' headings (connlab.data.answers).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Literal, NamedTuple

import duckdb
from pydantic import BaseModel, ConfigDict, Field, model_validator

from connlab.contract.cache import canonical_bytes, loads_fast, remember_written
from connlab.contract.experiment import experiment_names
from connlab.contract.files import write_bytes_if_changed
from connlab.contract.yaml_models import load_yaml_model
from connlab.data.peak_bracket import OVER_PEAK_COLUMNS, PEAK_COLUMNS, DecidableBy, read_peak, unresolved
from connlab.data.sql_text import sql_in_list
from connlab.data.verdict_conditions import PROFILE_ORDER, conditions, machine_facts, pooler_kinds
from connlab.errors import LabError

HOLDS, DOES_NOT_HOLD, INCONCLUSIVE = "holds", "does not hold", "inconclusive"
CANNOT_EVALUATE, NOT_MEASURED = "cannot be evaluated", "not measured"
VERDICTS = (HOLDS, DOES_NOT_HOLD, INCONCLUSIVE, CANNOT_EVALUATE, NOT_MEASURED)

Operator = Literal[">=", ">", "<=", "<", "between"]


class Threshold(BaseModel):
    """What the value must satisfy: `>= 0.48`, or `between [0.71, 1.41]` (both ends included)."""

    model_config = ConfigDict(extra="forbid")

    op: Operator
    value: float | tuple[float, float]

    @model_validator(mode="after")
    def _shape(self) -> Threshold:
        if (self.op == "between") != isinstance(self.value, tuple):
            raise ValueError("`between` takes [low, high]; the other operators take one number")
        if isinstance(self.value, tuple) and self.value[0] > self.value[1]:
            raise ValueError("between [low, high] needs low <= high")
        return self

    def met(self, x: float) -> bool:
        if isinstance(self.value, tuple):
            return self.value[0] <= x <= self.value[1]
        t = self.value
        return {">=": x >= t, ">": x > t, "<=": x <= t, "<": x < t}[self.op]

    def text(self) -> str:
        """In words, for the page: 'at least 0.48', 'between 2 and 6'."""
        if isinstance(self.value, tuple):
            return f"between {self.value[0]:g} and {self.value[1]:g}"
        words = {">=": "at least", ">": "above", "<=": "at most", "<": "below"}[self.op]
        return f"{words} {self.value:g}"


Bound = Literal["at least", "at most"]


def judge_bound(threshold: Threshold, bound: Bound, low: float, high: float) -> str | None:
    """What a one-sided bound decides: the verdict, or None where the bound leaves it open. 'at least': the
    true value of every pass is at least its reading, so the smallest reading decides; 'at most': the
    largest."""
    if bound == "at least":
        floor = low
        if isinstance(threshold.value, tuple):
            return DOES_NOT_HOLD if floor > threshold.value[1] else None
        if threshold.op in (">=", ">"):
            return HOLDS if threshold.met(floor) else None
        return DOES_NOT_HOLD if not threshold.met(floor) else None
    ceiling = high
    if isinstance(threshold.value, tuple):
        return DOES_NOT_HOLD if ceiling < threshold.value[0] else None
    if threshold.op in ("<=", "<"):
        return HOLDS if threshold.met(ceiling) else None
    return DOES_NOT_HOLD if not threshold.met(ceiling) else None


def judge(threshold: Threshold, value: float, low: float | None, high: float | None) -> str:
    """Holds / does not hold / inconclusive: the median's verdict, unless the passes' range disagrees."""
    low = value if low is None else min(low, value)
    high = value if high is None else max(high, value)
    if isinstance(threshold.value, tuple):
        lo, hi = threshold.value
        everywhere = lo <= low and high <= hi
        nowhere = high < lo or low > hi
    else:
        # One-sided thresholds are monotone: the range's two ends decide for everything between them.
        everywhere = threshold.met(low) and threshold.met(high)
        nowhere = not threshold.met(low) and not threshold.met(high)
    if everywhere:
        return HOLDS
    if nowhere:
        return DOES_NOT_HOLD
    return INCONCLUSIVE


class Claim(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    claim: str = Field(description="the sentence, with its operating point and threshold in words")
    seed: str = Field(description="what the source article measured, with its figure")
    reading: Literal["seed", "project", "conjecture"] = Field(
        description="seed: the source's own statement and figure; project: a looser reading of our own; "
        "conjecture: what the seed expected but says it did not test"
    )
    operating_point: str | None = Field(
        default=None,
        description="where the operating point is the project's choice, not the seed's: which, and why",
    )
    value_label: str = Field(description="what the value column means, e.g. 'clients per core at the peak'")
    threshold: Threshold
    scope: Literal["machine", "across"] = Field(
        default="machine",
        description="machine: a verdict per machine; across: one verdict over the measured machines together",
    )
    client_bound: Literal["reported", "excluded", "not-a-bias"] = Field(
        default="reported",
        description="reported: the query returns client_saturated for its own points; excluded: the "
        "tables it reads leave client-bound points out (peaks, curves and fits are made only of points where "
        "pgbench never saturated); not-a-bias: a client-bound point does not bias what it reads (pgbench's "
        "own saturation is the measurement, a count, a memory figure, or an identity that holds whatever "
        "sets the rate)",
    )
    decidable_by: DecidableBy | None = Field(
        default=None,
        description="peak-bracket: the value is where a curve peaks; peak-resolution: the value is read from "
        "one or two peaks. Either way judged only where the peaks' measured neighbours resolve it "
        "(connlab.data.peak_bracket); the query returns the peak columns",
    )
    peak_unit: str = Field(
        default="per server core",
        description="the words after a peak's client counts in a reason: 'per server core' or 'clients'",
    )
    query: str


# A claim's fields that stay here, not in its file: how it is queried and decided (the threshold is written in
# words); its verdicts say what came of them.
NOT_WRITTEN = {"query", "threshold", "decidable_by", "peak_unit"}

# How a page names each kind of reading, so no template has to spell them.
READING_LABELS = {
    "seed": "The source article's statement",
    "project": "Project's reading",
    "conjecture": "The source article's expectation, untested by it",
}


class ClaimsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str = Field(description="the results folder of the article's own published source")
    claims: list[Claim] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> ClaimsFile:
        ids = [claim.id for claim in self.claims]
        twice = sorted({claim_id for claim_id in ids if ids.count(claim_id) > 1})
        if twice:
            raise ValueError(f"claim ids must be unique; twice: {', '.join(twice)}")
        return self


def _number(value: object, where: str) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError) as error:
        raise LabError(f"{where}: must be a number or null, got {value!r}") from error
    return None if math.isnan(number) else number


# Every verdict has these keys, so a page can show each of them without asking whether it is there.
EMPTY_VERDICT = {
    "verdict": NOT_MEASURED,
    "value": None,
    "low": None,
    "high": None,
    "reason": None,
    "bound": None,
    "client_saturated": None,
    "client_cpu": None,
    "client_cores": None,
    "readings": None,
    "measured_on": None,
    "conditions": None,
    "indicative": False,
    "unverified": None,
}


# The profile whose windows decide a verdict; the less thorough ones only indicate.
DECIDING_PROFILE = "full"


def is_indicative(profile: object) -> bool:
    """Whether a verdict on windows of this profile (the least thorough of the claim's experiments on the
    machine) only indicates: a quick or tiny profile's few short windows are a first look. A profile outside
    PROFILE_ORDER is not a run's ('published': a source's printed figures, judged as printed), and a verdict
    without one (a claim over tables of its own) has no run to be marked by."""
    return profile in PROFILE_ORDER and profile != DECIDING_PROFILE


def client_words(share: float | None, cores: float | None) -> str:
    """'pgbench used 0.95 of its core', '... 93% of its 2 cores': what the load generator used, in words."""
    if share is None:
        return "pgbench saturated its cores"
    if cores is None or cores == 1:
        return f"pgbench used {share:.2f} of its core"
    return f"pgbench used {share:.0%} of its {cores:g} cores"


def _bound(value: object, where: str) -> Bound | None:
    if value is None:
        return None
    if value not in ("at least", "at most"):
        raise LabError(f"{where}: column bound must be 'at least', 'at most' or null, got {value!r}")
    return value  # type: ignore[return-value]


def _readings(value: object, where: str) -> int | None:
    number = _number(value, f"{where}: column readings")
    if number is not None and (number < 1 or number != int(number)):
        raise LabError(f"{where}: column readings must be a whole number of at least 1, got {value!r}")
    return None if number is None else int(number)


def _unresolved(claim: Claim, row: dict, value: float, where: str) -> str | None:
    """Why the points measured cannot decide a claim about a peak (None where they can, or where the claim is
    not about one)."""
    if claim.decidable_by is None:
        return None
    peak, over_peak = read_peak(row, "peak"), read_peak(row, "over_peak")
    if peak is None and over_peak is None:
        raise LabError(f"{where}: a claim decided by its peaks must return the peak it reads (column peak)")
    return unresolved(claim.decidable_by, claim.threshold, value, peak, over_peak, claim.peak_unit)


def _verdict(
    claim: Claim, row: dict | None, where: str, gated: bool = True, unsteady: list[str] | None = None
) -> dict:
    """One row's verdict. gated: whether the claim's peaks are held to the points measured around them (a
    measured machine; a source's printed figure is judged as printed)."""
    if row is None:
        return dict(EMPTY_VERDICT)
    value = _number(row.get("value"), f"{where}: column value")
    low = _number(row.get("low"), f"{where}: column low")
    high = _number(row.get("high"), f"{where}: column high")
    saturated = row.get("client_saturated")
    client = {
        "client_saturated": None if saturated is None else bool(saturated),
        "client_cpu": _number(row.get("client_cpu"), f"{where}: column client_cpu"),
        "client_cores": _number(row.get("client_cores"), f"{where}: column client_cores"),
        "readings": _readings(row.get("readings"), where),
    }
    bound = _bound(row.get("bound"), where)
    reason = row.get("reason")
    note = {"note": str(row["note"])} if row.get("note") else {}
    base = {**EMPTY_VERDICT, **client, **note}
    if reason:
        return {**base, "verdict": CANNOT_EVALUATE, "reason": str(reason)}
    if value is None and unsteady:
        # The rates the claim reads were left out (a point mostly spent connecting has none): say which.
        shown = "; ".join(unsteady[:UNSTEADY_NAMED_UP_TO])
        more = (
            f"; and {len(unsteady) - UNSTEADY_NAMED_UP_TO} more"
            if len(unsteady) > UNSTEADY_NAMED_UP_TO
            else ""
        )
        return {**base, "verdict": CANNOT_EVALUATE, "reason": f"no steady-state figure here: {shown}{more}"}
    if value is None:
        raise LabError(f"{where}: no value and no reason; say in words why the claim cannot be evaluated")
    if low is not None and high is not None and low > high:
        raise LabError(f"{where}: low {low} is above high {high}")
    figures = {"value": value, "low": low, "high": high}
    gap = _unresolved(claim, row, value, where) if gated else None
    if gap is not None:
        return {**base, **figures, "verdict": CANNOT_EVALUATE, "reason": gap}
    if client["client_saturated"] and claim.client_bound != "not-a-bias":
        used = client_words(client["client_cpu"], client["client_cores"])
        if bound is None:
            return {
                **base,
                "verdict": CANNOT_EVALUATE,
                "reason": f"{used}: the figure is the load generator's, not the server's or the pooler's",
            }
        floor = value if low is None else min(low, value)
        ceiling = value if high is None else max(high, value)
        decided = judge_bound(claim.threshold, bound, floor, ceiling)
        if decided is None:
            end = floor if bound == "at least" else ceiling
            return {
                **base,
                **figures,
                "bound": bound,
                "verdict": CANNOT_EVALUATE,
                "reason": f"{used}, so the figure is {bound} {end:.3g}, which cannot decide "
                f"'{claim.threshold.text()}'",
            }
        return {**base, **figures, "bound": bound, "verdict": decided}
    return {**base, **figures, "verdict": judge(claim.threshold, value, low, high)}


def _counts(counted: list[str]) -> str:
    """'holds on 2 of 3 machines, inconclusive on 1'."""
    counts = {verdict: counted.count(verdict) for verdict in VERDICTS if verdict in counted}
    noun = "machine" if len(counted) == 1 else "machines"
    parts = [f"{verdict} on {n}" for verdict, n in counts.items()]
    parts[0] += f" of {len(counted)} {noun}"
    return ", ".join(parts)


def summarise(verdicts: list[dict], measured: list[str]) -> str:
    """'holds on 2 of 3 machines, inconclusive on 1', over the measured machines that have the data and
    decide (full-profile runs); the indicative ones (is_indicative) counted apart after them."""
    among = set(measured)  # a list searched once per verdict grew with the square of the machine count
    judged = [v for v in verdicts if v["machine"] in among and v["verdict"] != NOT_MEASURED]
    deciding = [v["verdict"] for v in judged if not v.get("indicative")]
    indicative = [v["verdict"] for v in judged if v.get("indicative")]
    if not judged:
        return "no measured machine has the data"
    if not deciding:
        return f"indicative only (no full-profile run): {_counts(indicative)}"
    if not indicative:
        return _counts(deciding)
    return f"{_counts(deciding)}; indicative: {_counts(indicative)}"


def _check_across(claim: Claim, rows: list[dict], names: list[str], path: Path) -> dict:
    """A claim over the measured machines together: one row, one verdict."""
    where = f"{path}: claim {claim.id}"
    if "value" not in names:
        raise LabError(f"{where}: query must return a column value")
    if len(rows) > 1:
        raise LabError(f"{where}: a claim across machines returns one row, got {len(rows)}")
    _check_peak_columns(claim, names, where)
    across = _verdict(claim, rows[0], where) if rows else dict(EMPTY_VERDICT)
    return {
        **claim.model_dump(exclude=NOT_WRITTEN),
        "reading_label": READING_LABELS[claim.reading],
        "threshold": claim.threshold.text(),
        "verdicts": [],
        "across": across,
        "summary": across["verdict"],
    }


def _check_peak_columns(claim: Claim, names: list[str], where: str) -> None:
    """A claim decided by its peaks returns a peak with its neighbours: else every verdict would pass as
    resolved without a word."""
    if claim.decidable_by is None:
        return
    given = [columns for columns in (PEAK_COLUMNS, OVER_PEAK_COLUMNS) if columns[0] in names]
    if not given:
        raise LabError(f"{where}: decidable_by {claim.decidable_by} needs the column peak (or over_peak)")
    for columns in given:
        lacking = [name for name in columns[1:3] if name not in names]
        if lacking:
            raise LabError(f"{where}: {columns[0]} needs its neighbours too (missing: {', '.join(lacking)})")


# Points a reason names one by one, past which it gives their count.
UNSTEADY_NAMED_UP_TO = 3


class Runs(BaseModel):
    """What main.measured says of one machine's windows in one experiment: when, how many were
    client-bound, in which profile, and the most steal and CPU pressure any of them saw."""

    first: str | None
    last: str | None
    client_saturated: int
    profile: str | None = None
    server_cores: float | None = None
    steal_pct_max: float | None = None
    cpu_pressure_pct_max: float | None = None
    # How the windows were run, as the rows say (connlab.data.verdict_conditions).
    passes: int | None = None
    window_lengths_s: list[int] = []
    client_grid: list[int] = []
    pool_sizes: list[int] = []
    cpu_methods: list[str] = []
    # Points whose rates were left out for connecting too long, in words (connlab.data.views).
    unsteady_points: list[str] = []
    # The calibrations of its runs that lie off the machine's (connlab.data.main_tables), tps.
    off_calibrations: list[float] = []


def measured_runs(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], Runs]:
    """Each (machine, experiment)'s dates and client-bound windows, from main.measured (none where the
    database has no such table: a claim over tables of its own)."""
    try:
        cursor = con.execute("SELECT * FROM main.measured")
    except duckdb.CatalogException:
        return {}
    names = [column[0] for column in cursor.description]
    rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    return {
        (str(row["machine"]), str(row["experiment"])): Runs(
            first=None if row.get("first_window") is None else str(row["first_window"]),
            last=None if row.get("last_window") is None else str(row["last_window"]),
            client_saturated=int(row.get("windows_client_saturated") or 0),
            profile=None if row.get("profile") is None else str(row["profile"]),
            server_cores=row.get("server_cores"),
            steal_pct_max=row.get("steal_pct_max"),
            cpu_pressure_pct_max=row.get("cpu_pressure_pct_max"),
            passes=row.get("passes"),
            window_lengths_s=row.get("window_lengths_s") or [],
            client_grid=row.get("client_grid") or [],
            pool_sizes=row.get("pool_sizes") or [],
            cpu_methods=row.get("cpu_methods") or [],
            unsteady_points=row.get("unsteady_points") or [],
            off_calibrations=row.get("off_calibrations") or [],
        )
        for row in rows
    }


def unverified_reason(facts: dict | None, runs: list[Runs]) -> str | None:
    """Why nothing shows that a measured machine's verdict came from one machine under one load, in a
    sentence (None where its runs agree with the machine's calibration, connlab.contract.provenance): its
    folder records no calibration, or a run the verdict reads calibrated further from it than the
    calibration's spread."""
    known = facts or {}
    if known.get("calibrated") is False:
        return "This machine records no calibration, so nothing checked that its runs came from one machine."
    reference = known.get("calibration_tps")
    off = sorted({tps for r in runs for tps in r.off_calibrations})
    if not off or reference is None:
        return None
    figures = " and ".join(f"{tps:,.0f}" for tps in off)
    return (
        f"{'A run' if len(off) == 1 else 'Runs'} this verdict reads calibrated at {figures} tps, this "
        f"machine at {reference:,.0f} tps: further apart than the calibration's spread, so the machine "
        "was under other load then, or another machine measured them."
    )


def measured_on(runs: list[Runs]) -> str | None:
    """The days the windows were measured: '2026-12-01', or '2026-11-30 to 2026-12-01' over several."""
    days = sorted({day[:10] for r in runs for day in (r.first, r.last) if day})
    if not days:
        return None
    return days[0] if days[0] == days[-1] else f"{days[0]} to {days[-1]}"


def claim_experiments(claim: Claim) -> list[str]:
    """The experiments whose tables one claim's query reads."""
    schemas = set(_SCHEMA_REFERENCE.findall(claim.query))
    return sorted(name for name in experiment_names() if name.replace("-", "_") in schemas)


def _check_client(claim: Claim, verdict: dict, runs: dict[str, Runs], where: str) -> None:
    """A claim that reads an experiment with client-bound windows on this machine must say whether its own
    points were: else a verdict could rest on the load generator without a word."""
    if claim.client_bound != "reported" or verdict["verdict"] == NOT_MEASURED:
        return
    if verdict["client_saturated"] is not None:
        return
    bound = {name: r.client_saturated for name, r in runs.items() if r.client_saturated}
    if bound:
        named = ", ".join(f"{name} ({n} client-bound windows)" for name, n in sorted(bound.items()))
        raise LabError(
            f"{where}: reads {named}; return client_saturated (and client_cpu) for the claim's own points"
        )


def check_claim(
    con: duckdb.DuckDBPyConnection,
    claim: Claim,
    path: Path,
    machines: list[str],
    measured: list[str],
    kept: dict[str, dict] | None = None,
    runs: dict[tuple[str, str], Runs] | None = None,
    facts: dict[str, dict] | None = None,
) -> dict:
    """The claim's verdicts. kept: a claim per machine's verdicts from the last build, by machine, for the
    machines whose data did not change since; only the other machines' rows are queried. runs: main.measured
    by machine and experiment (measured_runs), facts: each machine's versions and cores (machine_facts), both
    read once per claims file."""
    runs = measured_runs(con) if runs is None else runs
    facts = machine_facts(con) if facts is None else facts
    experiments = claim_experiments(claim)
    kinds = pooler_kinds(experiments)
    if kept is not None and claim.scope == "machine":
        redone = [machine for machine in machines if machine not in kept]
        # The query's rows of those machines alone: DuckDB pushes the filter down into most queries.
        query = (
            f"SELECT * FROM (\n{claim.query.strip().rstrip(';')}\n) AS claim_rows "
            f"WHERE machine::VARCHAR IN {sql_in_list(redone)}"
        )
    else:
        kept, query = {}, claim.query
    try:
        cursor = con.execute(query)
        names = [column[0] for column in cursor.description]
        rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    except duckdb.Error as error:
        raise LabError(f"{path}: claim {claim.id}: query failed: {str(error).splitlines()[0]}") from error
    if claim.scope == "across":
        return _check_across(claim, rows, names, path)

    def verdict_of(machine: str) -> dict:
        where = f"{path}: claim {claim.id}: {machine}"
        own = {name: runs[(machine, name)] for name in experiments if (machine, name) in runs}
        unsteady = sorted({text for r in own.values() for text in r.unsteady_points})
        verdict = _verdict(claim, by_machine.get(machine), where, gated=machine in among, unsteady=unsteady)
        _check_client(claim, verdict, own, where)
        if verdict["verdict"] != NOT_MEASURED:
            verdict["measured_on"] = measured_on(list(own.values()))
            if own or machine in facts:  # a claim over tables of its own knows no conditions
                verdict["conditions"] = conditions(
                    [{"experiment": name, **r.model_dump()} for name, r in own.items()],
                    facts.get(machine),
                    kinds,
                )
                # Every experiment it reads ran one pass here: whatever the query says, one reading.
                if verdict["conditions"]["passes"] == 1 and verdict["readings"] is None:
                    verdict["readings"] = 1
                # A source's printed figure is judged as printed; a measured machine's verdict is only as
                # firm as the least thorough profile of the windows it reads.
                verdict["indicative"] = machine in among and is_indicative(verdict["conditions"]["profile"])
                if machine in among:
                    verdict["unverified"] = unverified_reason(facts.get(machine), list(own.values()))
        return {"machine": machine, **verdict}

    among = set(measured)
    missing = {"machine", "value"} - set(names)
    if missing:
        raise LabError(
            f"{path}: claim {claim.id}: query must return columns machine and value "
            f"(missing: {', '.join(sorted(missing))})"
        )
    _check_peak_columns(claim, names, f"{path}: claim {claim.id}")
    by_machine: dict[str, dict] = {}
    for row in rows:
        machine = str(row["machine"])
        if machine in by_machine:
            raise LabError(f"{path}: claim {claim.id}: more than one row for machine {machine}")
        by_machine[machine] = row
    verdicts = [kept[machine] if machine in kept else verdict_of(machine) for machine in machines]
    return {
        **claim.model_dump(exclude=NOT_WRITTEN),
        "reading_label": READING_LABELS[claim.reading],
        "threshold": claim.threshold.text(),
        "verdicts": verdicts,
        "summary": summarise(verdicts, measured),
    }


_SCHEMA_REFERENCE = re.compile(r"\b([a-z][a-z0-9_]*)\.[a-z_]")


def experiments_read(claims: ClaimsFile) -> list[str]:
    """The experiments whose tables the claims query (each experiment's SQL runs in a schema named after
    it): a verdict is only as firm as the profile those experiments ran in."""
    schemas = {match for claim in claims.claims for match in _SCHEMA_REFERENCE.findall(claim.query)}
    return sorted(name for name in experiment_names() if name.replace("-", "_") in schemas)


class JudgedClaims(NamedTuple):
    """A claims file as written, and what it holds: the answers read it next in the same process, which
    need not parse every machine's verdicts again."""

    path: Path
    payload: dict


def judge_claims(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    machines: list[str],
    out_dir: Path,
    measured: list[str] | None = None,
    changed: set[str] | None = None,
    read: tuple[dict[tuple[str, str], Runs], dict] | None = None,
) -> JudgedClaims:
    """Write build/data/claims/<slug>.json: the source's id and every claim with a verdict per machine; return
    what it wrote with the file's path. changed: the only machines whose data changed since the file was
    written, with the same claims and code (None: every verdict is computed again). A machine's verdict
    depends on its own data alone (each claim's query returns a row per machine, and
    tests/data/test_aggregate_incremental.py checks that the file is the one a build from nothing writes),
    so the others' verdicts are read back from the file. read: what every article's claims read of the
    database alike (measured_runs, machine_facts), where the caller judging several has read it once (a read
    that grows with the machines)."""
    claims = load_yaml_model(path, ClaimsFile)
    measured = measured if measured is not None else machines
    target = out_dir / path.name.replace(".claims.yaml", ".json")
    before = _verdicts_before(target, changed)
    runs, facts = read if read is not None else (measured_runs(con), machine_facts(con))
    results = [
        check_claim(
            con, claim, path, machines, measured, _kept(before, claim.id, machines, changed), runs, facts
        )
        for claim in claims.claims
    ]
    out_dir.mkdir(parents=True, exist_ok=True)
    payload = {"source": claims.source, "claims": results, "experiments": experiments_read(claims)}
    # orjson: json's encoder is slow over a thousand machines' verdicts.
    write_bytes_if_changed(target, canonical_bytes(payload))
    remember_written(target, payload)
    return JudgedClaims(target, payload)


def _verdicts_before(target: Path, changed: set[str] | None) -> dict[str, dict[str, dict]] | None:
    """The file's verdicts per claim and machine, where the caller says they still hold for some machines."""
    if changed is None or not target.is_file():
        return None
    try:
        written = loads_fast(target.read_bytes())
        return {
            str(claim["id"]): {str(verdict["machine"]): verdict for verdict in claim["verdicts"]}
            for claim in written["claims"]  # type: ignore[index]
        }
    except (ValueError, KeyError, TypeError):
        return None  # not a file this code wrote: every verdict is computed again


def _kept(
    before: dict[str, dict[str, dict]] | None, claim: str, machines: list[str], changed: set[str] | None
) -> dict[str, dict] | None:
    """The claim's verdicts that still hold: those of the machines whose data did not change, where the file
    has every one of them (else None: the claim is checked on every machine)."""
    if before is None or changed is None or claim not in before:
        return None
    written = before[claim]
    kept = {
        machine: written[machine] for machine in machines if machine not in changed and machine in written
    }
    return kept if len(kept) == sum(machine not in changed for machine in machines) else None
