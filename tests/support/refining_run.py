"""`connlab ...` with the tiny profile refining (connlab.lab.refine), for tests/e2e/test_e2e_refine.py: the
shipped tiny profiles never refine, since the other end-to-end tests count their windows.

The tiny profile here measures one workload at three client counts and refines it with every extra pass
its budget allows (a spread of 0 asks for them wherever two passes differ at all), so that a run surely
writes refinement rows, and peak points where its curve has an interior peak.
"""

from __future__ import annotations

import connlab.contract.experiment as experiment
from connlab.cli import main
from connlab.contract.spec_parts import Refine

REFINED_WORKLOAD = "select-only"
REFINED_CLIENTS = [1, 4, 16]
TINY_REFINE = Refine(budget_share=1.0, spread=0.0, max_extra_passes=2, max_extra_points=2)

_make_plan = experiment.make_plan


def make_refining_plan(name: str, profile_name: str, server_cores: float | None = None) -> experiment.Plan:
    """The plan as shipped, and for the tiny profile the refining one above."""
    if profile_name != "tiny":
        return _make_plan(name, profile_name, server_cores)
    spec = experiment.load_experiment(name)
    tiny = spec.profiles["tiny"].model_copy(
        update={"refine": TINY_REFINE, "workloads": [REFINED_WORKLOAD], "clients": REFINED_CLIENTS}
    )
    profiles = {**spec.profiles, "tiny": tiny}
    original = experiment.load_experiment
    experiment.load_experiment = lambda _name, *_args: spec.model_copy(update={"profiles": profiles})
    try:
        return _make_plan(name, profile_name, server_cores)
    finally:
        experiment.load_experiment = original


if __name__ == "__main__":
    # The command line imports make_plan inside its commands, from the module: it finds this one.
    experiment.make_plan = make_refining_plan
    main()
