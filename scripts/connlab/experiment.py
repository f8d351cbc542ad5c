"""The declarative experiment spec (experiments/<name>/experiment.yaml) and its expansion into windows."""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from connlab.data.yaml_models import load_yaml_model
from connlab.errors import LabError
from connlab.lab.pgbench import PgbenchOptions
from connlab.paths import EXPERIMENT_FILE_NAME, EXPERIMENTS_DIR

ProfileName = Literal["quick", "full", "tiny"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServerSpec(Strict):
    # A number of cores (fractional means a CPU quota), or "half": half the machine's cores, the rest
    # going to pgbench, so one file serves a 2-core laptop and a 64-core server alike.
    cpu_budget: float | Literal["half"] = "half"
    # Several budgets measured in turn, as shares of cpu_budget (the core-budget experiment).
    budget_shares: list[float] = Field(default_factory=lambda: [1.0], min_length=1)
    # Several PostgreSQL major versions measured in turn (the pg-versions experiment), each from its pinned
    # build: every workload is measured on each, one server running at a time. Empty: the one PostgreSQL
    # the machine's runs use (PG_BINDIR, PG_VERSION or Debian's).
    versions: list[int] = Field(default_factory=list)

    def cores(self, online: int | None = None) -> float:
        if self.cpu_budget == "half":
            return max(1, (online or len(os.sched_getaffinity(0))) // 2)
        if self.cpu_budget <= 0:
            raise LabError(f"server.cpu_budget must be positive, got {self.cpu_budget}")
        return float(self.cpu_budget)

    settings: dict[str, str | int | float | bool] = Field(default_factory=dict)


class DatabaseSpec(Strict):
    scale: int = Field(ge=1)
    prewarm: list[str] = Field(default_factory=list)


class Role(Strict):
    """A login role with its own pg_hba.conf lines, so one cluster can compare authentication methods."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    auth: Literal["trust", "scram-sha-256"]

    @property
    def needs_password(self) -> bool:
        """SCRAM roles get a password generated for each run: none is written in a spec or a result."""
        return self.auth == "scram-sha-256"

    def hba_lines(self) -> list[str]:
        return [f"local all {self.name} {self.auth}", f"host all {self.name} 127.0.0.1/32 {self.auth}"]


def _check_client_entries(entries: list[int | str] | None) -> list[int | str] | None:
    for entry in entries or []:
        if isinstance(entry, str) and not (entry.endswith("x") and _is_number(entry[:-1])):
            raise ValueError(f"client entry {entry!r} must be a number or a multiple of cores like '4x'")
    return entries


class Workload(Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    label: str
    builtins: list[str] = Field(default_factory=list)
    # A pgbench script instead of builtins (e.g. one small query, then idle for :window_s seconds).
    script: str | None = None
    # "per-transaction" is pgbench -C: a new connection (and authentication) for every transaction.
    connect: Literal["held", "per-transaction"] = "held"
    role: str | None = None  # one of the experiment's roles; default the postgres superuser
    transport: Literal["unix", "tcp"] | None = None  # default: the experiment's transport
    target: Literal["direct", "pgbouncer"] = "direct"
    # Only these of the grid's client counts (e.g. connection churn at one count only); "Nx" is N times
    # the server's cores, expanded by make_plan.
    clients: list[int | str] | None = None
    # Session settings for pgbench's connections (PGOPTIONS), e.g. synchronous_commit: "off".
    settings: dict[str, str | int | float | bool] = Field(default_factory=dict)
    # pgbench -j, and a CPU quota for pgbench as a share of its cores (needs cgroups): is the client the
    # bottleneck?
    jobs: int | None = Field(default=None, ge=1)
    client_cpu_share: float | None = Field(default=None, gt=0, le=1)
    # Through PgBouncer: a pool of this many server connections (a database alias of its own); "Nx" is
    # N times the server's cores, expanded by make_plan.
    pool_size: int | str | None = None
    # The PostgreSQL major version this workload runs on; set by make_plan from server.versions.
    postgres: int | None = None

    @field_validator("pool_size")
    @classmethod
    def _pool_size_entry(cls, value: int | str | None) -> int | str | None:
        if isinstance(value, int) and value < 1:
            raise ValueError("pool_size must be at least 1")
        _check_client_entries([value] if value is not None else [])
        return value

    _clients = field_validator("clients")(_check_client_entries)

    def runs_at(self, clients: int) -> bool:
        return self.clients is None or clients in self.clients

    @model_validator(mode="after")
    def _builtins_or_script(self) -> Workload:
        if bool(self.builtins) == bool(self.script):
            raise ValueError(f"workload {self.id}: give either builtins or a script, not both or neither")
        return self


class PoolerSpec(Strict):
    """A pooler in front of the server, started once per run on the server's CPU budget."""

    kind: Literal["pgbouncer"] = "pgbouncer"
    pool_size: int = Field(default=20, ge=1)
    pool_mode: Literal["session", "transaction", "statement"] = "transaction"


class Profile(Strict):
    duration_s: int = Field(ge=1)
    passes: int = Field(ge=1)
    clients: list[int | str] | None = None
    scale: int | None = Field(default=None, ge=1)
    # A select-only window with one client, the same on every machine, places machines against each other.
    calibration_s: int = Field(default=10, ge=1)

    _clients = field_validator("clients")(_check_client_entries)


class Experiment(Strict):
    title: str
    summary: str
    server: ServerSpec
    database: DatabaseSpec
    workloads: list[Workload] = Field(min_length=1)
    clients: list[int | str] = Field(min_length=1)
    max_clients: int = Field(ge=1)
    transport: Literal["unix", "tcp"] = "unix"
    protocol: Literal["simple", "extended", "prepared"] = "simple"
    roles: list[Role] = Field(default_factory=list)
    pooler: PoolerSpec | None = None
    # Count the server's client backends once a second during each window (admission control).
    sample_backends: bool = False
    # Poll pg_stat_activity every 100 ms for what active client backends are doing (wait-events).
    sample_wait_events: bool = False
    # Measure the server's memory once the window's connections are all connected and idle.
    measure_memory: bool = False
    # Poll PgBouncer's SHOW POOLS during each window: clients waiting for a server connection.
    sample_pools: bool = False
    profiles: dict[ProfileName, Profile]

    _clients = field_validator("clients")(_check_client_entries)

    @model_validator(mode="after")
    def _roles_exist(self) -> Experiment:
        names = {role.name for role in self.roles}
        for workload in self.workloads:
            if workload.target != "direct" and self.pooler is None:
                raise ValueError(f"workload {workload.id} targets {workload.target}, but pooler is not set")
            if workload.role is not None and workload.role not in names:
                raise ValueError(f"workload {workload.id}: role {workload.role!r} is not in roles")
            if workload.pool_size is not None and workload.target != "pgbouncer":
                raise ValueError(f"workload {workload.id}: pool_size needs target: pgbouncer")
        if self.server.versions and self.pooler is not None:
            raise ValueError("server.versions: comparing versions through a pooler is not supported")
        if len(set(self.server.versions)) != len(self.server.versions):
            raise ValueError("server.versions: a version is listed twice")
        return self


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def expand_clients(entries: list[int | str], server_cores: float, max_clients: int) -> list[int]:
    """Client counts: numbers as they are, 'Nx' as N times the server's cores (at least 1)."""
    counts = set()
    for entry in entries:
        count = max(1, math.ceil(float(entry[:-1]) * server_cores)) if isinstance(entry, str) else entry
        if count <= max_clients:
            counts.add(int(count))
    return sorted(counts)


@dataclass(frozen=True)
class Window:
    """One measurement window: a workload at a client count in one pass."""

    pass_no: int
    order: str  # "asc" or "desc"
    workload: Workload
    clients: int
    budget: float  # the server's CPU budget in cores for this window

    @property
    def key(self) -> tuple[int, str, int, float]:
        return (self.pass_no, self.workload.id, self.clients, self.budget)


def pass_order(pass_no: int) -> str:
    """Passes alternate ascending, descending, ascending... so slow drift cannot pose as a trend."""
    return "asc" if pass_no % 2 == 1 else "desc"


@dataclass(frozen=True)
class Plan:
    experiment: str
    server_cores: float
    spec: Experiment
    profile_name: str
    profile: Profile
    client_counts: list[int]

    @property
    def budgets(self) -> list[float]:
        return [round(share * self.server_cores, 3) for share in self.spec.server.budget_shares]

    @property
    def scale(self) -> int:
        return self.profile.scale or self.spec.database.scale

    def windows(self) -> list[Window]:
        windows = []
        for pass_no in range(1, self.profile.passes + 1):
            order = pass_order(pass_no)
            counts = self.client_counts if order == "asc" else list(reversed(self.client_counts))
            # Workloads interleave at each client count, so drift hits every workload alike.
            # Budgets and workloads interleave at each client count, so drift hits all of them alike.
            windows += [
                Window(pass_no, order, workload, clients, budget)
                for clients in counts
                for budget in self.budgets
                for workload in self.spec.workloads
                if workload.runs_at(clients)
            ]
        return windows

    @property
    def spec_hash(self) -> str:
        """Identifies what is measured; a resumed run must have the same one."""
        payload = {
            "spec": self.spec.model_dump(mode="json"),
            "profile": self.profile_name,
            "clients": self.client_counts,
            "server_cores": self.server_cores,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:12]


def experiment_names() -> list[str]:
    return sorted(p.parent.name for p in EXPERIMENTS_DIR.glob(f"*/{EXPERIMENT_FILE_NAME}"))


def load_experiment(name: str, directory: Path = EXPERIMENTS_DIR) -> Experiment:
    path = directory / name / EXPERIMENT_FILE_NAME
    if not path.exists():
        known = ", ".join(experiment_names()) or "none"
        raise LabError(f"no experiment named {name!r} ({path} is missing); known experiments: {known}")
    return load_yaml_model(path, Experiment)


def make_plan(name: str, profile_name: str, server_cores: float | None = None) -> Plan:
    spec = load_experiment(name)
    if profile_name not in spec.profiles:
        raise LabError(
            f"experiment {name} has no profile {profile_name!r}; it has: {', '.join(spec.profiles)}"
        )
    profile = spec.profiles[profile_name]
    cores = server_cores if server_cores is not None else spec.server.cores()
    # Pool sizes and workloads' client counts given as multiples of the cores become numbers for this
    # machine (lists of plain numbers are left as written, so existing runs keep their spec hash).
    spec = spec.model_copy(update={"workloads": [_expand_workload(w, cores) for w in spec.workloads]})
    spec = spec.model_copy(update={"workloads": _per_version(spec.workloads, spec.server.versions)})
    counts = expand_clients(profile.clients or spec.clients, cores, spec.max_clients)
    return Plan(name, cores, spec, profile_name, profile, counts)


def _expand_workload(workload: Workload, cores: float) -> Workload:
    update: dict[str, object] = {}
    if workload.pool_size is not None:
        update["pool_size"] = expand_clients([workload.pool_size], cores, 10**6)[0]
    if workload.clients is not None and any(isinstance(entry, str) for entry in workload.clients):
        update["clients"] = expand_clients(workload.clients, cores, 10**6)
    return workload.model_copy(update=update) if update else workload


def _per_version(workloads: list[Workload], versions: list[int]) -> list[Workload]:
    """Each workload once per version, ids suffixed -pg<major>. Versions are outermost so the server
    changes once per client count and pass, not between every pair of windows."""
    if not versions:
        return workloads
    return [
        w.model_copy(
            update={"id": f"{w.id}-pg{major}", "label": f"{w.label}, PostgreSQL {major}", "postgres": major}
        )
        for major in versions
        for w in workloads
    ]


def window_options(
    plan: Plan, workload: Workload, clients: int, jobs: int, script_dir: str = "."
) -> PgbenchOptions:
    """The pgbench flags of one window: shared by the harness and the check-it-yourself snippets.

    A workload's script is read from script_dir/<workload id>.sql (the caller writes it there)."""
    return PgbenchOptions(
        script_path=f"{script_dir}/{workload.id}.sql" if workload.script else None,
        connect_per_transaction=workload.connect == "per-transaction",
        builtins=tuple(workload.builtins),
        clients=clients,
        jobs=workload.jobs or jobs,
        duration_s=plan.profile.duration_s,
        protocol=plan.spec.protocol,
    )
