"""The probe registry: each folder of connlab/probes/ and its declaration (`PROBE` in its probe.py), found
by scanning that package, so that adding a probe is adding a folder and no list is kept by hand.

What reads it: an experiment's `probes:` (connlab.contract.experiment), the CSV columns
(connlab.contract.columns), the harness's samplers (connlab.lab.samplers.registry), the methodology page
and the check-it-yourself blocks (each folder's snippet.sh.j2, where it has one).
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import connlab.probes
from connlab.contract.probes.declaration import Probe
from connlab.errors import LabError

# A folder's check-it-yourself partial: the shell that runs one window with the probe, beside pgbench.
SNIPPET_FILE = "snippet.sh.j2"


def package_of(name: str) -> str:
    return f"{connlab.probes.__name__}.{name}"


def _scan() -> tuple[dict[str, Probe], dict[str, Path]]:
    probes: dict[str, Probe] = {}
    folders: dict[str, Path] = {}
    for folder in pkgutil.iter_modules(connlab.probes.__path__, f"{connlab.probes.__name__}."):
        if not folder.ispkg:
            continue
        path = Path(str(folder.module_finder.path)) / folder.name.rpartition(".")[2]  # type: ignore[union-attr]
        if not (path / "probe.py").is_file():
            raise LabError(f"{path}/: no probe.py: a probe's folder declares it there (PROBE, a Probe)")
        module = importlib.import_module(f"{folder.name}.probe")
        probe = getattr(module, "PROBE", None)
        if not isinstance(probe, Probe):
            raise LabError(f"{module.__file__}: PROBE: missing, or not a Probe")
        if (expected := package_of(probe.name)) != folder.name:
            raise LabError(f"{module.__file__}: name {probe.name!r}: its folder must be {expected}")
        probes[probe.name] = probe
        folders[probe.name] = path
    return dict(sorted(probes.items())), dict(sorted(folders.items()))


PROBES, FOLDERS = _scan()
# The probes whose folder has a check-it-yourself partial, and where it is.
SNIPPETS: dict[str, Path] = {
    name: folder / SNIPPET_FILE for name, folder in FOLDERS.items() if (folder / SNIPPET_FILE).is_file()
}


def discover() -> dict[str, Probe]:
    """Every folder's declaration by name, in the names' order. A folder whose probe.py lacks a `Probe`
    named PROBE, or declares a name its folder is not named after, is refused in one line."""
    return _scan()[0]
