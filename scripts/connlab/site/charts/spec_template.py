"""A chart's spec built once per kind, and each chart's rows (and params) put into it: Altair is slow to build
a chart, and a thousand machines' pages hold thousands of charts.

A template is a spec whose layers that draw the chart's rows hold no rows (`{"values": []}`); with_rows()
points them at one named dataset holding the rows, so a layered chart also carries its rows once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from connlab.site.charts.constants import ROWS_DATASET

# The dataset a template's rows are given under (ROWS_DATASET); every layer that drew from no rows reads it.
NO_ROWS: dict[str, list] = {"values": []}


def _map_data(node: Any, change: Callable[[Any], Any]) -> tuple[Any, int]:
    """The spec with change(data) for every `data` of a view; and how many views change() changed."""
    changed = 0

    def walk(item: Any) -> Any:
        nonlocal changed
        if isinstance(item, list):
            return [walk(value) for value in item]
        if not isinstance(item, dict):
            return item
        if "data" in item:
            new = change(item["data"])
            if new is not item["data"]:
                changed += 1
                item = {**item, "data": new}
        return {key: walk(value) if key != "data" else value for key, value in item.items()}

    return walk(node), changed


def with_rows(template: dict, rows: list[dict[str, Any]]) -> dict:
    """The template with every empty inline dataset naming the rows instead (a fixed dataset, such as a
    reference line's one value, is left as it is)."""
    named = {"name": ROWS_DATASET}
    spec, readers = _map_data(template, lambda data: named if data == NO_ROWS else data)
    if not readers:
        raise ValueError("a chart template needs a layer that draws from no rows")
    return {**spec, "datasets": {ROWS_DATASET: rows}}


def emptied(spec: dict, rows: list[dict[str, Any]]) -> dict:
    """A spec built from sample rows, made a template: the layers that hold those rows hold none."""
    template, emptied_views = _map_data(spec, lambda data: NO_ROWS if data == {"values": rows} else data)
    if not emptied_views:
        raise ValueError("the sample rows are not in the spec")
    return template
