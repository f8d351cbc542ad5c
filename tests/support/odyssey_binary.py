"""The Odyssey binary the tests run (tests/support/pooler_binary.py): the harness's own choice (ODYSSEY_BIN,
PATH, build/odyssey from `make poolers`), else ../shared/tools/odyssey/bin/odyssey; None where neither is
here."""

from __future__ import annotations

from pathlib import Path

from connlab.poolers.odyssey.adapter import Odyssey
from support.pooler_binary import find_pooler, skip_reason

SKIP_REASON = skip_reason(Odyssey)


def find_odyssey() -> Path | None:
    return find_pooler(Odyssey)
