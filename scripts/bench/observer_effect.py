"""The observer effect: tps measured by the harness (probes on) against bare pgbench with the same flags.

Pairs are interleaved A/B, B/A, A/B... so drift of the machine hits both sides alike. The harness side is
the real measure_window (prewarm, checkpoint, counters before and after, transaction-log percentiles); the
bare side does the same prewarm and checkpoint, then runs pgbench alone.

    .venv/bin/python scripts/bench/observer_effect.py --pairs 6 --clients 4 --seconds 10

The test suite runs it tiny (one pair, one client, one second, the tiny profile's scale) so it cannot rot.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import tempfile
from pathlib import Path

from connlab.contract.experiment import Window, make_plan, window_options
from connlab.lab.bench import open_bench, settle
from connlab.lab.window import client_cores_of, measure_window


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--workload", default="mixed")
    parser.add_argument("--profile", default="full", help="the clients-sweep profile: its scale and settings")
    args = parser.parse_args()

    plan = make_plan("clients-sweep", args.profile)
    plan = dataclasses.replace(plan, profile=plan.profile.model_copy(update={"duration_s": args.seconds}))
    workload = next(w for w in plan.spec.workloads if w.id == args.workload)
    window = Window(1, "asc", workload, args.clients, budget=plan.budgets[0])
    ratios = []
    with open_bench(plan, "observer-effect") as bench:
        # The bare pgbench gets the cores and threads the harness's window gets at this point.
        cores = client_cores_of(bench, window)
        options = window_options(plan, workload, args.clients, jobs=cores)
        print(f"pgbench {' '.join(options.flags())}  (budget: {bench.budget.method})")
        for pair in range(1, args.pairs + 1):
            results = {}
            for side in ("harness", "bare") if pair % 2 else ("bare", "harness"):
                if side == "harness":
                    results[side] = float(measure_window(bench, plan, window, pair)["tps"])
                else:
                    settle(bench.cluster, plan.spec.database.prewarm)
                    with tempfile.TemporaryDirectory(dir=bench.cluster.root) as logs:
                        report, _ = bench.run_pgbench(options, Path(logs), client_cores=cores)
                    results[side] = float(report.tps or 0)
            ratio = results["harness"] / results["bare"]
            ratios.append(ratio)
            print(
                f"pair {pair}: harness {results['harness']:,.0f} tps, bare {results['bare']:,.0f} tps, "
                f"ratio {ratio:.4f}"
            )
    print(
        f"median ratio {statistics.median(ratios):.4f} over {len(ratios)} pairs "
        f"(min {min(ratios):.4f}, max {max(ratios):.4f})"
    )


if __name__ == "__main__":
    main()
