"""Adding a pooler is adding one folder: a fake pooler's folder, put on the registry's search path
(connlab.poolers.__path__) in a fresh interpreter, is found by the registry and reaches every place that
names poolers: the harness's adapters and version collection, machine.yaml's schema, the Machines page's
columns, an experiment's `kind`, the check-it-yourself block.

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

from connlab.contract.poolers.registry import CONFIGS, VERSIONED
from connlab.errors import LabError
from connlab.lab.poolers.registry import POOLERS
from support.paths import PINNED_RESULTS, REPO_ROOT

PUBLISHED = PINNED_RESULTS / "published-too-many-connections"

# The whole of a pooler: its folder's files (the package marker, the declaration with its pure config, the
# harness's adapter, and the main tables it adds of its own, which only a pooler with such facts has).
FAKE_FILES = {
    "fakepool/__init__.py": '"""A pooler that exists only in a test: its declaration and its adapter."""\n',
    "fakepool/config.py": """
        from connlab.contract.poolers.setup import PoolerConfig, PoolerSetup

        def config_files(setup: PoolerSetup) -> dict[str, str]:
            server = f"{setup.server_host}:{setup.server_port}"
            return {"fakepool.conf": f"listen = {setup.port}\\nserver = {server}\\n"}

        CONFIG = PoolerConfig(
            kind="fakepool",
            label="FakePool",
            binary="fakepool",
            config_files=config_files,
            snippet_start=lambda root: f'fakepool "{root}/fakepool.conf"',
            pid_file="fakepool.pid",
            across_machine_facts=("fakepool_summary",),
        )
        """,
    "fakepool/adapter.py": """
        from connlab.lab.poolers.base import PoolerProcess
        from connlab.poolers.fakepool import config

        class FakePool(PoolerProcess):
            declaration = config.CONFIG
            env_var = "FAKEPOOL_BIN"

            def config_files(self) -> dict[str, str]:
                return config.config_files(self.setup)

            def command(self, binary: str) -> list[str]:
                return [binary, str(self.setup.root / "fakepool.conf")]

        ADAPTER = FakePool
        """,
    "fakepool/facts.py": """
        import duckdb

        def register_main_tables(con: duckdb.DuckDBPyConnection) -> None:
            con.execute(
                "CREATE OR REPLACE TABLE main.fakepool_seen AS SELECT machine, version "
                "FROM main.pooler_versions WHERE pooler = 'fakepool'"
            )
        """,
}

# What the fresh interpreter checks, given the folder's parent, a scratch folder and the published
# machine folder to copy: each answer printed as one JSON object.
PROBE = """
import json, shutil, sys
from pathlib import Path

import connlab.poolers

folders, scratch, published = (Path(arg) for arg in sys.argv[1:4])
if folders.name:  # an empty argument: the registry as it stands, for the comparison
    connlab.poolers.__path__.append(str(folders))

import duckdb

from connlab.contract.experiment import Plan, load_experiment
from connlab.contract.facts_files import ACROSS_MACHINE_FACTS
from connlab.contract.machine_schema import MachineFile
from connlab.contract.poolers.registry import CONFIGS
from connlab.data.aggregate import aggregate_all
from connlab.data.validate import validate_results
from connlab.errors import LabError
from connlab.lab.bench import check_poolers
from connlab.lab.machine import pooler_versions
from connlab.lab.poolers.registry import POOLERS
from connlab.site.render.renderer import PageRenderer
from connlab.site.render.snippets import pgbench_block

answers = {"kinds": sorted(CONFIGS), "adapters": sorted(POOLERS), "versions": pooler_versions()}
answers["schema_fields"] = [name for name in MachineFile.model_fields if name.endswith("_version")]

# machine.yaml with the fake's version: validated, aggregated, shown on the Machines page.
results = scratch / "results"
shutil.copytree(published, results / published.name)
machine_yaml = results / published.name / "machine.yaml"
machine_yaml.write_text(machine_yaml.read_text() + 'fakepool_version: "9.9.9"\\n')
answers["problems"] = validate_results(results)
answers["across_machine_facts"] = sorted(ACROSS_MACHINE_FACTS)
if not answers["problems"]:
    database = aggregate_all(results_dir=results, out_dir=scratch / "data")
    with duckdb.connect(str(database), read_only=True) as con:
        answers["fakepool_seen"] = con.execute("SELECT * FROM main.fakepool_seen").fetchall()
    renderer = PageRenderer(scratch / "data", scratch / "docs")
    lines = renderer.render("machines.md.j2", "machines.md", "machines").splitlines()
    answers["software_header"] = next(line for line in lines if line.startswith("| machine | PostgreSQL"))
    answers["published_rows"] = [line for line in lines if line.startswith("| published")]

