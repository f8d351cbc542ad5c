"""The calibration at a run's start: its figure and spread, and a run warned, not refused, whose calibration
is not its folder's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from connlab import paths
from connlab.lab import machine
from connlab.lab.calibration import Calibration, calibration_off


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


def test_a_calibration_within_the_spread_says_nothing(results_dir: Path) -> None:
    assert calibration_off("box", Calibration((11000.0, 11200.0, 11400.0))) is None  # within the floor
    assert calibration_off("new-box", Calibration((1.0, 2.0, 3.0))) is None  # a new folder: nothing to hold


def test_a_calibration_outside_the_spread_is_one_line_naming_both_and_the_way_out(results_dir: Path) -> None:
    """A third machine of the same shape calibrated 8,102.9 tps in the committed folder of 13,881.5."""
    (results_dir / "box-2").mkdir()
    off = calibration_off("box", Calibration((8000.0, 8102.9, 8200.0)))
    assert off is not None
    [line] = off.splitlines()
    assert line.startswith(
        "results/box/ calibrates at 13881.5 tps (its machine.yaml), this run at 8102.9 tps"
    )
    assert "(passes 8000-8200)" in line and "spread (4627.2 tps)" in line
    assert "The run goes on and the verdicts that read it will say unverified" in line
    assert line.endswith("MACHINE=box-3")  # box-2 is taken


@pytest.mark.e2e  # `connlab run` up to its calibration, on a throwaway cluster
@pytest.mark.usefixtures("require_root", "require_postgres")
def test_a_run_whose_calibration_is_not_the_folders_is_warned_and_goes_on(
    connlab_env: dict[str, str],
) -> None:
    """This machine's own fingerprint, so only the calibration can tell: a folder calibrated a hundred
    times faster than anything here. The run says so in one line and goes on measuring (the verdicts that
    read its rows are marked unverified, tests/data/test_main_tables.py); the folder keeps its own
    calibration. The test stops it with Ctrl-C once it has gone on. The quick profile: a tiny run's
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
    run = subprocess.Popen(
        [sys.executable, "-m", "connlab.cli", "run", "clients-sweep", "--profile", "quick",
         "--machine", "lab-box"],
        env=connlab_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert run.stderr is not None
        seen = []
        for line in run.stderr:
            seen.append(line)
            if line.startswith(("warning: ", "error: ")):
                break
        warning = seen[-1].strip() if seen else ""
        assert warning.startswith(
            "warning: results/lab-box/ calibrates at 5e+06 tps (its machine.yaml), this run at "
        ), "".join(seen)
        assert warning.endswith("MACHINE=lab-box-2")
        # It goes on: machine.yaml is written after the calibration, with the folder's own figures.
        deadline = time.monotonic() + 60
        while run.poll() is None and time.monotonic() < deadline:
            written = yaml.safe_load((folder / "machine.yaml").read_text())
            if written.get("postgres_version"):
                break
            time.sleep(0.5)
        assert run.poll() is None, "".join(seen) + run.stderr.read()
        assert (written["calibration_tps"], written["calibration_spread_tps"]) == (5e6, 1.0)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGINT)
        run.communicate(timeout=120)
