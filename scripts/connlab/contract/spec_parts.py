"""The parts of an experiment spec: the server, the database, login roles, workloads and poolers."""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from connlab.errors import LabError


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
    # "direct", or the name of one of the experiment's poolers that the clients go through.
    target: str = "direct"
    # Only these of the grid's client counts (e.g. connection churn at one count only); "Nx" is N times
    # the server's cores, expanded by make_plan.
    clients: list[int | str] | None = None
    # Session settings for pgbench's connections (PGOPTIONS), e.g. synchronous_commit: "off".
    settings: dict[str, str | int | float | bool] = Field(default_factory=dict)
    # pgbench -j, and a CPU quota for pgbench as a share of its cores (needs cgroups): is the client the
    # bottleneck?
    jobs: int | None = Field(default=None, ge=1)
    client_cpu_share: float | None = Field(default=None, gt=0, le=1)
    # Through a pooler: a pool of this many server connections (a database alias of its own); "Nx" is
    # N times the server's cores, expanded by make_plan.
    pool_size: int | str | None = None
    # TLS between the clients and what they connect to (sslmode=require over TCP): the server gets ssl = on
    # with a throwaway certificate, a pooler its client-side TLS; the other workloads' clients ask for none.
    tls: bool = False
    # The PostgreSQL major version this workload runs on; set by make_plan from server.versions.
    postgres: int | None = None
    # pgbench -M for this workload; default the experiment's protocol.
    protocol: Literal["simple", "extended", "prepared"] | None = None
    # A bound on each client's wait to connect (PGCONNECT_TIMEOUT, libpq's whole seconds): a client a
    # pooler never serves (PgPool-II past num_init_children) fails the window after this long, with the
    # clients that did connect counted, instead of hanging until pgbench is killed.
    connect_timeout_s: int | None = Field(default=None, ge=2)

    @field_validator("clients")
    @classmethod
    def _client_entries(cls, value: list[int | str] | None) -> list[int | str] | None:
        return check_client_entries(value)

    @field_validator("pool_size")
    @classmethod
    def _pool_size_entry(cls, value: int | str | None) -> int | str | None:
        if isinstance(value, int) and value < 1:
            raise ValueError("pool_size must be at least 1")
        check_client_entries([value] if value is not None else [])
        return value

    def runs_at(self, clients: int) -> bool:
        return self.clients is None or clients in self.clients

    @model_validator(mode="after")
    def _builtins_or_script(self) -> Workload:
        if bool(self.builtins) == bool(self.script):
            raise ValueError(f"workload {self.id}: give either builtins or a script, not both or neither")
        return self


class PoolerSpec(Strict):
    """A pooler in front of the server, started once per run on the server's CPU budget.

    `kind` names an adapter of the harness's pooler registry (connlab.lab.poolers.registry.POOLERS); the
    harness refuses a plan whose kind it does not know. Workloads name the pooler in `target` by its
    `name`, which defaults to its kind: the same kind twice with different settings (prepared statements
    on and off) needs a name for each.

    `build` names a build of the kind's program staged by `make poolers` (e.g. "1.25.2":
    build/pgbouncer-1.25.2/bin/pgbouncer, connlab.paths.staged_pooler_bin_dir) instead of the machine's own
    (Debian's, or the one its variable names), so that one run measures several versions of one pooler; a
    machine without that build measures the rest and says so. The version each window measured is in its
    row (`pooler_version`)."""

    kind: str = Field(pattern=r"^[a-z][a-z0-9_-]*$")
    # A dot is allowed for a version in the name (pgbouncer-1.25).
    name: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9_.-]*$")
    build: str | None = Field(default=None, pattern=r"^[0-9]+(?:\.[0-9]+)+$")
    pool_size: int = Field(default=20, ge=1)
    pool_mode: Literal["session", "transaction", "statement"] = "transaction"
    # Adapter-specific settings, written into the pooler's own config as they are.
    settings: dict[str, str | int | float | bool] = Field(default_factory=dict)

    @property
    def instance(self) -> str:
        """What workloads' `target` and the rows' target column call it: its name, else its kind."""
        return self.name or self.kind


class Refine(Strict):
    """Points where the answer is, measured after a profile's grid (connlab.lab.refine): client counts
    between a curve's peak and its measured neighbours, and more passes where a point's passes disagree.
    Each curve (a workload on one server budget) gets at most `budget_share` of its grid's windows more,
    so the profile's estimated time grows by at most that share."""

    # Bisect (on a log scale) between the peak's measured neighbours until they are within a factor of 2.
    peak: bool = True
    # A point whose passes spread more than this share of their median tps (max - min over median) gets
    # up to `max_extra_passes` more passes; None: no extra passes.
    spread: float | None = Field(default=None, ge=0)
    max_extra_passes: int = Field(default=2, ge=0, le=2)
    # Client counts added per curve for its peak, at most; None: as many as the budget allows.
    max_extra_points: int | None = Field(default=None, ge=0)
    # The extra windows per curve, at most, as a share of that curve's grid windows.
    budget_share: float = Field(gt=0, le=1)


def check_client_entries(entries: list[int | str] | None) -> list[int | str] | None:
    for entry in entries or []:
        if isinstance(entry, str) and not (entry.endswith("x") and _is_number(entry[:-1])):
            raise ValueError(f"client entry {entry!r} must be a number or a multiple of cores like '4x'")
    return entries


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
