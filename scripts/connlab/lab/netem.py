"""Whether the kernel's netem qdisc can add delay here, tried for real and cleaned up.

Contract: `probe_netem()` returns a `NetemStatus`: `ok` True, or False with `reason` reading "netem not
available on this machine: <cause>" (the row's text where a network-distance window cannot run). It adds a
veth pair inside a throwaway network namespace (named after this process, so two probes cannot collide),
puts a 1 ms netem qdisc on one end, and deletes the namespace whatever happened: the veth pair goes with
it, and nothing is ever added to the host's own interfaces.

Traps:
- Loading sch_netem is the kernel's business: a kernel built without it (this one, for example) answers
  "Specified qdisc kind is unknown" although `tc` itself and other qdiscs (htb) work. Only adding one
  tells.
- Namespaces need root (CAP_NET_ADMIN and CAP_SYS_ADMIN); without it the cause says so.
- Delay must come from the kernel, never from a user-space sleep presented as a network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass

UNAVAILABLE = "netem not available on this machine"
STEP_TIMEOUT_S = 10
PROBE_DELAY = "1ms"

Runner = Callable[[Sequence[str]], subprocess.CompletedProcess[str]]


@dataclass(frozen=True)
class NetemStatus:
    ok: bool
    reason: str = ""


def run_step(command: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(command), capture_output=True, text=True, timeout=STEP_TIMEOUT_S)


def cause_of(result: subprocess.CompletedProcess[str]) -> str:
    """The last line the tool printed ("Error: Specified qdisc kind is unknown."), or its exit status."""
    lines = (result.stderr or result.stdout).strip().splitlines()
    return lines[-1].removeprefix("Error: ").rstrip(".") if lines else f"exit status {result.returncode}"


def unavailable(cause: str) -> NetemStatus:
    return NetemStatus(False, f"{UNAVAILABLE}: {cause}")


def namespace_name() -> str:
    return f"connlab-netem-{os.getpid()}"


def probe_netem(run: Runner = run_step, is_root: bool | None = None) -> NetemStatus:
    """Try netem on a veth in a throwaway namespace; the namespace is deleted on every path."""
    if is_root is None:
        is_root = os.geteuid() == 0
    if not is_root:
        return unavailable("needs root to create a network namespace")
    missing = [tool for tool in ("ip", "tc") if shutil.which(tool) is None]
    if missing:
        return unavailable(f"{' and '.join(missing)} not installed (iproute2)")
    namespace = namespace_name()
    steps = [
        ["ip", "link", "add", "cl-netem0", "type", "veth", "peer", "name", "cl-netem1"],
        ["ip", "link", "set", "cl-netem0", "up"],
        ["tc", "qdisc", "add", "dev", "cl-netem0", "root", "netem", "delay", PROBE_DELAY],
    ]
    try:
        created = run(["ip", "netns", "add", namespace])
    except (OSError, subprocess.TimeoutExpired) as error:
        return unavailable(f"could not create a network namespace ({type(error).__name__}: {error})")
    if created.returncode != 0:
        return unavailable(f"could not create a network namespace ({cause_of(created)})")
    try:
        for step in steps:
            result = run(["ip", "netns", "exec", namespace, *step])
            if result.returncode != 0:
                return unavailable(f"`{' '.join(step[:3])} ...` failed: {cause_of(result)}")
        return NetemStatus(True)
    except (OSError, subprocess.TimeoutExpired) as error:
        return unavailable(f"{type(error).__name__}: {error}")
    finally:
        run(["ip", "netns", "delete", namespace])
