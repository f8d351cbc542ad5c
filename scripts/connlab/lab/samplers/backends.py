"""backends: the most client backends the server had on the benchmark database during the window, counted
once a second: how many connections the server really saw (admission control through a pooler)."""

from __future__ import annotations

from typing import Any

from connlab.contract.probes import BACKENDS_SQL
from connlab.lab.samplers.base import ThreadedProbe


class BackendSampler(ThreadedProbe):
    name = "backends"
    max_backends = 0

    def poll(self, session: Any) -> bool:
        count = session.execute(BACKENDS_SQL).fetchone()[0]
        self.max_backends = max(self.max_backends, int(count))
        return True

    def figures(self) -> dict[str, object]:
        return {"server_backends_max": self.max_backends}
