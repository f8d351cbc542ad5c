"""What a probe declares (`Probe`, ending each folder's connlab/probes/<name>/probe.py as `PROBE`), and the
pg_stat_activity filter that the probes reading client backends, and the harness, share.

A probe runs beside pgbench during a window and fills columns of the window's row. Its declaration is what
every stage knows of it: the harness starts its sampler (sampler.py in the same folder), the data stage
reads its columns (connlab.contract.columns gathers them), and the site states its interval on the
methodology page and runs its snippet (snippet.sh.j2 in the same folder) in the check-it-yourself blocks.
"""

from __future__ import annotations

from dataclasses import dataclass

from connlab.contract.column import Column
from connlab.contract.names import BENCH_DB


@dataclass(frozen=True)
class Probe:
    name: str  # its folder's name; experiment.yaml lists it under `probes:`
    # Seconds between polls while the window runs; the snippet's psql \watch uses the same.
    interval_s: float
    # The columns it fills. Another probe's columns may be named again (the same objects, imported from
    # that probe's folder): a column is declared once, by whichever probe places it first.
    columns: tuple[Column, ...]
    what: str  # one line for the methodology page
    # The column its columns follow in a row; None: after every other column. Existing results files
    # keep their column order this way when a probe moves or is added.
    after: str | None = None
    # The query its sampler polls with, which its snippet runs too (`probe.query`); empty: none.
    query: str = ""
    # Runs only on windows whose clients go through a pooler (it asks the pooler).
    needs_pooler: bool = False
    # Its snippet reads the pooler's admin console (SHOW POOLS): only where the block knows one.
    needs_admin_console: bool = False

    @property
    def interval_ms(self) -> int:
        return every_ms(self.interval_s)

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)


def every_ms(interval_s: float) -> int:
    """An interval in ms as pages and column descriptions state it (Probe.interval_ms, before a Probe)."""
    return round(1000 * interval_s)


# Each probe's query runs from a connection of its own and leaves that connection out.
CLIENT_BACKENDS = f"backend_type = 'client backend' AND datname = '{BENCH_DB}' AND pid <> pg_backend_pid()"
# The harness counts the window's backends before it starts (connlab.lab.window).
BACKENDS_SQL = f"SELECT count(*) FROM pg_stat_activity WHERE {CLIENT_BACKENDS}"