# An experiment that names the kind: the harness's check before a run, and the site's block.
spec = load_experiment("fake-exp", scratch / "experiments")
plan = Plan("fake-exp", 1.0, spec, "tiny", spec.profiles["tiny"], [2])
try:
    check_poolers(plan)
    answers["plan_refused"] = None
except LabError as error:
    answers["plan_refused"] = str(error)
answers["block"] = pgbench_block(plan)
print(json.dumps(answers))
"""

EXPERIMENT = """\
title: A fake pooler
summary: One workload through the fake pooler.
server:
  cpu_budget: half
database:
  scale: 1
poolers:
  - kind: fakepool
workloads:
  - id: through
    label: through the fake pooler
    builtins: [select-only]
    target: fakepool
clients: [2]
max_clients: 2
profiles:
  tiny:
    duration_s: 1
    passes: 1
"""


def write_fake_pooler(folder: Path) -> list[str]:
    for name, text in FAKE_FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())


def probe(tmp_path: Path, with_fake: bool) -> dict[str, object]:
    scratch = tmp_path / ("with" if with_fake else "without")
    (scratch / "experiments" / "fake-exp").mkdir(parents=True)
    (scratch / "experiments" / "fake-exp" / "experiment.yaml").write_text(EXPERIMENT)
    folders = tmp_path / "folders" if with_fake else Path("")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake_binary = bin_dir / "fakepool"
    fake_binary.write_text("#!/bin/sh\necho 'fakepool 9.9.9'\n")
    fake_binary.chmod(0o755)
    environment = {**os.environ, "FAKEPOOL_BIN": str(fake_binary), "CONNLAB_BUILD_DIR": str(scratch / "b")}
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(folders), str(scratch), str(PUBLISHED)],
        capture_output=True, text=True, env=environment, cwd=REPO_ROOT, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.splitlines()[-1])


@pytest.mark.process
def test_a_pooler_is_one_folder(tmp_path: Path) -> None:
    assert write_fake_pooler(tmp_path / "folders") == sorted(FAKE_FILES)
    found = probe(tmp_path, with_fake=True)
    # The registry finds it, and the harness has its adapter.
    assert "fakepool" in found["kinds"] and "fakepool" in found["adapters"]  # type: ignore[operator]
    assert set(CONFIGS) < set(found["kinds"])  # type: ignore[arg-type]
    # The harness records its version from the binary its adapter would run.
    assert found["versions"]["fakepool_version"] == "9.9.9"  # type: ignore[index]
    # machine.yaml's schema has its field, accepts it, and the Machines page has its column and value.
    assert "fakepool_version" in found["schema_fields"]  # type: ignore[operator]
    assert found["problems"] == []
    # Its own main table, from its facts.py, and its own across-machine fact, from its declaration.
    assert found["fakepool_seen"] == [["published-too-many-connections", "9.9.9"]]
    assert "fakepool_summary" in found["across_machine_facts"]  # type: ignore[operator]
    assert "| FakePool |" in found["software_header"]  # type: ignore[operator]
    header = found["software_header"].split(" | ")  # type: ignore[union-attr]
    (row,) = found["published_rows"][-1:]  # type: ignore[index]
    assert row.split(" | ")[header.index("FakePool")] == "9.9.9"
    # An experiment may name its kind: the harness's check passes, and the block prints its files.
    assert found["plan_refused"] is None
    assert "fakepool.conf" in found["block"] and 'fakepool "$DIR/fakepool/fakepool.conf"' in found["block"]  # type: ignore[operator]


@pytest.mark.process
def test_without_its_folder_the_same_pooler_is_unknown_everywhere(tmp_path: Path) -> None:
    """The comparison that shows the folder did the work: without it, the same machine.yaml is refused
    and the same experiment is refused before it starts."""
    found = probe(tmp_path, with_fake=False)
    assert "fakepool" not in found["kinds"] and "fakepool_version" not in found["schema_fields"]  # type: ignore[operator]
    assert "fakepool_summary" not in found["across_machine_facts"]  # type: ignore[operator]
    assert any("fakepool_version" in problem for problem in found["problems"])  # type: ignore[union-attr]
    assert "pooler kind 'fakepool' is not registered" in found["plan_refused"]  # type: ignore[operator]


def test_the_registry_is_the_folders() -> None:
    """Every folder of connlab/poolers/ is a kind with an adapter, and the versions it declares are the
    schema's; a kind with no program of its own (pgbouncer-pair) records none."""
    folders = {
        p.name for p in (REPO_ROOT / "scripts/connlab/poolers").iterdir() if (p / "config.py").exists()
    }
    assert {kind.replace("-", "_") for kind in CONFIGS} == folders
    assert set(POOLERS) == set(CONFIGS)
    assert "pgbouncer-pair" in CONFIGS and "pgbouncer-pair" not in VERSIONED
    assert {"pgbouncer", "pgpool", "odyssey", "pgcat"} <= set(VERSIONED)


