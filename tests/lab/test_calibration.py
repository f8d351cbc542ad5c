"""The calibration at a run's start: its figure and spread, and a run refused whose calibration is not its
folder's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from connlab import paths
from connlab.errors import LabError
from connlab.lab import machine
from connlab.lab.calibration import Calibration, refuse_another_calibration


@pytest.fixture
def results_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "results"
    monkeypatch.setattr(paths, "RESULTS_DIR", folder)
    (folder / "box").mkdir(parents=True)
    (folder / "box" / "machine.yaml").write_text(
        yaml.safe_dump({"id": "box", "calibration_tps": 13881.5, "calibration_spread_tps": 300.0})
    )
    return folder


def test_a_calibration_is_the_median_of_its_passes_and_their_range() -> None:
    calibration = Calibration((14010.25, 13500.0, 14600.4))
    assert (calibration.tps, calibration.spread) == (14010.2, 1100.4)


def test_a_calibration_within_the_spread_runs(results_dir: Path) -> None:
    refuse_another_calibration("box", Calibration((11000.0, 11200.0, 11400.0)))  # within a third, the floor
    refuse_another_calibration("new-box", Calibration((1.0, 2.0, 3.0)))  # a new folder: nothing to hold to


def test_a_calibration_outside_the_spread_is_refused_in_one_line(results_dir: Path) -> None:
    """A third machine of the same shape calibrated 8,102.9 tps in the committed folder of 13,881.5."""
    (results_dir / "box-2").mkdir()
    with pytest.raises(LabError) as refused:
        refuse_another_calibration("box", Calibration((8000.0, 8102.9, 8200.0)))
    [line] = str(refused.value).splitlines()
    assert line.startswith(
        "results/box/ calibrates at 13881.5 tps (its machine.yaml), this run at 8102.9 tps"
    )
    assert "(passes 8000-8200)" in line and "spread (4627.2 tps)" in line
    assert line.endswith("MACHINE=box-3")  # box-2 is taken


@pytest.mark.e2e  # `connlab run` up to its calibration, on a throwaway cluster
@pytest.mark.usefixtures("require_root", "require_postgres")
def test_a_run_whose_calibration_is_not_the_folders_is_refused_and_writes_nothing(
    connlab_env: dict[str, str],
) -> None:
    """This machine's own fingerprint, so only the calibration can tell: a folder calibrated a hundred
    times faster than anything here holds another machine's results. The quick profile: a tiny run's
    calibration is the tests' own and is not held (connlab.contract.provenance.HELD_PROFILES)."""
    folder = Path(connlab_env["CONNLAB_RESULTS_DIR"]) / "lab-box"
    folder.mkdir(parents=True)
    recorded = {
        "id": "lab-box",
        **machine.fingerprint(),
        "calibration_tps": 5e6,
        "calibration_spread_tps": 1.0,
    }
    (folder / "machine.yaml").write_text(yaml.safe_dump(recorded))
    result = subprocess.run(
        [sys.executable, "-m", "connlab.cli", "run", "clients-sweep", "--profile", "quick",
         "--machine", "lab-box"],
        env=connlab_env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: results/lab-box/ calibrates at 5e+06 tps (its machine.yaml), this run at ")
    assert line.endswith("MACHINE=lab-box-2")
    assert sorted(path.name for path in folder.rglob("*")) == ["machine.yaml"]
    assert yaml.safe_load((folder / "machine.yaml").read_text()) == recorded
