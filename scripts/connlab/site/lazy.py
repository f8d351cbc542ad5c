"""A module imported when first used: Altair takes a third of a second to import, and a render whose chart
specs all come from templates kept in the cache (connlab.site.chart_cache) never runs it."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_import(name: str) -> ModuleType:
    """The module, loaded on its first attribute access (importlib's LazyLoader, as its documentation
    shows); the module itself where it is imported already."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
