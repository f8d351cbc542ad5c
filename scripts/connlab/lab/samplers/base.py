"""One base class for every in-window probe: a thread of its own that polls at the probe's interval while
pgbench runs, from a session of its own (a server connection, or a pooler's admin console).

A sampler never fails a window: a lost connection ends its polling and it reports what it saw so far.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Self

import psycopg

from connlab.contract.probes.declaration import Probe
from connlab.contract.probes.registry import PROBES
from connlab.lab.cpu_budget import CpuBudget
from connlab.lab.poolers.base import PoolerProcess


@dataclass(frozen=True)
class WindowContext:
    """What a sampler may need of the window it watches."""

    conninfo: str  # the server, as the harness's superuser, not on the benchmark database
    clients: int
    duration_s: int
    budget: CpuBudget
    pooler: PoolerProcess | None = None  # the pooler the window's clients go through, if any
    database: str = ""  # the database name the clients connect to (a pooler's alias, for the pools probe)
    # Backends another pooler held before the window and cannot close (PgPool-II's cached ones): not the
    # window's, so the backends probe leaves them out.
    foreign_backends: frozenset[int] = frozenset()


class ThreadedProbe:
    name: ClassVar[str]  # a key of connlab.contract.probes.registry.PROBES

    def __init__(self, context: WindowContext) -> None:
        self.context = context
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def probe(self) -> Probe:
        return PROBES[self.name]

    @contextlib.contextmanager
    def session(self) -> Iterator[Any]:
        """What poll() reads from; by default a connection to the server of its own."""
        with psycopg.connect(self.context.conninfo, autocommit=True) as conn:
            yield conn

    def poll(self, session: Any) -> bool:
        """One poll; False when the probe has what it came for and stops polling."""
        raise NotImplementedError

    def figures(self) -> dict[str, object]:
        """The probe's columns of the window's row."""
        raise NotImplementedError

    def stopped(self, wait_s: float) -> bool:
        """Wait up to wait_s; True when the window ended meanwhile."""
        return self._stop.wait(wait_s)

    def _run(self) -> None:
        with contextlib.suppress(psycopg.Error), self.session() as session:
            if session is None:
                return
            while not self._stop.wait(self.probe.interval_s):
                if not self.poll(session):
                    return

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
