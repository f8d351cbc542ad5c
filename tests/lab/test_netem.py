"""The netem probe: its answers from scripted tool results (every path deletes the namespace), and one
real probe on this machine, which must answer plainly and leave no namespace behind."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence

import pytest

from connlab.lab import netem

QDISC_UNKNOWN = "Error: Specified qdisc kind is unknown.\n"


class ScriptedRun:
    """Answers each command with a return code and stderr; records what was run."""

    def __init__(self, failing: dict[str, str] | None = None) -> None:
        self.failing = failing or {}
        self.commands: list[list[str]] = []

    def __call__(self, command: Sequence[str]) -> subprocess.CompletedProcess[str]:
        self.commands.append(list(command))
        text = " ".join(command)
        for fragment, stderr in self.failing.items():
            if fragment in text:
                return subprocess.CompletedProcess(list(command), 2, "", stderr)
        return subprocess.CompletedProcess(list(command), 0, "", "")

    def deleted_namespace(self) -> bool:
        return self.commands[-1][:3] == ["ip", "netns", "delete"]


def test_netem_present_is_ok_and_cleaned_up() -> None:
    run = ScriptedRun()
    assert netem.probe_netem(run, is_root=True) == netem.NetemStatus(True)
    assert any("netem" in command for command in run.commands)
    assert run.deleted_namespace()


def test_kernel_without_netem_says_why() -> None:
    run = ScriptedRun({"root netem": QDISC_UNKNOWN})
    status = netem.probe_netem(run, is_root=True)
    assert not status.ok
    assert status.reason == (
        "netem not available on this machine: `tc qdisc add ...` failed: Specified qdisc kind is unknown"
    )
    assert run.deleted_namespace()


def test_veth_failure_still_deletes_the_namespace() -> None:
    run = ScriptedRun({"type veth": "RTNETLINK answers: Operation not supported\n"})
    status = netem.probe_netem(run, is_root=True)
    assert status.reason.endswith("RTNETLINK answers: Operation not supported")
    assert run.deleted_namespace()


def test_no_namespace_means_nothing_to_delete() -> None:
    run = ScriptedRun({"netns add": "mount --make-shared /run/netns failed: Permission denied\n"})
    status = netem.probe_netem(run, is_root=True)
    assert status.reason.startswith(
        "netem not available on this machine: could not create a network namespace"
    )
    assert len(run.commands) == 1


def test_not_root() -> None:
    run = ScriptedRun()
    assert netem.probe_netem(run, is_root=False).reason == (
        "netem not available on this machine: needs root to create a network namespace"
    )
    assert run.commands == []


@pytest.mark.process
@pytest.mark.usefixtures("require_root")
def test_real_probe_answers_and_leaves_no_namespace() -> None:
    status = netem.probe_netem()
    assert status.ok or status.reason.startswith(netem.UNAVAILABLE + ": "), status
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    assert netem.namespace_name() not in namespaces
