"""results/<machine>/machine.yaml: who measured, collected automatically.

A contributor edits only `description`; every other field is rewritten from the machine on each run.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import psutil
import yaml

from connlab.contract.machine_schema import NOT_AVAILABLE, parse_port_range
from connlab.contract.poolers.registry import VERSIONED
from connlab.contract.provenance import FINGERPRINT_FIELDS
from connlab.contract.yaml_models import load_contributed_yaml
from connlab.errors import LabError
from connlab.lab import pg_dist
from connlab.lab.host import find_bindir, find_program
from connlab.lab.netem import probe_netem
from connlab.lab.poolers.base import PoolerUnavailable
from connlab.lab.poolers.registry import POOLERS
from connlab.lab.results_file import write_atomically
from connlab.paths import MACHINE_FILE_NAME, machine_results_dir

CPUINFO = Path("/proc/cpuinfo")
OS_RELEASE = Path("/etc/os-release")
PROC_NET_IPV4 = Path("/proc/sys/net/ipv4")
# machine.yaml's fields for the client host's TCP settings, each named as its file under PROC_NET_IPV4.
CLIENT_PORT_FACTS = ("ip_local_port_range", "tcp_tw_reuse", "tcp_fin_timeout")


def parse_cpu_model(cpuinfo: str) -> str | None:
    """The first processor's `model name` in /proc/cpuinfo; None where it has none (some ARM kernels)."""
    for line in cpuinfo.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return None


def parse_hypervisor_flag(cpuinfo: str) -> bool:
    """Whether the CPU flags include `hypervisor`: the kernel runs in a virtual machine."""
    return re.search(r"^flags\s*:.*\bhypervisor\b", cpuinfo, re.M) is not None


def parse_cpu_flags(cpuinfo: str) -> str | None:
    """The first processor's CPU flags (x86 `flags`, ARM `Features`), sorted and space-separated: two
    processors may list them in another order. None where /proc/cpuinfo has neither."""
    match = re.search(r"^(?:flags|Features)\s*:(.*)$", cpuinfo, re.M)
    return " ".join(sorted(set(match.group(1).split()))) if match else None


def parse_os_name(os_release: str) -> str | None:
    """PRETTY_NAME of /etc/os-release, quoted or not."""
    match = re.search(r'^PRETTY_NAME="?([^"\n]*)"?', os_release, re.M)
    return match.group(1) if match else None


def cpu_model() -> str:
    return parse_cpu_model(CPUINFO.read_text()) or platform.processor() or "unknown"


def cpu_flags() -> str:
    return parse_cpu_flags(CPUINFO.read_text()) or "unknown"


def virtualisation() -> str:
    """The hypervisor's name, 'none' on bare metal, from what the kernel tells without systemd."""
    if not parse_hypervisor_flag(CPUINFO.read_text()):
        return "none"
    for path in ("/sys/class/dmi/id/sys_vendor", "/sys/class/dmi/id/product_name"):
        try:
            vendor = Path(path).read_text().strip()
        except OSError:
            continue
        if vendor:
            return vendor
    return "unknown hypervisor"


def os_name() -> str:
    try:
        text = OS_RELEASE.read_text()
    except OSError:
        return platform.system()
    return parse_os_name(text) or platform.system()


def shape_id() -> str:
    """A path-safe name for the machine's shape: CPU family, cores and memory, e.g. `amd-epyc-2c-24g`."""
    words = re.sub(r"\(.*?\)|@.*|cpu|processor|[0-9]+-core", " ", cpu_model().lower()).split()
    family = "-".join(re.sub(r"[^a-z0-9]", "", w) for w in words[:3] if re.sub(r"[^a-z0-9]", "", w))
    memory_gib = round(psutil.virtual_memory().total / 2**30)
    return f"{family or 'cpu'}-{os.cpu_count()}c-{memory_gib}g"


def client_port_facts(folder: Path = PROC_NET_IPV4) -> dict[str, object]:
    """The client host's ip_local_port_range ("low high"), tcp_tw_reuse and tcp_fin_timeout, as the kernel
    has them now: what bounds how fast pgbench can open new TCP connections from here. A file that cannot
    be read or does not hold what the kernel writes there (another kernel, a container's /proc) is left
    out, and machine.yaml then keeps what an earlier run recorded."""
    found: dict[str, object] = {}
    for name in CLIENT_PORT_FACTS:
        try:
            text = (folder / name).read_text().strip()
        except OSError:
            continue
        if name == "ip_local_port_range":
            try:
                low, high = parse_port_range(text)
            except ValueError:
                continue
            found[name] = f"{low} {high}"
        elif text.isdigit() and (name != "tcp_tw_reuse" or text in ("0", "1", "2")):
            found[name] = int(text)
    return found


