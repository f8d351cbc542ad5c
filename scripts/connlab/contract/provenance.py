"""A run's provenance: which machine measured it, and how fast that machine was at the run's start.

One id is one machine. Two rules, stated here once:

- the fingerprint: the facts that tell one machine from another of the same shape, as machine.yaml records
  them (FINGERPRINT_FIELDS); each row of a run carries their digest and, readable, the kernel. The harness
  (connlab.lab.machine) refuses a run whose fingerprint differs from its folder's, and validation
  (connlab.data.machine_runs) a folder whose runs differ;
- the calibration: select-only with one client, CALIBRATION_PASSES short passes at the run's start. Two
  calibrations agree when they are no further apart than the calibration's own spread: the larger of the
  two passes' ranges (slowest to fastest), and never less than CALIBRATION_FLOOR of the folder's figure.
  Only runs of HELD_PROFILES are held to it. A run that does not agree is this machine under other load
  (or another machine the fingerprint could not tell): the harness warns (connlab.lab.calibration), and
  the verdicts that read it are marked unverified (connlab.data.main_tables, connlab.data.claims).
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
# The least spread two calibrations of one machine may differ by, as a share of the folder's figure: wide
# enough for a virtual machine with other work beside a run, narrow enough that a machine of the same shape
# on another host reads apart. A run beyond it is marked, not refused: one quiet virtual machine's
# calibration has moved further than this within an hour (results/amd-epyc-2c-24g-3's runs).
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
