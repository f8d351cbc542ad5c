"""Adding a probe is adding one folder: a fake probe's folder, put on the registry's search path
(connlab.probes.__path__) in a fresh interpreter, is found by the registry and reaches every place that
names probes: the CSV contract's columns, an experiment's `probes:`, the harness's samplers, the methodology
page's list and the check-it-yourself block.

The fake folder holds exactly FAKE_FILES; nothing else in the tree is touched for it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from connlab.contract.columns import COLUMN_NAMES
from connlab.contract.probes.registry import PROBES, SNIPPETS
from connlab.errors import LabError
from connlab.lab.samplers.registry import SAMPLERS
from support.paths import REPO_ROOT

# The whole of a probe: its folder's four files (the package marker, the declaration with its columns, the
# harness's sampler, the check-it-yourself partial).
FAKE_FILES = {
    "fakeprobe/__init__.py": '"""A probe that exists only in a test."""\n',
    "fakeprobe/probe.py": """
        from connlab.contract.column import Column
        from connlab.contract.probes.declaration import Probe

        PROBE = Probe(
            "fakeprobe",
            0.2,
            (Column("fake_polls", "INTEGER", "polls of nothing", required=False, minimum=0),),
            "counts its own polls",
        )
        """,
    "fakeprobe/sampler.py": """
        import contextlib

        from connlab.lab.samplers.base import ThreadedProbe

        class FakeSampler(ThreadedProbe):
            name = "fakeprobe"
            polls = 0

            @contextlib.contextmanager
            def session(self):
                yield "no server"

            def poll(self, session):
                self.polls += 1
                return True

            def figures(self):
                return {"fake_polls": self.polls}

        SAMPLER = FakeSampler
        """,
    "fakeprobe/snippet.sh.j2": """
        {{ pgbench }} >/dev/null 2>&1 &
        echo "fake probe every {{ probe.interval_s }} s for {{ duration_s }} s"
        wait
        """,
}

# What the fresh interpreter checks, given the folder's parent (empty: the registry as it stands) and a
# scratch folder: each answer printed as one JSON object.
CHECK = """
import json, sys, time
from pathlib import Path

import connlab.probes

folders, scratch = Path(sys.argv[1]), Path(sys.argv[2])
if folders.name:
    connlab.probes.__path__.append(str(folders))

from connlab.contract.columns import COLUMN_NAMES, COLUMN_TYPES
from connlab.contract.experiment import Plan, load_experiment
from connlab.contract.probes.registry import PROBES
from connlab.errors import LabError
from connlab.lab.samplers.base import WindowContext
from connlab.lab.samplers.registry import SAMPLERS
from connlab.site.render.renderer import PageRenderer
from connlab.site.render.snippets import pgbench_block

answers = {"probes": sorted(PROBES), "samplers": sorted(SAMPLERS)}
answers["columns"] = list(COLUMN_NAMES)
answers["fake_type"] = COLUMN_TYPES.get("fake_polls")
try:
    spec = load_experiment("fake-exp", scratch / "experiments")
except LabError as error:
    answers["refused"] = str(error)
    print(json.dumps(answers))
    raise SystemExit
answers["refused"] = None
plan = Plan("fake-exp", 1.0, spec, "tiny", spec.profiles["tiny"], [2])
answers["block"] = pgbench_block(plan)
with SAMPLERS["fakeprobe"](WindowContext("", 2, 1, None)) as sampler:
    time.sleep(0.5)
answers["figures"] = sampler.figures()
methodology = PageRenderer(scratch / "data", scratch / "docs").render("methodology.md.j2", "m.md", "m")
answers["methodology"] = [line for line in methodology.splitlines() if "fakeprobe" in line]
print(json.dumps(answers))
"""

EXPERIMENT = """\
title: A fake probe
summary: One workload with the fake probe.
server:
  cpu_budget: half
database:
  scale: 1
probes: [fakeprobe]
workloads:
  - id: direct
    label: select-only
    builtins: [select-only]
clients: [2]
max_clients: 2
profiles:
  tiny:
    duration_s: 1
    passes: 1
