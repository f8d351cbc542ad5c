"""The probe registry: each folder of connlab/probes/ and its declaration (`PROBE` in its probe.py), found
by scanning that package, so that adding a probe is adding a folder and no list is kept by hand.

What reads it: an experiment's `probes:` (connlab.contract.experiment), the CSV columns
(connlab.contract.columns), the harness's samplers (connlab.lab.samplers.registry), the methodology page
and the check-it-yourself blocks (each folder's snippet.sh.j2, where it has one).
"""

from __future__ import annotations

from pathlib import Path

import connlab.probes
from connlab.contract.plugin_folders import Declared, declarations, folder_module
from connlab.contract.probes.declaration import Probe

# A folder's check-it-yourself partial: the shell that runs one window with the probe, beside pgbench.
SNIPPET_FILE = "snippet.sh.j2"


def package_of(name: str) -> str:
    return folder_module(connlab.probes, name)


def discover() -> dict[str, Probe]:
    """Every folder's declaration by name, in the names' order. A folder whose probe.py lacks a `Probe`
    named PROBE, or declares a name its folder is not named after, is refused in one line."""
    return {found.name: found.declaration for found in _scan()}


def _scan() -> list[Declared]:
    return sorted(declarations(connlab.probes, "probe", "PROBE", Probe, "name"), key=lambda found: found.name)


_FOUND = _scan()
PROBES: dict[str, Probe] = {found.name: found.declaration for found in _FOUND}
FOLDERS: dict[str, Path] = {found.name: found.folder for found in _FOUND}
# The probes whose folder has a check-it-yourself partial, and where it is.
SNIPPETS: dict[str, Path] = {
    name: folder / SNIPPET_FILE for name, folder in FOLDERS.items() if (folder / SNIPPET_FILE).is_file()
}
