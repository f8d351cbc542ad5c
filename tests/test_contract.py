"""The stages import only the contract and their own code, and the Makefile's stamps know it.

Stages: the harness (connlab.lab), the data (connlab.data with connlab.analysis), the site (connlab.site).
Shared by all: connlab.contract, and connlab.paths, connlab.errors and connlab.interrupts, which import
nothing of the project. The command line (connlab.cli) imports a stage only inside the command that runs it.
A pooler's folder (connlab.poolers.<kind>) and a probe's (connlab.probes.<name>) belong to the contract,
except their harness part (adapter.py, sampler.py), which belongs to the harness, and a pooler's main tables
(facts.py), which belong to the data stage.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from connlab.contract.columns import COLUMN_NAMES
from connlab.contract.experiment import experiment_names, load_experiment
from connlab.contract.poolers.registry import CONFIGS
from connlab.contract.probes.registry import PROBES
from connlab.lab.poolers.registry import POOLERS
from connlab.lab.samplers.registry import SAMPLERS
from support.paths import REPO_ROOT

PACKAGE = REPO_ROOT / "scripts"
STAGES = {
    "connlab.lab": ("connlab.lab",),
    "connlab.data": ("connlab.data", "connlab.analysis"),
    "connlab.analysis": ("connlab.data", "connlab.analysis"),
    "connlab.site": ("connlab.site",),
    "connlab.contract": (),
}
EXTENSIONS = ("connlab.poolers", "connlab.probes")
# A plug-in folder's parts that belong to a stage, not to the contract.
STAGE_PARTS = {"adapter": "connlab.lab", "sampler": "connlab.lab", "facts": "connlab.data"}
BASICS = ("connlab", "connlab.paths", "connlab.errors", "connlab.interrupts", "connlab.cli",
          "connlab.__main__")  # fmt: skip


def stage_of(module: str) -> str | None:
    """The stage a module belongs to; None for the command line and the shared basics."""
    if any(module == e or module.startswith(e + ".") for e in EXTENSIONS):
        return STAGE_PARTS.get(module.rpartition(".")[2], "connlab.contract")
    return next((s for s in STAGES if module == s or module.startswith(s + ".")), None)


def may_import(stage: str | None, name: str) -> bool:
    if name in BASICS:  # the contract never needs the interrupts' handling; the rest, each other
        return not (stage == "connlab.contract" and name == "connlab.interrupts")
    target = stage_of(name)
    if stage is None or target is None:  # the command line imports a stage only inside a command
        return False
    return target in (stage, "connlab.contract", *STAGES[stage])


def module_file(name: str) -> Path | None:
    base = PACKAGE / Path(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def top_level_imports(path: Path) -> set[str]:
    """The project modules a module imports when it is imported (not inside functions or TYPE_CHECKING)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(
                f"{node.module}.{alias.name}"
                for alias in node.names
                if module_file(f"{node.module}.{alias.name}")
            )
    return {name for name in names if name == "connlab" or name.startswith("connlab.")}


def closure(entries: list[str]) -> set[str]:
    """Every project module loaded by importing the entries, their packages' __init__ included."""
    seen: set[str] = set()
    todo = list(entries)
    while todo:
        name = todo.pop()
        parts = name.split(".")
        for depth in range(1, len(parts) + 1):
            package = ".".join(parts[:depth])
            if package not in seen and module_file(package):
                seen.add(package)
                todo.extend(top_level_imports(module_file(package)))  # type: ignore[arg-type]
    return seen


