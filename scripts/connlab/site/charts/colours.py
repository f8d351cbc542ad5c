"""One colour per pooler kind on every chart: each chart whose colours are poolers (the poolers head to
head, the cost of a new connection, memory under sustained load) gives each row its kind's colour from
constants.json, and draws its colour scale from that field (Vega-Lite's field range), so that PgBouncer is
the same colour on a chart with two poolers as on one with four, whichever others are drawn.

A field range pairs the scale's values, sorted, with the colours sorted by their value: it holds only where
each value of the chart has one colour and no two values share one, which coloured() makes sure of.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from connlab.site.charts.constants import POOLER_COLOURS, SPARE_COLOURS

# The field of a row that holds its colour (the scale's field range).
COLOUR_FIELD = "colour"


def colours_of(kinds: Iterable[str]) -> dict[str, str]:
    """Each kind's colour: its own from constants.json; a kind without one (a pooler folder added since)
    takes a spare colour that no other kind of the same chart has, in the kinds' order."""
    present = sorted(set(kinds))
    chosen = {kind: POOLER_COLOURS[kind] for kind in present if kind in POOLER_COLOURS}
    spares = [colour for colour in SPARE_COLOURS if colour not in chosen.values()]
    unknown = [kind for kind in present if kind not in chosen]
    if len(unknown) > len(spares):
        raise ValueError(
            f"pooler kinds {', '.join(unknown)} have no colour and the spare colours are too few: give each "
            "its own in connlab/site/charts/constants.json (pooler_colours)"
        )
    return {**chosen, **dict(zip(unknown, spares, strict=False))}


def kind_in(name: str) -> str:
    """The pooler kind (or "direct") a workload's id names among its dash-separated words, the longest
    first: "churn-pgbouncer-scram" is PgBouncer's, "churn-direct" goes straight to the server. An id that
    names none is refused, naming it, rather than drawn in a colour that says nothing."""
    words = name.split("-")
    spans = [
        "-".join(words[start:end])
        for length in range(len(words), 0, -1)
        for start in range(len(words) - length + 1)
        for end in [start + length]
    ]
    found = next((span for span in spans if span in POOLER_COLOURS), None)
    if found is None:
        raise ValueError(f"workload {name!r} names no pooler kind of constants.json's pooler_colours")
    return found


def coloured(records: Sequence[dict[str, object]], kind_field: str, series_field: str) -> list[dict]:
    """The rows with their kind's colour in COLOUR_FIELD. series_field: the field the chart's colour scale
    encodes, whose values must map one to one on the kinds (one colour each, none shared)."""
    colours = colours_of(str(record[kind_field]) for record in records)
    kinds_of: dict[str, set[str]] = {}
    for record in records:
        kinds_of.setdefault(str(record[series_field]), set()).add(str(record[kind_field]))
    shared = {series: kinds for series, kinds in kinds_of.items() if len(kinds) > 1}
    if shared or len(kinds_of) != len({next(iter(kinds)) for kinds in kinds_of.values()}):
        raise ValueError(f"the chart's {series_field} values and pooler kinds are not one to one: {kinds_of}")
    return [{**record, COLOUR_FIELD: colours[str(record[kind_field])]} for record in records]
