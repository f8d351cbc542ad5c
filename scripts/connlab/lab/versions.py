"""Several PostgreSQL major versions in one run, one server at a time (the pg-versions experiment).

Each version named in `server.versions` gets its own throwaway cluster from its pinned build (the same
source for every version, so builds differ by version and not by packager), initialised, loaded, prewarmed
and given its roles the same way by `open_bench`, then paused. Before each window the harness starts the
window's version and pauses the one before: two servers never compete for the server's cores or memory,
and the windows of all versions interleave within every pass so drift hits each alike.

A plan without versions gets its single bench through the same interface, so the sweep has one loop.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from connlab.contract.experiment import Plan
from connlab.errors import LabError
from connlab.lab import pg_dist
from connlab.lab.host import as_server_user

if TYPE_CHECKING:
    from connlab.lab.bench import Bench

# open_bench(plan, name, bindir=None) from connlab.lab.bench, passed in by the sweep.
BenchOpener = Callable[..., AbstractContextManager["Bench"]]


@dataclass
class Benches:
    """The run's benches by PostgreSQL major (None: the machine's one PostgreSQL) and the one running."""

    by_major: dict[int | None, Bench]
    running: Bench | None = None

    def activate(self, major: int | None) -> Bench:
        """The bench of this version with its server started; the one running before is paused first."""
        bench = self.by_major[major]
        if bench is not self.running:
            if self.running is not None:
                self.running.cluster.pause()
            bench.cluster.start()
            self.running = bench
        return bench


@contextlib.contextmanager
def open_benches(plan: Plan, name: str, open_bench: BenchOpener) -> Iterator[Benches]:
    """Every bench the plan needs; one server running at a time when it compares versions."""
    versions = plan.spec.server.versions
    if not versions:
        with open_bench(plan, name) as bench:
            yield Benches({None: bench}, running=bench)
        return
    unknown = [major for major in versions if major not in pg_dist.PINS]
    if unknown:
        pinned = ", ".join(str(major) for major in pg_dist.PINS)
        raise LabError(f"server.versions: no pinned PostgreSQL build for {unknown}; pinned: {pinned}")
    with contextlib.ExitStack() as stack:
        benches: dict[int | None, Bench] = {}
        for major in versions:
            bindir = pg_dist.ensure(major, as_server_user)
            bench = stack.enter_context(open_bench(plan, f"{name}-pg{major}", bindir=bindir))
            bench.cluster.pause()
            benches[major] = bench
        # One pgbench, the newest version's, drives every server: only the server differs between them.
        client = benches[max(versions)].pgbench
        for bench in benches.values():
            bench.pgbench = client
        yield Benches(benches)