def all_modules() -> list[str]:
    return sorted(
        ".".join(path.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__")
        for path in (PACKAGE / "connlab").rglob("*.py")
    )


@pytest.mark.parametrize("module", all_modules())
def test_a_stage_imports_only_the_contract_and_itself(module: str) -> None:
    stage = stage_of(module)
    crossing = [
        name
        for name in top_level_imports(module_file(module))  # type: ignore[arg-type]
        if not may_import(stage, name)
    ]
    assert not crossing, f"{module} imports {crossing}"


def test_the_stage_rule_refuses_a_crossing() -> None:
    """A pooler's adapter is the harness's: the site may import the pooler's config, never its adapter."""
    assert may_import("connlab.site", "connlab.poolers.pgbouncer.config")
    assert not may_import("connlab.site", "connlab.poolers.pgbouncer.adapter")
    assert not may_import("connlab.contract", "connlab.lab.poolers.base")
    assert not may_import("connlab.data", "connlab.site.render.renderer")
    assert may_import("connlab.lab", "connlab.poolers.pgbouncer.adapter")
    assert may_import("connlab.data", "connlab.poolers.odyssey.facts")
    assert not may_import("connlab.site", "connlab.poolers.odyssey.facts")
    assert not may_import("connlab.lab", "connlab.poolers.odyssey.facts")
    assert not may_import(None, "connlab.lab.bench")


@pytest.mark.process
def test_importing_the_site_loads_no_harness_nor_its_drivers() -> None:
    """Rendering pages needs no database driver, no process library, and nothing of the harness."""
    code = (
        "import sys, connlab.site.render.renderer, connlab.site.render.snippets; "
        "print(' '.join(m for m in sys.modules if m.startswith(('connlab.lab', 'connlab.data', "
        "'connlab.analysis', 'psycopg', 'psutil'))))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout.split() == []


def stamp_code() -> dict[str, set[str]]:
    output = subprocess.run(
        ["make", "-s", "stage-code"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    stamps = {}
    for line in output.stdout.splitlines():
        stage, *files = line.split()
        stamps[stage] = set(files)
    return stamps


def source_files(modules: set[str]) -> set[str]:
    return {str(module_file(m).relative_to(REPO_ROOT)) for m in modules}  # type: ignore[union-attr]


@pytest.mark.process
@pytest.mark.parametrize(
    ("stage", "entries"),
    [
        ("data", ["connlab.cli", "connlab.data.aggregate", "connlab.data.validate"]),
        ("site", ["connlab.cli", "connlab.site.render.renderer"]),
    ],
)
def test_each_stamp_depends_on_exactly_the_code_its_stage_imports(stage: str, entries: list[str]) -> None:
    imported = source_files(closure(entries))
    listed = stamp_code()[stage]
    assert imported - listed == set(), "imported but not a dependency of the stamp"
    # Listed but not imported: only whole shared folders (the contract's other modules) and the stage's
    # own package may be listed beyond what is imported.
    shared = ("scripts/connlab/contract/", "scripts/connlab/poolers/", "scripts/connlab/probes/")
    extra = {path for path in listed - imported if not path.startswith(shared)}
    stage_dirs = {
        "data": ("scripts/connlab/data/", "scripts/connlab/analysis/"),
        "site": ("scripts/connlab/site/",),
    }
    assert {path for path in extra if not path.startswith(stage_dirs[stage])} == set()
    assert not any("/lab/" in path or path.endswith(("/adapter.py", "/sampler.py")) for path in listed)
    # A pooler's facts.py (its main tables) is the data stage's code, and only its.
    pooler_facts = {
        path for path in listed if path.startswith("scripts/connlab/poolers/") and path.endswith("/facts.py")
    }
    assert bool(pooler_facts) == (stage == "data")


def test_every_pooler_and_probe_an_experiment_names_is_registered() -> None:
    for name in experiment_names():
        spec = load_experiment(name)
        for pooler in spec.poolers:
            assert pooler.kind in POOLERS, f"{name}: pooler {pooler.kind} has no adapter"
        for probe in spec.probes:
            assert probe in SAMPLERS, f"{name}: probe {probe} has no sampler"


def test_registries_agree() -> None:
    assert set(SAMPLERS) == set(PROBES)
    assert set(CONFIGS) <= set(POOLERS)
    for probe in PROBES.values():
        assert set(probe.column_names) <= set(COLUMN_NAMES), probe.name