"""


def write_fake_probe(folder: Path) -> list[str]:
    for name, text in FAKE_FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())


def check(tmp_path: Path, with_fake: bool) -> dict[str, object]:
    scratch = tmp_path / ("with" if with_fake else "without")
    (scratch / "experiments" / "fake-exp").mkdir(parents=True)
    (scratch / "experiments" / "fake-exp" / "experiment.yaml").write_text(EXPERIMENT)
    folders = tmp_path / "folders" if with_fake else Path("")
    environment = {**os.environ, "CONNLAB_BUILD_DIR": str(scratch / "b")}
    result = subprocess.run(
        [sys.executable, "-c", CHECK, str(folders), str(scratch)],
        capture_output=True, text=True, env=environment, cwd=REPO_ROOT, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.splitlines()[-1])


@pytest.mark.process
def test_a_probe_is_one_folder(tmp_path: Path) -> None:
    assert write_fake_probe(tmp_path / "folders") == sorted(FAKE_FILES)
    found = check(tmp_path, with_fake=True)
    # The registry finds it beside the others, and the harness has its sampler, which fills its column.
    assert found["probes"] == sorted([*PROBES, "fakeprobe"])
    assert found["samplers"] == found["probes"]
    assert found["figures"]["fake_polls"] >= 1  # type: ignore[index]
    # Its column joins the CSV contract after every other (it names none to follow), with its type; the
    # others keep their order.
    assert found["columns"] == [*COLUMN_NAMES, "fake_polls"]
    assert found["fake_type"] == "INTEGER"
    # An experiment may name it, and the check-it-yourself block runs its snippet with its interval.
    assert found["refused"] is None
    assert 'echo "fake probe every 0.2 s for 1 s"' in found["block"]  # type: ignore[operator]
    # The methodology page lists it with its interval.
    assert found["methodology"] == ["- `fakeprobe`, every 200 ms: counts its own polls."]


@pytest.mark.process
def test_without_its_folder_the_same_probe_is_unknown(tmp_path: Path) -> None:
    """The comparison that shows the folder did the work: without it the same experiment is refused, in
    one line naming the file and the probe."""
    found = check(tmp_path, with_fake=False)
    assert "fakeprobe" not in found["probes"] and "fake_polls" not in found["columns"]  # type: ignore[operator]
    refused = str(found["refused"])
    assert "fake-exp/experiment.yaml:1: (top level): Value error, probes: unknown fakeprobe;" in refused
    assert "\n" not in refused


def test_the_registry_is_the_folders() -> None:
    """Every folder of connlab/probes/ is a probe with a sampler; each probe's columns are in the contract;
    memory_loaded fills memory's columns; backends has no snippet, the others do."""
    folders = {p.name for p in (REPO_ROOT / "scripts/connlab/probes").iterdir() if (p / "probe.py").exists()}
    assert set(PROBES) == folders == set(SAMPLERS)
    assert all(set(probe.column_names) <= set(COLUMN_NAMES) for probe in PROBES.values())
    assert PROBES["memory_loaded"].columns == PROBES["memory"].columns
    assert set(SNIPPETS) == folders - {"backends"}


@pytest.mark.parametrize(
    ("files", "refusal"),
    [
        (
            {"brokenprobe/__init__.py": ""},
            r"brokenprobe/: no probe\.py: a plug-in's folder declares it there \(PROBE\)$",
        ),
        (
            {"brokenprobe/__init__.py": "", "brokenprobe/probe.py": "WHAT = 'no PROBE here'\n"},
            r"brokenprobe/probe\.py: PROBE: missing, or not a Probe$",
        ),
    ],
)
def test_a_folder_without_a_declaration_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], refusal: str
) -> None:
    import connlab.probes
    from connlab.contract.probes import registry

    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.setattr(connlab.probes, "__path__", [*connlab.probes.__path__, str(tmp_path)])
    try:
        with pytest.raises(LabError, match=refusal) as refused:
            registry.discover()
        assert "\n" not in str(refused.value)
    finally:
        sys.modules.pop("connlab.probes.brokenprobe.probe", None)
        sys.modules.pop("connlab.probes.brokenprobe", None)
        shutil.rmtree(tmp_path / "brokenprobe")