# FINGERPRINT_FIELDS (connlab.contract.provenance) tell one machine from another of the same shape, as
# machine.yaml records them: one id is one machine, so a run is never written into the folder of a machine
# whose facts these are not.


def fingerprint() -> dict[str, object]:
    """This machine's fingerprint (FINGERPRINT_FIELDS), as collect() writes those fields."""
    return {
        "cpu_model": cpu_model(),
        "cpu_flags": cpu_flags(),
        "threads": os.cpu_count(),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "kernel": platform.release(),
        "virtualised": virtualisation(),
    }


def fingerprint_differences(machine_id: str, current: dict[str, object]) -> list[str]:
    """How results/<machine_id>/machine.yaml's machine differs from `current` ("kernel 6.1 here, 6.2
    there"); empty where the folder is new or is this machine."""
    path = machine_results_dir(machine_id) / MACHINE_FILE_NAME
    try:
        recorded = load_contributed_yaml(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, yaml.YAMLError) as error:
        raise LabError(f"{path}: cannot be read ({error}); fix it, or run with MACHINE=<new id>") from error
    recorded = recorded if isinstance(recorded, dict) else {}
    return [
        # The flags are a long list: what differs is shown, not the lists.
        _flags_difference(str(current[field]), str(recorded[field]))
        if field == "cpu_flags"
        else f"{field} {current[field]} here, {recorded[field]} there"
        for field in FINGERPRINT_FIELDS
        if field in recorded and str(recorded[field]) != str(current[field])
    ]


def _flags_difference(here: str, there: str) -> str:
    """What two flag lists differ by, a few flags each way: `cpu_flags +avx512f -sse4a here against there`."""
    mine, theirs = set(here.split()), set(there.split())
    added = [f"+{flag}" for flag in sorted(mine - theirs)[:5]]
    changes = added + [f"-{flag}" for flag in sorted(theirs - mine)[:5]]
    return f"cpu_flags {' '.join(changes)} here against there"


def free_machine_id(machine_id: str) -> str:
    """The first of <id>-2, <id>-3, ... whose folder does not exist: the way out a refusal names."""
    return next(
        candidate
        for candidate in (f"{machine_id}-{number}" for number in range(2, 10_000))
        if not machine_results_dir(candidate).exists()
    )


def refuse_another_machines_folder(machine_id: str, current: dict[str, object] | None = None) -> None:
    """LabError, naming what differs and the way out, where results/<machine_id>/ holds another machine."""
    differences = fingerprint_differences(machine_id, current or fingerprint())
    if differences:
        raise LabError(
            f"results/{machine_id}/ holds another machine's results ({'; '.join(differences)}): "
            f"give this machine an id of its own, e.g. MACHINE={free_machine_id(machine_id)}"
        )


def machine_id_for_run(requested: str | None = None) -> str:
    """The results folder this machine's runs write: the id asked for (--machine, else MACHINE), refused
    where that folder holds another machine; without one, the machine's shape, or the shape numbered -2,
    -3, ... where machines of the same shape already have folders."""
    asked = requested or os.environ.get("MACHINE")
    current = fingerprint()
    if asked:
        refuse_another_machines_folder(asked, current)
        return asked
    shape = shape_id()
    candidates = [shape, *(f"{shape}-{number}" for number in range(2, 1000))]
    return next(candidate for candidate in candidates if not fingerprint_differences(candidate, current))


