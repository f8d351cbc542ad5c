"""backends: the most client backends the server had on the benchmark database during the window, counted
once a second: how many connections the server really saw (admission control through a pooler). Backends
that another pooler kept from earlier windows (WindowContext.foreign_backends, which the window tells apart
by client port: connlab.lab.window.foreign_backends) are not counted, so a pooler that keeps its pool open
between windows (Odyssey, PgPool-II) still counts its own backends, and only another pooler's are left out.
"""

from __future__ import annotations

from typing import Any

from connlab.lab.samplers.base import ThreadedProbe


class BackendSampler(ThreadedProbe):
    name = "backends"
    max_backends = 0

    def poll(self, session: Any) -> bool:
        pids = {row[0] for row in session.execute(self.probe.query).fetchall()}
        self.max_backends = max(self.max_backends, len(pids - self.context.foreign_backends))
        return True

    def figures(self) -> dict[str, object]:
        return {"server_backends_max": self.max_backends}


SAMPLER = BackendSampler
