"""The USL fit gives the committed machines' curves the parameters the site has always shown.

tests/golden/usl_fits_committed.json holds every curve fitted from the committed results (medians and passes,
free and anchored, measured and published) with the parameters the earlier twenty-start search found; a faster
search must land on the same optimum.
"""

from __future__ import annotations

import json

import pytest

from connlab.analysis.usl import fit_usl
from support.paths import GOLDEN_DIR

GOLDEN = GOLDEN_DIR / "usl_fits_committed.json"
CASES = json.loads(GOLDEN.read_text())


def _case_id(case: dict) -> str:
    anchor = "anchored" if case["anchor_lambda"] is not None else "free"
    return f"{case['machine']}-{case['experiment']}-{case['workload']}-{case['basis']}-{anchor}"


def test_the_golden_file_covers_every_kind_of_fit() -> None:
    assert {case["basis"] for case in CASES} == {"medians", "passes"}
    assert {case["anchor_lambda"] is None for case in CASES} == {True, False}
    assert any(case["kappa"] > 1e-9 for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_committed_curve_keeps_its_parameters(case: dict) -> None:
    fit = fit_usl(case["clients"], case["tps"], anchor_lambda=case["anchor_lambda"])
    assert fit.lambda_ == pytest.approx(case["lambda_"], rel=1e-5)
    assert fit.sigma == pytest.approx(case["sigma"], rel=1e-4, abs=1e-9)
    assert fit.kappa == pytest.approx(case["kappa"], rel=1e-4, abs=1e-11)
    assert fit.r_squared == pytest.approx(case["r_squared"], abs=1e-9)
