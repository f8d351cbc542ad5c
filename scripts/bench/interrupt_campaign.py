"""Interrupt a run many times at random moments, as a terminal does, and check what each one left.

Each round starts `connlab run <experiment>` in a process group of its own (a terminal's foreground job),
waits a random 2-45 s, and sends SIGINT (Ctrl-C) or SIGTERM to the whole group. A round is clean when
the run exits 130 within 15 s, no process of it is left (server, pgbench, pooler), no cgroup of it is
left, no temporary file is left, and every row in the results file is whole. Every round after the
first resumes the same results file. At the end one uninterrupted run must complete the plan with every
window exactly once ("resume ok").

    .venv/bin/python scripts/bench/interrupt_campaign.py            # 20 rounds of the quick clients-sweep
    .venv/bin/python scripts/bench/interrupt_campaign.py --rounds 3 --profile tiny --max-delay 6

Results and clusters go to a temporary folder: the repository's results/ and build/ are not touched.
Needs what `connlab run` needs (root for cgroups, PostgreSQL installed).
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from connlab.contract.columns import COLUMN_NAMES
from connlab.contract.experiment import make_plan
from connlab.lab.cpu_budget import CGROUP_ROOT

MACHINE = "interrupt-campaign"
EXIT_BOUND_S = 15


def connlab_cgroups(experiment: str, profile: str) -> set[Path]:
    """The cgroups of runs of this experiment and profile (named connlab-<experiment>-<run id>), so that
    other runs on the machine are not taken for leftovers of this campaign."""
    prefix = f"connlab-{experiment}-{profile}-"
    found = [*CGROUP_ROOT.glob(f"*/{prefix}*"), *CGROUP_ROOT.glob(f"{prefix}*")]
    return {path for path in found if path.is_dir()}


def leftovers(build: Path) -> list[str]:
    found = []
    for process in psutil.process_iter(["pid", "cmdline", "cwd"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if str(build) in cmdline or (process.info["cwd"] or "").startswith(str(build)):
            found.append(f"pid {process.info['pid']} ({cmdline[:80]})")
    return found


def results_rows(results: Path, experiment: str) -> tuple[list[dict[str, str]], list[str]]:
    """The rows on disk and what is wrong with the files (partial rows, more than one run file)."""
    problems: list[str] = []
    files = sorted((results / MACHINE / experiment).glob("*.csv"))
    if len(files) > 1:
        problems.append(f"{len(files)} run files instead of one resumed file")
    rows: list[dict[str, str]] = []
    for path in files:
        with path.open(newline="") as handle:
            raw = list(csv.reader(handle))
        if raw and raw[0] != list(COLUMN_NAMES):
            problems.append(f"{path.name}: unexpected header")
        for number, row in enumerate(raw[1:], 2):
            if len(row) != len(COLUMN_NAMES):
                problems.append(f"{path.name}:{number}: partial row ({len(row)} fields)")
            else:
                rows.append(dict(zip(COLUMN_NAMES, row, strict=True)))
    problems += [f"temporary file left: {path.name}" for path in results.rglob("*.tmp")]
    return rows, problems


def window_keys(rows: list[dict[str, str]]) -> list[tuple[str, ...]]:
    return [(row["pass_no"], row["workload"], row["clients"], row["server_cpu_budget"]) for row in rows]


def connlab_command(experiment: str, profile: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "connlab.cli",
        "run",
        experiment,
        "--profile",
        profile,
        "--machine",
        MACHINE,
    ]


def one_round(
    number: int, args: argparse.Namespace, env: dict[str, str], work: Path, rng: random.Random
) -> tuple[bool, str]:
    results, build = Path(env["CONNLAB_RESULTS_DIR"]), Path(env["CONNLAB_BUILD_DIR"])
    cgroups_before = connlab_cgroups(args.experiment, args.profile)
    signum = rng.choice([signal.SIGINT, signal.SIGTERM])
    delay = rng.uniform(args.min_delay, args.max_delay)
    with (work / f"round-{number}.log").open("w") as log:
        process = subprocess.Popen(
            connlab_command(args.experiment, args.profile),
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    time.sleep(delay)
    if process.poll() is not None:
        return process.returncode == 0, f"finished before the signal (exit {process.returncode})"
    os.killpg(process.pid, signum)
    sent = time.monotonic()
    try:
        status = process.wait(timeout=EXIT_BOUND_S)
    except subprocess.TimeoutExpired:
        status = None
    took = time.monotonic() - sent
    problems = []
    if status is None:
        problems.append(f"still running {EXIT_BOUND_S} s after the signal")
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    elif status != 130:
        problems.append(f"exit {status}, not 130")
    problems += [f"left running: {item}" for item in leftovers(build)]
    added = connlab_cgroups(args.experiment, args.profile) - cgroups_before
    problems += [f"cgroup left: {path}" for path in sorted(added)]
    rows, file_problems = results_rows(results, args.experiment)
    problems += file_problems
    keys = window_keys(rows)
    if len(keys) != len(set(keys)):
        problems.append("a window recorded twice")
    what = (
        f"{signal.Signals(signum).name} after {delay:4.1f} s, exit {status} in {took:.1f} s, {len(rows)} rows"
    )
    return not problems, what + ("" if not problems else ": " + "; ".join(problems))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--experiment", default="clients-sweep")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--min-delay", type=float, default=2.0)
    parser.add_argument("--max-delay", type=float, default=45.0)
    parser.add_argument("--seed", type=int, default=None, help="for a repeatable sequence of moments")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="connlab-campaign-", dir="/tmp"))
    work.chmod(0o755)  # the server runs as postgres and must reach its folder
    env = {
        **os.environ,
        "CONNLAB_RESULTS_DIR": str(work / "results"),
        "CONNLAB_BUILD_DIR": str(work / "build"),
    }
    for name in ("CONNLAB_PORT", "MACHINE"):
        env.pop(name, None)
    clean = 0
    try:
        for number in range(1, args.rounds + 1):
            ok, what = one_round(number, args, env, work, rng)
            clean += ok
            print(f"round {number:2d}: {'clean' if ok else 'NOT CLEAN'}: {what}", flush=True)
        print(f"{clean}/{args.rounds} clean")
        finish = subprocess.run(
            connlab_command(args.experiment, args.profile),
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        rows, problems = results_rows(Path(env["CONNLAB_RESULTS_DIR"]), args.experiment)
        planned = len(make_plan(args.experiment, args.profile).windows())
        keys = window_keys(rows)
        if finish.returncode != 0:
            problems.append(f"the final run exited {finish.returncode}: {finish.stderr.strip()[-300:]}")
        if len(keys) != len(set(keys)):
            problems.append("a window recorded twice")
        if len(rows) != planned:
            problems.append(f"{len(rows)} rows, {planned} planned")
        problems += [f"left running: {item}" for item in leftovers(Path(env["CONNLAB_BUILD_DIR"]))]
        print("resume ok" if not problems else "resume NOT ok: " + "; ".join(problems))
        print(f"{len(rows)} windows in one file, {len(set(keys))} distinct, {planned} planned")
        return 0 if clean == args.rounds and not problems else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
