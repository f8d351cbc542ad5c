"""The stages import only the contract and their own code, and the Makefile's stamps know it.

Stages: the harness (connlab.lab), the data (connlab.data with connlab.analysis), the site (connlab.site).
Shared by all: connlab.contract, and connlab.paths, connlab.errors and connlab.interrupts, which import
nothing of the project. The command line (connlab.cli) imports a stage only inside the command that runs it.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from connlab.contract.columns import COLUMN_NAMES
from connlab.contract.experiment import experiment_names, load_experiment
from connlab.contract.poolers import CONFIGS
from connlab.contract.probes import PROBES
from connlab.lab.poolers import POOLERS
from connlab.lab.samplers import SAMPLERS

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "scripts"
SHARED = ("connlab.contract", "connlab.paths", "connlab.errors", "connlab.interrupts", "connlab")
STAGES = {
    "connlab.lab": ("connlab.lab",),
    "connlab.data": ("connlab.data", "connlab.analysis"),
    "connlab.analysis": ("connlab.data", "connlab.analysis"),
    "connlab.site": ("connlab.site",),
    "connlab.contract": (),
}


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
    stage = next((s for s in STAGES if module == s or module.startswith(s + ".")), None)
    if stage is None:  # the command line and the shared basics: each other only (cli imports stages lazily)
        allowed: tuple[str, ...] = ("connlab.errors", "connlab.paths", "connlab.interrupts", "connlab")
    elif stage == "connlab.contract":
        allowed = ("connlab.contract", "connlab.paths", "connlab.errors", "connlab")
    else:
        allowed = (*SHARED, *STAGES[stage], stage)
    crossing = [
        name
        for name in top_level_imports(module_file(module))  # type: ignore[arg-type]
        if not any(name == a or name.startswith(a + ".") for a in allowed)
    ]
    assert not crossing, f"{module} imports {crossing}"


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
        ["make", "-s", "stage-code"], cwd=REPO, capture_output=True, text=True, check=True
    )
    stamps = {}
    for line in output.stdout.splitlines():
        stage, *files = line.split()
        stamps[stage] = set(files)
    return stamps


def source_files(modules: set[str]) -> set[str]:
    return {str(module_file(m).relative_to(REPO)) for m in modules}  # type: ignore[union-attr]


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
    extra = {path for path in listed - imported if not path.startswith("scripts/connlab/contract/")}
    stage_dirs = {
        "data": ("scripts/connlab/data/", "scripts/connlab/analysis/"),
        "site": ("scripts/connlab/site/",),
    }
    assert {path for path in extra if not path.startswith(stage_dirs[stage])} == set()
    assert not any("/lab/" in path for path in listed)


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
        assert set(probe.columns) <= set(COLUMN_NAMES), probe.name
