"""backends: the most client backends the server had on the benchmark database during the window, counted
once a second: how many connections the server really saw (admission control through a pooler). Backends
that another pooler kept from earlier windows (WindowContext.foreign_backends) are not counted."""

from __future__ import annotations

from typing import Any

from connlab.contract.probes import BACKEND_PIDS_SQL
from connlab.lab.samplers.base import ThreadedProbe


class BackendSampler(ThreadedProbe):
    name = "backends"
    max_backends = 0

    def poll(self, session: Any) -> bool:
        pids = {row[0] for row in session.execute(BACKEND_PIDS_SQL).fetchall()}
        self.max_backends = max(self.max_backends, len(pids - self.context.foreign_backends))
        return True

    def figures(self) -> dict[str, object]:
        return {"server_backends_max": self.max_backends}
