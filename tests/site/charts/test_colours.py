"""connlab.site.charts.colours: one colour per pooler kind, the same on every chart, from constants.json."""

from __future__ import annotations

import re

import pytest

from connlab.contract.poolers.registry import discover
from connlab.site.charts.colours import COLOUR_FIELD, coloured, colours_of, kind_in
from connlab.site.charts.constants import POOLER_COLOURS, SPARE_COLOURS
from connlab.site.charts.html import render_svg
from connlab.site.charts.kinds import (
    pooler_memory_dots,
    pooler_rss_over_time,
    pooler_throughput_dots,
    throughput_by_pooler,
)

HEX = re.compile(r"^#[0-9a-f]{6}$")


def test_every_pooler_folder_and_direct_have_a_colour_of_their_own() -> None:
    assert set(discover()) | {"direct"} <= set(POOLER_COLOURS)
    colours = [*POOLER_COLOURS.values(), *SPARE_COLOURS]
    assert all(HEX.match(colour) for colour in colours), colours
    assert len(set(colours)) == len(colours)  # no two kinds, nor a spare, alike


def test_a_kind_without_a_colour_takes_a_spare_no_other_kind_of_the_chart_has() -> None:
    given = colours_of(["pgbouncer", "newpooler", "otherpooler"])
    assert given["pgbouncer"] == POOLER_COLOURS["pgbouncer"]
    assert given["newpooler"] in SPARE_COLOURS and given["otherpooler"] in SPARE_COLOURS
    assert given["newpooler"] != given["otherpooler"]
    with pytest.raises(ValueError, match=r"constants\.json"):
        colours_of([f"pooler{i}" for i in range(len(SPARE_COLOURS) + 1)])


def test_series_that_share_a_colour_are_refused() -> None:
    """A field range pairs the sorted values with the sorted colours: two values of one colour would
    shift every colour after them, so the rows are refused instead."""
    rows = [{"series": "a", "pooler": "pgbouncer"}, {"series": "b", "pooler": "pgbouncer"}]
    with pytest.raises(ValueError, match="one to one"):
        coloured(rows, "pooler", "series")
    assert [r[COLOUR_FIELD] for r in coloured(rows[:1], "pooler", "series")] == [POOLER_COLOURS["pgbouncer"]]


def dots(poolers: tuple[str, ...]) -> list[dict]:
    return [
        {"point": f"box, {clients} clients", "series": pooler, "pooler": pooler, "machines": 1,
         "value": 100.0 * (i + 1), "low": 90.0 * (i + 1), "high": 110.0 * (i + 1)}
        for clients in (10, 100)
        for i, pooler in enumerate(poolers)
    ]  # fmt: skip


def fills(svg: str) -> set[str]:
    return set(re.findall(r'(?:fill|stroke)="(#[0-9a-f]{6})"', svg))


@pytest.mark.parametrize("kind", [pooler_throughput_dots, pooler_memory_dots], ids=["throughput", "memory"])
def test_a_pooler_has_its_colour_whichever_poolers_share_the_chart(kind: object) -> None:
    """The default scheme gives the first pooler of each chart its first colour: with pgbouncer absent,
    Odyssey took PgBouncer's blue. Drawn from the rows' colours, each keeps its own."""
    with_all = fills(render_svg(kind(dots(("pgbouncer", "pgpool", "odyssey")))))  # type: ignore[operator]
    without = fills(render_svg(kind(dots(("pgpool", "odyssey")))))  # type: ignore[operator]
    assert {POOLER_COLOURS[p] for p in ("pgbouncer", "pgpool", "odyssey")} <= with_all
    assert {POOLER_COLOURS["pgpool"], POOLER_COLOURS["odyssey"]} <= without
    assert POOLER_COLOURS["pgbouncer"] not in without


def test_the_sustained_chart_colours_each_pass_of_a_pooler_as_its_kind() -> None:
    rows = [
        {"pooler": pooler, "seconds": seconds, "rss_mib": 5.0 + seconds}
        for pooler in ("pgbouncer, pass 1", "pgbouncer, pass 2", "odyssey, pass 1")
        for seconds in (0, 10)
    ]
    spec = pooler_rss_over_time(rows)
    assert spec["encoding"]["color"]["field"] == "kind" and spec["encoding"]["detail"]["field"] == "pooler"
    svg = render_svg(spec)
    assert {POOLER_COLOURS["pgbouncer"], POOLER_COLOURS["odyssey"]} <= fills(svg)
    assert POOLER_COLOURS["pgpool"] not in fills(svg)
    assert "pgbouncer" in svg


def test_a_workload_is_drawn_in_the_colour_of_the_pooler_kind_its_id_names() -> None:
    assert kind_in("churn-pgbouncer-scram") == "pgbouncer"
    assert kind_in("churn-direct") == "direct"
    assert kind_in("pooled-pgbouncer-pair") == "pgbouncer-pair"  # the longest kind named, not its first word
    with pytest.raises(ValueError, match="'mixed' names no pooler kind"):
        kind_in("mixed")


def test_the_line_chart_of_direct_against_pgbouncer_draws_each_in_its_kinds_colour() -> None:
    rows = [
        {"workload": workload, "clients": n, "tps_median": tps * n, "tps_min": tps * n, "tps_max": tps * n}
        for workload, tps in (("churn-pgbouncer", 100.0), ("churn-direct", 30.0))
        for n in (1, 4)
    ]
    spec = throughput_by_pooler(rows)
    band, line = spec["layer"]
    assert band["encoding"]["color"]["scale"]["range"] == {"field": COLOUR_FIELD}
    assert "scale" not in line["encoding"]["color"]  # one layer holds the range (no conflict to warn of)
    svg = render_svg(spec)
    assert {POOLER_COLOURS["pgbouncer"], POOLER_COLOURS["direct"]} <= fills(svg)
