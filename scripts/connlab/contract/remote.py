"""A server the user names (`connlab run EXP --server URL`), as every stage sees it: what machine.yaml
records of it and of the network between it and the client host, and the words that say what cannot be
measured from a client.

The client host runs pgbench, the poolers and the harness; the server is measured only over SQL. Its cores
are what the user stated (`--server-cores`): SQL cannot see them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

# machine.yaml's and every row's cpu_budget_method for a remote server: the harness gave it no budget.
REMOTE_CPU_METHOD = "remote"
# What the probes that need the server's host (its cgroup memory, smaps, CPU time) say: in a CSV row such a
# figure is an empty cell, as every figure a window did not measure; machine.yaml says why, in these words.
NOT_AVAILABLE_REMOTE = "not available for a remote server"
# The columns that stay empty for a remote server, for that reason.
SERVER_HOST_COLUMNS = (
    "server_cpu_cores", "mem_cgroup_usage_bytes", "mem_cgroup_rss_bytes", "mem_cgroup_cache_bytes",
    "mem_rss_sum_bytes", "mem_pss_sum_bytes", "mem_anon_rss_sum_bytes", "mem_backends",
)  # fmt: skip
# The comment the harness puts on the database it creates: a database without it is never the harness's.
OWN_DATABASE_MARK = "connlab: created by the connlab harness"


class RemoteServerFacts(BaseModel):
    """machine.yaml's `remote_server`: the server a client host measured over the network. Never a
    password: the URL is recorded without one."""

    model_config = ConfigDict(extra="forbid")

    host: str = Field(max_length=255)
    port: int = Field(ge=1, le=65535)
    client_host: str = Field(max_length=255)
    stated_cores: float = Field(gt=0, le=4096, description="the server's cores as the user stated them")
    server_version: str = Field(max_length=200)
    max_connections: int = Field(ge=1)
    shared_buffers: str = Field(max_length=40)
    ssl: str = Field(max_length=10)
    password_encryption: str = Field(max_length=40)
    # Median round trip of `SELECT 1` over a fresh connection, measured before the run; each window's row
    # has its own (server_rtt_ms).
    rtt_ms: float = Field(ge=0)
    server_host_probes: str = Field(default=NOT_AVAILABLE_REMOTE, max_length=200)
    # What the role could not do on that server, and so what the run did without (pg_prewarm, CHECKPOINT).
    skipped: list[str] = Field(default_factory=list, max_length=20)
