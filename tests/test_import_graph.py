"""The package's modules import one another without a cycle: every import, at the top of a module, inside a
function or under TYPE_CHECKING, is an edge of the graph (a cycle hidden in a function is still a cycle)."""

from __future__ import annotations

import ast
from pathlib import Path

from support.paths import REPO_ROOT

PACKAGE_DIR = REPO_ROOT / "scripts" / "connlab"
PACKAGE = "connlab"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str], name: str) -> set[str]:
    """The package's modules the file of module `name` imports (a name imported from a package that is a
    module counts as that module; one that is not, as the package)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, up a level per dot past the first
                parents = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parents, base]).strip(".")
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return {module for module in found if module in modules and module != name}


def import_graph() -> dict[str, set[str]]:
    files = {module_name(path): path for path in PACKAGE_DIR.rglob("*.py")}
    modules = set(files)
    return {name: imports_of(path, modules, name) for name, path in files.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of the graph, as the modules along it (first repeated last); [] when there is none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return []


def test_the_package_has_no_import_cycle() -> None:
    graph = import_graph()
    assert len(graph) > 50 and sum(map(len, graph.values())) > 100, "the graph was not read"
    cycle = find_cycle(graph)
    assert cycle == [], "import cycle: " + " -> ".join(cycle)


def test_a_cycle_is_found_also_through_a_function_level_import(tmp_path: Path) -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    (tmp_path / "z.py").write_text("def f():\n    from connlab.x import y\n    from . import w\n")
    modules = {"connlab.x", "connlab.x.y", "connlab.z", "connlab.w"}
    assert imports_of(tmp_path / "z.py", modules, "connlab.z") == {"connlab.x.y", "connlab.w"}
