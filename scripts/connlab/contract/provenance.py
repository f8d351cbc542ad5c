"""A run's provenance: which machine measured it, and how fast that machine was at the run's start.

One id is one machine. The harness (connlab.lab.machine, connlab.lab.calibration) refuses a run whose
machine differs from its folder's, and validation (connlab.data.machine_runs) refuses a folder whose runs
disagree, by the same two rules, stated here once:

- the fingerprint: the facts that tell one machine from another of the same shape, as machine.yaml records
  them (FINGERPRINT_FIELDS); each row of a run carries their digest and, readable, the kernel;
- the calibration: select-only with one client, CALIBRATION_PASSES short passes at the run's start. Two
  calibrations agree when they are no further apart than the calibration's own spread: the larger of the
  two passes' ranges (slowest to fastest), and never less than CALIBRATION_FLOOR of the folder's figure.
  Only runs of HELD_PROFILES are held to it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

# What tells one machine from another of the same shape. The kernel is in it: a virtual machine's kernel
# build changes with its host image, and two builds of one shape measured 3-4x apart at the same point
# (results/amd-epyc-2c-24g and -2). The CPU flags tell a host's CPU generation where the model name is
# generic ("AMD EPYC").
FINGERPRINT_FIELDS = ("cpu_model", "cpu_flags", "threads", "memory_gib", "kernel", "virtualised")
DIGEST_LENGTH = 12
DIGEST_PATTERN = rf"^[0-9a-f]{{{DIGEST_LENGTH}}}$"

# Three passes give a range; each is a third of the profile's calibration time (at least a second).
CALIBRATION_PASSES = 3
# The calibration's length in every held profile, so that two runs' figures were taken the same way: on a
# 2-core virtual machine, one-second passes (the quick profile's, once) read well above the full profile's
# four-second passes the same morning (a host that lets a short burst run faster would do it), so a run
# held to a folder calibrated the other way was refused on the machine that made the folder.
CALIBRATION_S = 10
# The least spread two calibrations of one machine may differ by, as a share of the folder's figure. On
# the first amd machine six runs' single-window calibrations lay within 13,881-15,432 tps (6% either side
# of their median) on an idle virtual machine, and on a shared one one-second passes spread over a fifth
# of their median while other work ran; another kernel build of that machine measured 3-4x apart, and a
# third machine of its shape 42% below it. A make all on a 2-core machine, with other work running beside
# it, calibrated 26% above its first experiment's figure: a fifth refused the same machine, a third still
# tells the 42% machine apart.
CALIBRATION_FLOOR = 1 / 3
# The profiles whose calibration is held to the folder's. The tiny profile is the end-to-end tests': its
# one-second passes run beside other tests, so its figure is recorded in its rows but never judged, nor
# made the folder's.
HELD_PROFILES = ("quick", "full")


def fingerprint_digest(facts: Mapping[str, object]) -> str | None:
    """The digest of FINGERPRINT_FIELDS as machine.yaml writes them (values compared as text); None where
    one is missing (a machine.yaml written before the field was recorded)."""
    if any(facts.get(field) is None for field in FINGERPRINT_FIELDS):
        return None
    text = "\n".join(f"{field}={facts[field]}" for field in FINGERPRINT_FIELDS)
    return hashlib.sha256(text.encode()).hexdigest()[:DIGEST_LENGTH]


def calibration_tolerance(
    reference_tps: float, reference_spread: float | None, spread: float | None
) -> float:
    """How far a calibration may lie from the folder's and still be the same machine: the larger of the
    two spreads, at least CALIBRATION_FLOOR of the folder's figure."""
    return max(reference_spread or 0.0, spread or 0.0, CALIBRATION_FLOOR * reference_tps)


def calibrations_agree(
    reference_tps: float, reference_spread: float | None, tps: float, spread: float | None
) -> bool:
    return abs(tps - reference_tps) <= calibration_tolerance(reference_tps, reference_spread, spread)
