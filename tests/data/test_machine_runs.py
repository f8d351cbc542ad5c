"""One id, one machine, as validation sees it: a folder whose runs disagree with its machine.yaml's
fingerprint is refused, one line per run naming both; a calibration further off than its spread is not
(the verdicts that read such a run are marked: tests/data/test_main_tables.py)."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
import yaml

from connlab import paths
from connlab.contract.provenance import (
    CALIBRATION_FLOOR,
    calibration_tolerance,
    calibrations_agree,
    fingerprint_digest,
)
from connlab.data import row_shapes
from connlab.data.validate import load_machine_file, validate_machine_folder, validate_results
from connlab.lab import machine
from support.paths import PINNED_RESULTS

SOURCE = PINNED_RESULTS / "intel-xeon-2c-24g"
RUN = "clients-sweep/quick-20261201T002513Z.csv"
FLAGS = "avx2 fpu hypervisor sse4_2"


def recorded_machine() -> dict[str, object]:
    """The source machine's file, as a run records it now: with its CPU flags and calibration spread."""
    data = yaml.safe_load((SOURCE / "machine.yaml").read_text())
    return {
        **data,
        "id": "box",
        "cpu_flags": FLAGS,
        "calibration_tps": 10000.0,
        "calibration_spread_tps": 300.0,
    }


def with_provenance(
    path: Path, fingerprint: str | None, kernel: str, calibration: float, spread: float
) -> None:
    """The run file's rows, each carrying a run's provenance columns."""
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    names = [*rows[0], "kernel", "machine_fingerprint", "run_calibration_tps", "run_calibration_spread_tps"]
    for row in rows:
        row.update(
            machine="box", kernel=kernel, machine_fingerprint=fingerprint or "",
            run_calibration_tps=calibration, run_calibration_spread_tps=spread,
        )  # fmt: skip
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=names, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A machine folder of one run, its machine.yaml recording a fingerprint and a calibration."""
    box = tmp_path / "box"
    (box / "clients-sweep").mkdir(parents=True)
    shutil.copy(SOURCE / RUN, box / RUN)
    (box / "machine.yaml").write_text(yaml.safe_dump(recorded_machine()))
    return box


def machine_digest() -> str:
    digest = fingerprint_digest(recorded_machine())
    assert digest is not None
    return digest


def test_runs_of_the_folders_machine_pass(folder: Path) -> None:
    with_provenance(folder / RUN, machine_digest(), "6.18.44-fc-v669", 10250.0, 400.0)
    assert list(validate_machine_folder(folder)) == []
    # The new columns keep a row's shape: such a file is still told valid by validation's quickest check.
    header, _, body = (folder / RUN).read_text().partition("\n")
    assert row_shapes.read_windows(header, body) is not None


def test_a_run_of_another_machine_is_refused_in_one_line_naming_both(folder: Path) -> None:
    other = fingerprint_digest({**recorded_machine(), "kernel": "6.18.44-fc-v1045"})
    with_provenance(folder / RUN, other, "6.18.44-fc-v1045", 10000.0, 300.0)
    [line] = validate_machine_folder(folder)
    assert line.startswith(f"{folder / RUN}:2: machine_fingerprint: measured on another machine than ")
    assert str(folder / "machine.yaml") in line
    assert "kernel 6.18.44-fc-v1045 here" in line and "kernel 6.18.44-fc-v669 there" in line
    assert "MACHINE=<new id>" in line


def test_a_calibration_outside_the_spread_is_not_refused(folder: Path) -> None:
    """This machine under other load: its rows are kept, and its verdicts marked when aggregated."""
    with_provenance(folder / RUN, machine_digest(), "6.18.44-fc-v669", 6000.0, 150.0)
    assert list(validate_machine_folder(folder)) == []


def test_without_a_recorded_fingerprint_the_runs_are_held_to_each_other(folder: Path) -> None:
    """A machine.yaml written before the flags were recorded: the folder's first run stands in for it."""
    data = recorded_machine()
    del data["cpu_flags"], data["calibration_tps"], data["calibration_spread_tps"]
    (folder / "machine.yaml").write_text(yaml.safe_dump(data))
    second = folder / "clients-sweep" / "quick-20261202T000000Z.csv"
    shutil.copy(folder / RUN, second)
    with_provenance(folder / RUN, machine_digest(), "6.18.44-fc-v669", 10000.0, 300.0)
    with_provenance(second, "0123456789ab", "6.18.44-fc-v669", 10000.0, 300.0)  # same kernel, other flags
    # A copy keeps its run id; a run file names its own.
    second.write_text(second.read_text().replace("quick-20261201T002513Z", second.stem))
    [line] = validate_machine_folder(folder)
    assert line.startswith(f"{second}:2: machine_fingerprint:") and f"{folder / RUN}:2" in line


def test_without_a_recorded_fingerprint_machine_yamls_kernel_still_tells(folder: Path) -> None:
    data = recorded_machine()
    del data["cpu_flags"]
    (folder / "machine.yaml").write_text(yaml.safe_dump(data))
    with_provenance(folder / RUN, "0123456789ab", "6.18.44-fc-v1045", 10000.0, 300.0)
    [line] = validate_machine_folder(folder)
    assert line.startswith(f"{folder / RUN}:2: kernel: measured on another machine than {folder}")
    assert "(kernel 6.18.44-fc-v1045 here; 6.18.44-fc-v669 there)" in line


def test_runs_written_before_the_provenance_columns_validate_as_they_are() -> None:
    """The committed results carry none of the new columns, and stay valid."""
    assert validate_results(PINNED_RESULTS) == []


def test_the_digest_a_run_records_is_the_one_validation_reads_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The harness digests the facts it collected; validation digests machine.yaml as it reads it back."""
    monkeypatch.setattr(paths, "RESULTS_DIR", tmp_path)
    facts = {key: value for key, value in recorded_machine().items() if key not in ("id", "description")}
    path = machine.write_machine_file("box", {**facts, "memory_gib": 24.0, "threads": 2})
    model, problems = load_machine_file(path)
    assert problems == [] and model is not None
    assert fingerprint_digest(model.model_dump()) == fingerprint_digest({**facts, "memory_gib": 24.0})


def test_the_calibrations_spread_has_a_floor() -> None:
    assert calibration_tolerance(10000.0, 50.0, 80.0) == CALIBRATION_FLOOR * 10000.0
    assert calibration_tolerance(10000.0, 4000.0, 80.0) == 4000.0
    assert calibrations_agree(10000.0, None, 11900.0, None)
    assert calibrations_agree(10000.0, None, 7100.0, 3000.0)  # a spread of 3,000 widens the tolerance
    assert not calibrations_agree(10000.0, None, 6500.0, None)
    assert fingerprint_digest({"cpu_model": "x"}) is None