def test_a_folder_without_a_declaration_is_refused_in_one_line(tmp_path: Path, monkeypatch) -> None:
    import connlab.poolers
    from connlab.contract.poolers import registry

    (tmp_path / "brokenpool").mkdir()
    (tmp_path / "brokenpool" / "__init__.py").write_text("")
    (tmp_path / "brokenpool" / "config.py").write_text("LABEL = 'no CONFIG here'\n")
    monkeypatch.setattr(connlab.poolers, "__path__", [*connlab.poolers.__path__, str(tmp_path)])
    try:
        with pytest.raises(LabError, match=r"brokenpool/config\.py: CONFIG: missing, or not a PoolerConfig"):
            registry.discover()
    finally:
        sys.modules.pop("connlab.poolers.brokenpool.config", None)
        sys.modules.pop("connlab.poolers.brokenpool", None)
        shutil.rmtree(tmp_path / "brokenpool")


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        ("version_args=None, facts=('allocator',)", "facts need a version, and are not it"),
        ("facts=('version',)", "facts need a version, and are not it"),
        ("facts=('mem-alloc',)", "a fact's name is a field's"),
    ],
)
def test_a_fact_machine_yaml_could_not_hold_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, declared: str, message: str
) -> None:
    """A declared fact is machine.yaml's `<kind>_<fact>` beside `<kind>_version` (pgcat's allocator)."""
    import connlab.poolers
    from connlab.contract.poolers import registry

    (tmp_path / "factpool").mkdir()
    (tmp_path / "factpool" / "__init__.py").write_text("")
    (tmp_path / "factpool" / "config.py").write_text(
        "from connlab.contract.poolers.setup import PoolerConfig\n"
        "CONFIG = PoolerConfig(kind='factpool', label='FactPool', binary='factpool', config_files=dict,\n"
        f"                      snippet_start=str, pid_file='f.pid', {declared})\n"
    )
    monkeypatch.setattr(connlab.poolers, "__path__", [*connlab.poolers.__path__, str(tmp_path)])
    try:
        with pytest.raises(LabError, match=rf"factpool/config\.py: kind 'factpool': {message}"):
            registry.discover()
    finally:
        sys.modules.pop("connlab.poolers.factpool.config", None)
        sys.modules.pop("connlab.poolers.factpool", None)
        shutil.rmtree(tmp_path / "factpool")


def test_a_named_server_gets_the_poolers_whose_config_declares_it() -> None:
    """Remote support is the pooler folder's declaration (PoolerConfig.remote), not a list in the remote
    bench: each declaring kind gets its own adapter logging in as the URL's user, the others none."""
    from connlab.lab.remote.bench import RemoteLogin, remote_adapter

    for kind, config in CONFIGS.items():
        adapter = remote_adapter(kind)
        if config.remote:
            assert (
                adapter is not None
                and issubclass(adapter, RemoteLogin)
                and issubclass(adapter, POOLERS[kind])
            )
        else:
            assert adapter is None, kind
    assert {kind for kind, config in CONFIGS.items() if config.remote} >= {"pgbouncer", "pgpool", "odyssey"}
    assert remote_adapter("no-such-pooler") is None
