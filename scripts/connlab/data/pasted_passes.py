"""A pass pasted from another: two passes of one window in a run file that agree in every measured figure.

The passes of a window exist to show how far its measurement moves from one pass to the next; a pass copied
from another shows a range of zero, which the site would take for a steady machine. Two real passes never
agree in all of a window's measured figures (connlab.contract.columns.MEASURED_COLUMNS: tps, latencies, CPU,
steal and pressure, to the digits the harness writes), though they may in any one of them: a fixed-rate
workload's tps repeats, and steal is often 0.0 in both. A window that measured no throughput (no tps, or
0: it failed before pgbench counted anything) has nothing to paste, and is never one.

The figures are compared as written: a copy is the same text. Candidates are found by tps alone, so that the
quick checks of validation (connlab.data.validate) pay for a comparison of every figure only where two
passes' tps agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from connlab.contract.columns import MEASURED_COLUMNS


def same_throughput(places: Sequence[Sequence[str]], rates: Sequence[str]) -> list[tuple[int, int]]:
    """The candidates for a pasted pass: (later, earlier) positions of two windows at one place in different
    passes with the same measured tps, each later window with each earlier one, in the order given. places:
    each window's connlab.data.row_shapes.PLACE_COLUMNS (its pass first), rates: its tps as written."""
    earlier: dict[tuple[str, ...], list[tuple[str, int]]] = {}
    pairs: list[tuple[int, int]] = []
    for index, ((pass_no, *place), rate) in enumerate(zip(places, rates, strict=True)):
        if not rate:
            continue
        seen = earlier.setdefault((*place, rate), [])
        if seen and float(rate) > 0:
            pairs += [(index, before) for other_pass, before in seen if other_pass != pass_no]
        seen.append((pass_no, index))
    return pairs


def is_pasted(later: Mapping[str, str], earlier: Mapping[str, str]) -> bool:
    """Whether two windows' rows agree in every measured figure (a column a file lacks is empty in both)."""
    return all(later.get(name, "") == earlier.get(name, "") for name in MEASURED_COLUMNS)
