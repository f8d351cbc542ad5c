"""Where machines' verdicts on one claim differ, what differs between them: one sentence per claim under an
article's verdict table.

Each verdict carries the conditions it was measured under (connlab.data.verdict_conditions) and pgbench's
load at the claim's points (client_saturated, client_cpu). For a claim judged differently on two or more
machines (holds, does not hold, inconclusive), the machines are grouped by verdict and each group is described
by the conditions that are not the same on every machine: the profile, the most steal and CPU pressure the
host took in the claim's experiments, whether pgbench saturated its cores at the claim's points, the
PostgreSQL and pooler versions, the server cores, and how the windows were run as their rows say: passes,
window lengths, the client grid, pool sizes and CPU accounting. Where none differs, the sentence says so:
the passes' own spread is then what sets the verdicts apart. Every figure comes from the verdicts; the partial
_disagreements.md.j2 only joins the words written here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from connlab.data.claims import DOES_NOT_HOLD, HOLDS, INCONCLUSIVE

# The verdicts that judged the claim; 'cannot be evaluated' gives its own reason in its cell.
MEASURED = (HOLDS, DOES_NOT_HOLD, INCONCLUSIVE)

# Steal differs where the larger is at least this many percentage points and twice the smaller: below that,
# a hypervisor's background steal on two machines reads alike.
STEAL_DIFFERS_PCT = 2.0
# CPU pressure runs high in every window that loads the server (the server's cores are meant to be busy):
# only a gap this wide, in percentage points, sets two machines apart.
PRESSURE_DIFFERS_PCT = 20.0

Cell = Mapping[str, object]


def _conditions(cell: Cell) -> Mapping[str, object]:
    found = cell.get("conditions")
    return found if isinstance(found, Mapping) else {}


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _spread_differs(values: list[float | None], floor: float, factor: float | None) -> bool:
    known = [v for v in values if v is not None]
    if len(known) < 2:
        return False
    low, high = min(known), max(known)
    if high - low < floor:
        return False
    return factor is None or high >= factor * low


def _pct_range(values: list[float | None], word: str) -> str | None:
    known = sorted(v for v in values if v is not None)
    if not known:
        return None
    low, high = f"{known[0]:.2g}", f"{known[-1]:.2g}"
    return f"{word} up to {low}%" if low == high else f"{word} up to {low}–{high}%"


def _distinct(values: list[str | None], unknown: str) -> str:
    seen: list[str] = []
    for value in values:
        text = unknown if value is None else value
        if text not in seen:
            seen.append(text)
    return " or ".join(seen)


def _client(cell: Cell) -> str:
    """pgbench at the claim's points, in words."""
    share = _number(cell.get("client_cpu"))
    if cell.get("client_saturated"):
        return f"pgbench saturated ({share:.2f} of its cores)" if share is not None else "pgbench saturated"
    if cell.get("client_saturated") is None:
        return "pgbench's load not reported"
    return "pgbench below saturation"


def _cores(value: object) -> str | None:
    number = _number(value)
    return None if number is None else f"{number:g} server core{'' if number == 1 else 's'}"


def _profile(value: object) -> str | None:
    return None if value is None else f"{value} profile"


# Each condition: its name in words, how one cell reads it, and how a group of cells is described.
Trait = tuple[str, Callable[[list[Cell]], bool], Callable[[list[Cell]], str | None]]


def _texts(read: Callable[[Cell], str | None], unknown: str) -> Callable[[list[Cell]], str]:
    return lambda cells: _distinct([read(c) for c in cells], unknown)


def _differs_text(read: Callable[[Cell], str | None]) -> Callable[[list[Cell]], bool]:
    return lambda cells: len({read(c) for c in cells}) > 1


def _pooler_versions(cell: Cell) -> str | None:
    poolers = _conditions(cell).get("poolers") or {}
    assert isinstance(poolers, Mapping)
    return ", ".join(f"{kind} {version}" for kind, version in sorted(poolers.items())) or None


def _steal(cell: Cell) -> float | None:
    return _number(_conditions(cell).get("steal_pct_max"))


def _pressure(cell: Cell) -> float | None:
    return _number(_conditions(cell).get("cpu_pressure_pct_max"))


