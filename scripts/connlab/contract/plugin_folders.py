"""Plug-ins as folders of a package, found by scanning it: the one mechanism behind the pooler and probe
registries (connlab.contract.poolers.registry, connlab.contract.probes.registry) and the harness's parts of
each (connlab.lab.poolers.registry, connlab.lab.samplers.registry). The package's own modules never import
their plug-ins; a registry module calls these.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from connlab.errors import LabError


def folder_module(package: ModuleType, name: str) -> str:
    """The module of a plug-in's folder: a package name holds no `-`, so pgbouncer-pair is pgbouncer_pair."""
    return f"{package.__name__}.{name.replace('-', '_')}"


@dataclass(frozen=True)
class Declared:
    """A folder's declaration, where it was found."""

    name: str
    declaration: Any
    folder: Path
    file: str


def declarations(
    package: ModuleType, module: str, attribute: str, declared_type: type, name_field: str
) -> Iterator[Declared]:
    """Each folder's `attribute` in its `module`.py, in the folders' order. A folder without that file, a
    file without a `declared_type` named `attribute`, or a declaration whose `name_field` is not its
    folder's name, is refused in one line that names the file."""
    for found in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
        if not found.ispkg:
            continue
        folder = Path(str(found.module_finder.path)) / found.name.rpartition(".")[2]  # type: ignore[union-attr]
        if not (folder / f"{module}.py").is_file():
            raise LabError(f"{folder}/: no {module}.py: a plug-in's folder declares it there ({attribute})")
        imported = importlib.import_module(f"{found.name}.{module}")
        declaration = getattr(imported, attribute, None)
        if not isinstance(declaration, declared_type):
            raise LabError(f"{imported.__file__}: {attribute}: missing, or not a {declared_type.__name__}")
        name = getattr(declaration, name_field)
        if (expected := folder_module(package, name)) != found.name:
            raise LabError(f"{imported.__file__}: {name_field} {name!r}: its folder must be {expected}")
        yield Declared(name, declaration, folder, str(imported.__file__))


def parts(
    package: ModuleType, names: Iterable[str], module: str, attribute: str, part_class: type
) -> dict[str, Any]:
    """Each named folder's `attribute` in its `module`.py (the harness's part of a declared plug-in): a
    subclass of `part_class` whose `name` is the folder's; one that is missing or is not is refused in one
    line that names the file."""
    found: dict[str, Any] = {}
    for name in names:
        imported = importlib.import_module(f"{folder_module(package, name)}.{module}")
        part = getattr(imported, attribute, None)
        fits = isinstance(part, type) and issubclass(part, part_class) and getattr(part, "name", None) == name
        if not fits:
            raise LabError(f"{imported.__file__}: {attribute}: missing, or not the part named {name!r}")
        found[name] = part
    return found
