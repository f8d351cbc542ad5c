"""The calibration at a run's start, and the warning where it is not its folder's.

The calibration is select-only with one client, in CALIBRATION_PASSES short passes (connlab.lab.bench's
calibrate): their median places machines against each other, and their range says how much the figure
moves on this machine from one moment to the next. A run whose calibration lies further from the folder's
(machine.yaml) than that spread allows (connlab.contract.provenance) gets a one-line warning before it
measures, naming both figures and the way out. It is not refused: a quiet virtual machine's calibration
moves that far within an hour, so a refusal stopped `make all` on the machine that made the folder; the
verdicts that read such a run are marked instead (connlab.data.claims). The fingerprint, not the
calibration, tells another machine (connlab.lab.machine).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import yaml

from connlab.contract.provenance import calibration_tolerance, calibrations_agree
from connlab.contract.yaml_models import load_contributed_yaml
from connlab.errors import LabError
from connlab.lab.machine import free_machine_id
from connlab.paths import MACHINE_FILE_NAME, machine_results_dir


@dataclass(frozen=True)
class Calibration:
    passes: tuple[float, ...]  # tps of each pass, in the order run

    @property
    def tps(self) -> float:
        return round(statistics.median(self.passes), 1)

    @property
    def spread(self) -> float:
        """Slowest to fastest pass, tps."""
        return round(max(self.passes) - min(self.passes), 1)


def folder_calibration(machine_id: str) -> tuple[float, float | None] | None:
    """machine.yaml's calibration and its spread; None where the folder has none yet (or no file)."""
    path = machine_results_dir(machine_id) / MACHINE_FILE_NAME
    try:
        recorded = load_contributed_yaml(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, yaml.YAMLError) as error:
        raise LabError(f"{path}: cannot be read ({error}); fix it, or run with MACHINE=<new id>") from error
    if not isinstance(recorded, dict) or not isinstance(recorded.get("calibration_tps"), int | float):
        return None
    spread = recorded.get("calibration_spread_tps")
    return float(recorded["calibration_tps"]), float(spread) if isinstance(spread, int | float) else None


def calibration_off(machine_id: str, calibration: Calibration) -> str | None:
    """A line naming both calibrations and the way out, where this run's calibration is further from
    results/<machine_id>/'s than the calibration's spread (None where it is not, or the folder has none).
    The run goes on: its rows are kept and the verdicts that read them are marked (connlab.data.claims)."""
    recorded = folder_calibration(machine_id)
    if recorded is None:
        return None
    reference, reference_spread = recorded
    if calibrations_agree(reference, reference_spread, calibration.tps, calibration.spread):
        return None
    tolerance = calibration_tolerance(reference, reference_spread, calibration.spread)
    return (
        f"results/{machine_id}/ calibrates at {reference:g} tps (its machine.yaml), this run at "
        f"{calibration.tps:g} tps (passes {min(calibration.passes):g}-{max(calibration.passes):g}): further "
        f"apart than the calibration's spread ({tolerance:.1f} tps), so another machine or this one under "
        f"other load. The run goes on and the verdicts that read it will say unverified; for verdicts "
        f"without that mark, let the machine idle and rerun, or give another machine an id of its own, e.g. "
        f"MACHINE={free_machine_id(machine_id)}"
    )