def _listed(key: str, describe: Callable[[list[int] | list[str]], str]) -> Callable[[Cell], str | None]:
    """A condition that is a list (the client grid, window lengths...), in words; None where unrecorded."""

    def read(cell: Cell) -> str | None:
        values = _conditions(cell).get(key)
        return describe(values) if isinstance(values, list) and values else None

    return read


def _joined_numbers(values: list[int] | list[str]) -> str:
    return ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)


_windows = _listed("window_lengths_s", lambda v: f"{_joined_numbers(v)}-s windows")
_grid = _listed("client_grid", lambda v: f"clients {_joined_numbers(v)}")
_pools = _listed("pool_sizes", lambda v: f"pool{'s' if len(v) != 1 else ''} of {_joined_numbers(v)}")
_cpu = _listed("cpu_methods", lambda v: f"CPU budgets by {' and '.join(map(str, v))}")


def _pass_count(cell: Cell) -> str | None:
    number = _number(_conditions(cell).get("passes"))
    return None if number is None else f"{number:g} pass{'' if number == 1 else 'es'}"


def _recorded(read: Callable[[Cell], str | None], name: str, unknown: str | None = None) -> Trait:
    """A condition read from the rows: it differs where two machines recorded it differently."""
    return (name, _differs_text(read), _texts(read, unknown or f"{name} unknown"))


TRAITS: list[Trait] = [
    (
        "profile",
        _differs_text(lambda c: _profile(_conditions(c).get("profile"))),
        _texts(lambda c: _profile(_conditions(c).get("profile")), "profile unknown"),
    ),
    (
        "steal",
        lambda cells: _spread_differs([_steal(c) for c in cells], STEAL_DIFFERS_PCT, 2.0),
        lambda cells: _pct_range([_steal(c) for c in cells], "steal"),
    ),
    (
        "CPU pressure",
        lambda cells: _spread_differs([_pressure(c) for c in cells], PRESSURE_DIFFERS_PCT, None),
        lambda cells: _pct_range([_pressure(c) for c in cells], "CPU pressure"),
    ),
    ("pgbench's load", _differs_text(_client), _texts(_client, "pgbench's load not reported")),
    (
        "PostgreSQL version",
        _differs_text(lambda c: _conditions(c).get("postgres_version")),  # type: ignore[arg-type,return-value]
        _texts(lambda c: f"PostgreSQL {_conditions(c).get('postgres_version')}", "PostgreSQL unknown"),
    ),
    ("pooler versions", _differs_text(_pooler_versions), _texts(_pooler_versions, "no pooler")),
    (
        "server cores",
        _differs_text(lambda c: _cores(_conditions(c).get("server_cores"))),
        _texts(lambda c: _cores(_conditions(c).get("server_cores")), "server cores unknown"),
    ),
    _recorded(_pass_count, "passes"),
    _recorded(_windows, "window lengths"),
    _recorded(_grid, "client grid"),
    _recorded(_pools, "pool sizes", "no pool"),
    _recorded(_cpu, "CPU accounting"),
]


def disagreement(row: Mapping[str, object]) -> dict | None:
    """One claim's disagreement, from its answers row (connlab.data.answers.claim_rows.claim_row): the
    verdicts with their machines (all of them; the caller names the first few) and, per verdict, the
    conditions that differ across the machines; None where the machines that judged the claim agree."""
    cells = [c for c in row.get("cells") or [] if c.get("verdict") in MEASURED]  # type: ignore[attr-defined]
    verdicts = [v for v in MEASURED if any(c["verdict"] == v for c in cells)]
    if len(verdicts) < 2:
        return None
    differing = [trait for trait in TRAITS if trait[1](cells)]
    groups = []
    for verdict in verdicts:
        own = [c for c in cells if c["verdict"] == verdict]
        traits = [text for _, _, describe in differing if (text := describe(own))]
        groups.append({"verdict": verdict, "machines": [str(c["machine"]) for c in own], "traits": traits})
    return {
        "id": row["id"],
        "claim": row["claim"],
        "groups": groups,
        "differs": [name for name, _, _ in differing],
        "alike": [name for name, _, _ in TRAITS if all(name != d for d, _, _ in differing)],
    }


def disagreements(rows: list[Mapping[str, object]]) -> list[dict]:
    """Every claim of an article whose machines disagree, in the article's order."""
    return [found for row in rows if (found := disagreement(row))]