def program_version(command: list[str]) -> str:
    try:
        result = subprocess.run(command, capture_output=True, text=True, check=False, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return NOT_AVAILABLE
    output = result.stdout + result.stderr
    match = re.search(r"[0-9]+(?:\.[0-9]+)+", output)
    return match.group(0) if match else "unknown"


NETEM_AVAILABLE = "available"


def netem_status() -> str:
    """Whether network-distance windows can run here: NETEM_AVAILABLE, or the probe's reason they cannot."""
    status = probe_netem()
    return NETEM_AVAILABLE if status.ok else status.reason


def pooler_versions() -> dict[str, str]:
    """Each pooler's version, or NOT_AVAILABLE where the harness would find no binary of it."""
    versions = _version_commands()
    return {key: program_version(command) if command else NOT_AVAILABLE for key, command in versions}


def pooler_facts() -> dict[str, str]:
    """Each versioned pooler's declared facts (machine.yaml's `<kind>_<fact>`, e.g. pgcat_allocator) as its
    adapter says them for the binary the runs use, NOT_AVAILABLE where there is none."""
    facts: dict[str, str] = {}
    for kind, config in VERSIONED.items():
        if not config.facts:
            continue
        try:
            said = POOLERS[kind].facts()
        except PoolerUnavailable:
            said = {}
        for fact in config.facts:
            facts[config.fact_field(fact)] = said.get(fact, NOT_AVAILABLE)
    return facts


def _version_commands() -> Iterator[tuple[str, list[str] | None]]:
    """Each pooler's version command (its declaration's) with the binary the harness would run, or None
    where there is none: a binary found beyond PATH (ODYSSEY_BIN, build/odyssey from `make poolers`) is the
    one the runs use, or machine.yaml would say "not available" of a pooler that was measured."""
    for kind, config in VERSIONED.items():
        try:
            yield str(config.version_field), [POOLERS[kind].binary(), *(config.version_args or ())]
        except PoolerUnavailable:
            yield str(config.version_field), None


# What a run that compares several PostgreSQL versions leaves as it was: the machine's own PostgreSQL and
# the calibration measured on it describe the machine, not that comparison.
POSTGRES_FACTS = (
    "postgres_version", "postgres_source", "pgbench_version", "calibration_tps", "calibration_spread_tps",
)  # fmt: skip
# The folder's calibration: its first run's. Every later run is held to it (connlab.lab.calibration), so
# it stays as recorded rather than drift with them; each run's own is in its rows.
CALIBRATION_FACTS = ("calibration_tps", "calibration_spread_tps")


def collect(
    postgres_version: str, cpu_budget_method: str, profile: str, bindir: Path | None = None
) -> dict[str, object]:
    physical = psutil.cpu_count(logical=False) or os.cpu_count()
    # The run's own binaries, not whatever pgbench is first on PATH: with PG_VERSION they differ.
    bindir = bindir or find_bindir()
    return {
        "cpu_model": cpu_model(),
        "cpu_flags": cpu_flags(),
        "cores": physical,
        "threads": os.cpu_count(),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "kernel": platform.release(),
        "os": os_name(),
        "virtualised": virtualisation(),
        "postgres_version": postgres_version,
        "postgres_source": pg_dist.source_of(bindir),
        "pgbench_version": program_version([find_program("pgbench", bindir), "--version"]),
        **pooler_versions(),
        **pooler_facts(),
        "netem": netem_status(),
        **client_port_facts(),
        "cpu_budget_method": cpu_budget_method,
        "profile": profile,
        "collected_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def write_machine_file(machine_id: str, facts: dict[str, object], keep_postgres: bool = False) -> Path:
    """Write machine.yaml, keeping the contributor's description; a full-profile entry is not
    downgraded by a later quick run (the profile field says the best profile measured); the folder's
    calibration, once recorded, is kept (CALIBRATION_FACTS), and so are its first date and the versions of
    poolers this run lacks. With keep_postgres, the PostgreSQL facts already recorded are kept (a run over
    several versions). The file is rewritten only where what it says changes."""
    folder = machine_results_dir(machine_id)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / MACHINE_FILE_NAME
    previous: dict[str, object] = {}
    if path.exists():
        previous = load_contributed_yaml(path.read_text(encoding="utf-8")) or {}
    data = {"id": machine_id, "description": previous.get("description", ""), **facts}
    rank = {"tiny": 1, "quick": 2, "full": 3}
    if rank.get(str(previous.get("profile")), 0) > rank.get(str(facts.get("profile")), 0):
        data["profile"] = previous["profile"]
    kept: tuple[str, ...] = ()
    if previous.get("calibration_tps") is not None:
        kept = CALIBRATION_FACTS
    if keep_postgres and previous.get("postgres_version"):
        kept = POSTGRES_FACTS
    for key in kept:  # as recorded before, absent ones included (an older file's)
        if key in previous:
            data[key] = previous[key]
        else:
            data.pop(key, None)
    # A rerun on the same machine (a fresh clone's `make all` beside its committed folder) leaves the file
    # as committed: the date is when the folder's facts were first collected (each run's own time is in its
    # rows), and a component this run lacks does not erase the version an earlier run measured with.
    if "collected_at" in previous:
        data["collected_at"] = previous["collected_at"]
    for key, value in facts.items():
        if value == NOT_AVAILABLE and previous.get(key) not in (None, NOT_AVAILABLE):
            data[key] = previous[key]
    for key in CLIENT_PORT_FACTS:  # a run that could not read /proc/sys keeps what an earlier one read
        if key not in facts and key in previous:
            data[key] = previous[key]
    # Compared as data: a hand-wrapped description or another key order is not a change.
    if data != previous:
        write_atomically(path, yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    return path
