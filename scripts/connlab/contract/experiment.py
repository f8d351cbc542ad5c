"""The declarative experiment spec (experiments/<name>/experiment.yaml) and its expansion into windows."""

from __future__ import annotations

import functools
import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator

from connlab.contract.pgbench_options import PgbenchOptions
from connlab.contract.probes.registry import PROBES
from connlab.contract.provenance import CALIBRATION_S, HELD_PROFILES
from connlab.contract.spec_parts import (
    DatabaseSpec,
    PoolerSpec,
    Refine,
    Role,
    ServerSpec,
    Strict,
    Workload,
    check_client_entries,
)
from connlab.contract.yaml_models import load_yaml_model
from connlab.errors import LabError
from connlab.paths import EXPERIMENT_FILE_NAME, EXPERIMENTS_DIR

ProfileName = Literal["quick", "full", "tiny"]


class Profile(Strict):
    duration_s: int = Field(ge=1)
    passes: int = Field(ge=1)
    clients: list[int | str] | None = None
    scale: int | None = Field(default=None, ge=1)
    # A select-only window with one client, the same on every machine, places machines against each other.
    # Only the tiny profile, whose calibration is never held to the folder's, may shorten it.
    calibration_s: int = Field(default=CALIBRATION_S, ge=1)
    # Only these workloads (ids): a quick look at the points an article's claims read, not every one.
    workloads: list[str] | None = None
    # Extra points and passes after the grid (connlab.lab.refine); None: the grid only. Set per profile, so
    # that the spec's hash, and with it the resuming of runs written before, is unchanged.
    refine: Refine | None = None

    _clients = field_validator("clients")(check_client_entries)


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
    # Poolers in front of the server, each started once per run; windows of workloads that target
    # different poolers interleave like any other workloads.
    poolers: list[PoolerSpec] = Field(default_factory=list)
    # When the poolers start: once for the run, or afresh at each pass, so that a reading taken at the
    # start (the tree before the first query) or a series from a cold start has one reading per pass.
    pooler_start: Literal["per-run", "per-pass"] = "per-run"
    # In-window probes (connlab.contract.probes.registry.PROBES), e.g. [backends, wait_events].
    probes: list[str] = Field(default_factory=list)
    # A model fitted to the experiment's throughput curves by the aggregation (main.usl_fits).
    fit: Literal["usl"] | None = None
    profiles: dict[ProfileName, Profile]

    @property
    def uses_tls(self) -> bool:
        return any(workload.tls for workload in self.workloads)

    def pooler(self, name: str) -> PoolerSpec | None:
        return next((pooler for pooler in self.poolers if pooler.instance == name), None)

    _clients = field_validator("clients")(check_client_entries)

    @model_validator(mode="after")
    def _roles_exist(self) -> Experiment:
        names = {role.name for role in self.roles}
        poolers = [pooler.instance for pooler in self.poolers]
        if len(set(poolers)) != len(poolers):
            raise ValueError(
                f"poolers: each kind at most once unless each has its own name: (got {', '.join(poolers)})"
            )
        unknown = [name for name in self.probes if name not in PROBES]
        if unknown:
            raise ValueError(f"probes: unknown {', '.join(unknown)}; known: {', '.join(PROBES)}")
        for workload in self.workloads:
            if workload.target != "direct" and workload.target not in poolers:
                raise ValueError(
                    f"workload {workload.id} targets {workload.target}, which is not one of the poolers"
                )
            if workload.role is not None and workload.role not in names:
                raise ValueError(f"workload {workload.id}: role {workload.role!r} is not in roles")
            if workload.tls and (workload.transport or self.transport) != "tcp":
                # libpq never negotiates TLS on a unix socket, so sslmode=require would measure nothing.
                raise ValueError(f"workload {workload.id}: tls needs transport tcp")
            if workload.pool_size is not None and workload.target == "direct":
                raise ValueError(f"workload {workload.id}: pool_size needs a pooler as its target")
        ids = {workload.id for workload in self.workloads}
        for name, profile in self.profiles.items():
            unknown = [w for w in profile.workloads or [] if w not in ids]
            if unknown:
                raise ValueError(f"profiles.{name}.workloads: not among the workloads: {', '.join(unknown)}")
        for name in HELD_PROFILES:
            held = self.profiles.get(name)  # type: ignore[call-overload]
            if held is not None and held.calibration_s != CALIBRATION_S:
                raise ValueError(
                    f"profiles.{name}.calibration_s: every {' and '.join(HELD_PROFILES)} run calibrates for "
                    f"{CALIBRATION_S} s, so that its figure compares with the folder's; only tiny may set it"
                )
        if self.pooler_start == "per-pass" and not self.poolers:
            raise ValueError("pooler_start: per-pass needs poolers")
        if self.server.versions and self.poolers:
            raise ValueError("server.versions: comparing versions through a pooler is not supported")
        if len(set(self.server.versions)) != len(self.server.versions):
            raise ValueError("server.versions: a version is listed twice")
        return self


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
    def refine(self) -> Refine | None:
        return self.profile.refine

    def curve_workloads(self) -> list[Workload]:
        """The workloads measured at every client count of the grid: each one's points on a server budget
        form a curve that refinement may add to (a workload at a few fixed counts is not a curve)."""
        return [workload for workload in self.spec.workloads if workload.clients is None]

    def refinement_windows_per_curve(self) -> int:
        """The most windows refinement adds to one curve: the profile's budget share of its grid windows."""
        if self.refine is None:
            return 0
        return math.floor(self.refine.budget_share * self.profile.passes * len(self.client_counts))

    def refinement_windows(self) -> int:
        """The most windows refinement adds to the run: what `connlab estimate` counts beside the grid."""
        curves = len(self.curve_workloads()) * len(self.budgets)
        return curves * self.refinement_windows_per_curve()

    @property
    def spec_hash(self) -> str:
        """Identifies what is measured; a resumed run must have the same one."""
        spec = self.spec.model_dump(mode="json")
        if spec.get("pooler_start") == "per-run":
            del spec["pooler_start"]  # the default: specs written before it existed keep their hash
        for profile in spec["profiles"].values():
            if profile.get("refine") is None:
                profile.pop("refine", None)  # likewise a profile without refinement
        payload = {
            "spec": spec,
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
    stat = path.stat()
    return _load_experiment_file(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=256)
def _load_experiment_file(path: Path, mtime_ns: int, size: int) -> Experiment:
    """One parse per version of the file (its time and size are the key): aggregation, claims and every
    machine's page ask for the same few specs, and parsing YAML is slow."""
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
    chosen = [w for w in spec.workloads if profile.workloads is None or w.id in profile.workloads]
    spec = spec.model_copy(update={"workloads": [_expand_workload(w, cores) for w in chosen]})
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
        protocol=workload.protocol or plan.spec.protocol,
    )
