"""The committed results aggregate to the same facts and claims as before the code was reshaped.

tests/fixtures/facts_before/ holds what aggregation wrote from the committed results before the contract
layer, the pooler registry and the points view replaced the code that made them. Every figure on the site is
drawn from these files, so equal files mean the pages show the same figures. When a results file is added
on purpose, regenerate the fixture: `CONNLAB_BUILD_DIR=/tmp/x connlab aggregate` and copy build/data's
facts/, claims/ and machines.json here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from connlab.data.aggregate import aggregate_all

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "facts_before"


@pytest.fixture(scope="module")
def aggregated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out_dir = tmp_path_factory.mktemp("data")
    aggregate_all(out_dir=out_dir)
    return out_dir


def _fixture_files() -> list[Path]:
    return sorted(path.relative_to(FIXTURE) for path in FIXTURE.rglob("*.json"))


def test_fixture_holds_every_facts_file() -> None:
    names = {str(path) for path in _fixture_files()}
    assert {"machines.json", "facts/too-many-connections.json", "facts/pool-sizing.json"} <= names


@pytest.mark.parametrize("relative", _fixture_files(), ids=str)
def test_same_as_before(aggregated: Path, relative: Path) -> None:
    before = json.loads((FIXTURE / relative).read_text())
    after = json.loads((aggregated / relative).read_text())
    assert after == before
