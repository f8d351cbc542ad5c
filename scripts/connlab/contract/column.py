"""One column of a raw results CSV: its DuckDB type and the constraints validation holds it to.

Its own module because two kinds of place declare columns: the window's own (connlab.contract.columns)
and each probe's, in its folder (connlab/probes/<name>/probe.py), which the CSV contract gathers.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # DuckDB type
    description: str
    required: bool = True  # False: may be empty (the figure was not measured in that window)
    # Added after results were first committed: files written before lack the column entirely.
    added_later: bool = False
    # May be empty in a failed window, never in one marked ok (ok means pgbench reported it).
    required_when_ok: bool = False
    # The least valid value (counts, times and shares are never negative); None: no lower bound.
    minimum: float | None = None
    # A regular expression a non-empty value must match, and how the error message describes it.
    pattern: str | None = None
    pattern_hint: str = ""
