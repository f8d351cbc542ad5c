"""Names and numbers that more than one stage uses, each defined once."""

from __future__ import annotations

# The database pgbench's tables live in, on the server and behind every pooler.
BENCH_DB = "bench"
# The one address a throwaway cluster listens on (besides its unix socket), and pgbench's TCP host for it.
LOOPBACK_HOST = "127.0.0.1"
# The superuser the server runs as and the harness connects as (PostgreSQL refuses to run as root).
SERVER_USER = "postgres"
# Folders of results/ whose name starts so hold figures printed in an article, never measured here.
PUBLISHED_PREFIX = "published-"
# build/data/<this>: every results folder's machine.yaml, for the site.
MACHINES_JSON = "machines.json"
# build/data/<this>/<article>.json: each claim's verdict per machine, for the site.
CLAIMS_SUBDIR = "claims"
# build/data/<this>/<article>.json: the article's short answer and verdict rows; pool-sizes.json: one pool
# size per machine (connlab.data.answers), for the site.
ANSWERS_SUBDIR = "answers"
POOL_SIZES_FILE = "pool-sizes.json"
# Up to this many machines an article's verdict table has a column each (each row's cells, which the answers
# write); past it, the median across them and the machines of each verdict, so the answers write no cell.
VERDICT_COLUMNS_UP_TO = 5
# The PostgreSQL major a run uses where PG_VERSION names none and Debian's packages are missing: the one
# Debian 12 ships, so that such a machine measures the server the project's own machines do
# (connlab.lab.pg_dist; the Contributing page says it).
DEFAULT_PG_MAJOR = 15
# The harness's own flag in every row (column client_saturated): pgbench used this share of the cores it was
# given, written by connlab.lab.counters and checked by validation. It records pgbench alone; whether a
# window's rate is the client's is the rule below, which the aggregation applies from the CPU figures.
CLIENT_SATURATION_SHARE = 0.9
# The busiest process decides: a window's rate is a bound (the client's), not a value (the server's or the
# pooler's), when pgbench used at least CLIENT_NEAR_LIMIT_SHARE of its cores (or quota) while the server and
# the pooler each used less than OTHERS_WELL_BELOW_SHARE of theirs. One rule for every table and claim,
# applied once to the windows (connlab.data.views.CLIENT_BOUND_SQL) and stated on the methodology page.
CLIENT_NEAR_LIMIT_SHARE = 0.85
OTHERS_WELL_BELOW_SHARE = 0.5
# A point is in a steady state when its windows' clients connected within this share of the window (the
# median over its passes, so that a point's passes are kept or left out together: dropping only the passes
# that connected slowest would pick the passes). pgbench's rate leaves the connecting out, but while hundreds
# of clients are still connecting fewer are in flight, and a window mostly spent connecting leaves a rate
# over a sliver. Throughput and latency of a point that was not steady are left out of every figure; applied
# once to the windows (connlab.data.views.STEADY_SQL) and stated on the methodology page.
CONNECTING_SHARE_LIMIT = 0.1
# A peak is placed where its measured neighbours on its curve lie within this factor of it: half a doubling
# step, the project's band for "at" a point per core. Claims about peaks are judged only where the points
# place them (connlab.data.peak_bracket); the methodology page states it.
PEAK_RESOLUTION = 2**0.5
# The CFS scheduler's period: a CPU quota of N cores is N times this many microseconds per period.
CFS_PERIOD_US = 100_000


def pool_alias(pool_size: int) -> str:
    """The database name clients use for a pooler's pool of this size (a database alias of its own)."""
    return f"{BENCH_DB}_pool{pool_size}"


def session_options(settings: dict[str, object]) -> str:
    """Session settings as flags, e.g. '-c synchronous_commit=off': PGOPTIONS for pgbench's connections,
    and postgres's own -o flags for server settings."""
    return " ".join(f"-c {key}={value}" for key, value in settings.items())


def machine_with_cores(machine: str, cores: object) -> str:
    """A machine as the charts name it, with its server cores (its name alone hides them: amd-epyc-2c-24g ran
    its server on 1 core): "amd-epyc-2c-24g-2, 1 server core"; the name alone where the cores are unknown."""
    if cores is None:
        return machine
    shown = f"{float(cores):g}"  # type: ignore[arg-type]
    return f"{machine}, {shown} server core{'' if shown == '1' else 's'}"
