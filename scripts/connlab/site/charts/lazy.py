"""A module imported when first used: Altair is slow to import, and a render whose chart specs all come
from templates kept in the cache (connlab.site.charts.cache) never runs it."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from types import ModuleType


class LazyModule(ModuleType):
    """Stands for a module until an attribute is first asked of it, then imports it (importlib's own import,
    which waits for a thread importing the same module) and answers from it.

    Not importlib's LazyLoader: under Python 3.11 a second thread asking for an attribute while the first
    was still running the module's code was answered from the half-made module. render_site compiles the
    charts' Vega on a thread while the pages render, both asking Altair for its first chart at once, and a
    cold build failed with "module 'altair' has no attribute 'Chart'"."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._connlab_lock = threading.Lock()
        self._connlab_module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> object:
        # Called only for what the stand-in itself lacks: every attribute of the real module.
        with self._connlab_lock:
            if self._connlab_module is None:
                self._connlab_module = importlib.import_module(self.__name__)
        return getattr(self._connlab_module, attribute)


def lazy_import(name: str) -> ModuleType:
    """The module where it is imported already, else a stand-in that imports it when first used."""
    if name in sys.modules:
        return sys.modules[name]
    if importlib.util.find_spec(name) is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    return LazyModule(name)
