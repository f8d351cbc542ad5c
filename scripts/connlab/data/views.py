"""The views every experiment's aggregate.sql starts from, created in its schema before the SQL runs.

`windows` (a table, so that the experiment's SQL does not parse every CSV again per query): the raw rows of
one profile per machine, the most thorough it has (full > quick > tiny), so a
quick rerun on a machine with committed full results never dilutes them. Each window carries
`connect_share` (the share of it pgbench spent connecting its clients) and `steady` (its point's median share
is at most CONNECTING_SHARE_LIMIT); a point that was not steady has no throughput or latency in `windows`
(STEADY_STATE_COLUMNS read as NULL), so no figure, peak, fit or claim downstream reads a rate measured over a
sliver of its window. raw_windows keeps what pgbench printed.

`peak_stats`: each (machine, workload, CPU budget)'s peak: the highest median throughput among points where
pgbench never saturated its own cores (a client-bound point measures the client, not the server), with its
measured neighbours among those points.

`point_stats`: one row per point (machine, workload, target, transport, CPU budget, client count) with the
medians and ranges over its passes that the articles quote. An experiment's `points` table selects the
columns it publishes from here instead of repeating the aggregation; figures over the good windows only
(`FILTER (WHERE ok)`) are those pgbench reported, the CPU and probe figures are over every window.

`client_saturated` in `windows` is the project's one rule for a client-bound window (CLIENT_BOUND_SQL), not
the flag the harness wrote: every table, peak, fit and claim downstream reads it from here.

`measured_below` and `measured_above` (macros): a peak's measured neighbours on its own curve, the nearest
client counts measured below and above it (NULL where the peak is the curve's first or last point), so a claim
about where the peak lies can say whether the points resolve it (connlab.data.claims, `decidable_by`).

`ratio_low` and `ratio_high` (macros): the ends of a ratio's range under the project's one range convention
(the methodology page's "One range convention"), from both sides' ranges.

`pooled_vs_direct` (a table macro over the points it is given, point_stats): each point through a pooler
beside the same workload straight to the server at the same client count, both throughputs with their
passes' ranges, the pooled one over the direct one with the range the passes allow (ratio_low, ratio_high),
and whether pgbench set either side's rate. The pairs are made once here; a table that sets a pooler against
direct this way (pgbouncer's, pgbouncer-trade's churn) publishes the columns it needs under these names.

`windows_outcome` (a macro, an aggregate): what a group of windows came to, 'ok' where every window was, the
caller's word where every one ran nothing because the pooler's version lacks what the workload needs
(NOT_RUN_ERROR), 'failed' otherwise.
"""

from __future__ import annotations

from connlab.contract.columns import NOT_RUN_ERROR
from connlab.contract.names import CLIENT_NEAR_LIMIT_SHARE, CONNECTING_SHARE_LIMIT, OTHERS_WELL_BELOW_SHARE

# The busiest process decides: a window's rate is the client's (a bound) when pgbench used at least
# CLIENT_NEAR_LIMIT_SHARE of its cores (its quota where it had one; a quota of 0 is none) while the server and
# the pooler each used less than OTHERS_WELL_BELOW_SHARE of theirs. Where the pooler ran on the server's cores
# in a cgroup of its own, the two took CPU from the same cores, so the server's share counts both; where it
# ran inside the server's cgroup (older runs), the server's figure already holds the pooler's. A server whose
# CPU is not read (a remote one) shows nothing busy, so the client near its limit decides, as it did before
# the server's CPU was part of the rule. Read from the CPU figures of the row, never from the harness's flag.
CLIENT_BOUND_SQL = f"""(
    client_cpu_cores >= {CLIENT_NEAR_LIMIT_SHARE} * coalesce(nullif(client_cpu_budget, 0), client_cores)
    AND coalesce(
        (server_cpu_cores + CASE WHEN pooler_cpu_budget IS NOT NULL AND pooler_shares_server_cores
                                 THEN coalesce(pooler_cpu_cores, 0) ELSE 0 END)
        < {OTHERS_WELL_BELOW_SHARE} * server_cpu_budget,
        true)
    AND coalesce(
        pooler_cpu_cores < {OTHERS_WELL_BELOW_SHARE} * coalesce(pooler_cpu_budget, server_cpu_budget),
        true)
)"""

# The macros the module's docstring lists, made in each experiment's schema before its views and SQL (and in
# main, for the facts queries).
SHARED_MACROS = f"""
CREATE OR REPLACE MACRO measured_below(points DOUBLE[], peak DOUBLE) AS
    list_max(list_filter(points, lambda x: x < peak));
CREATE OR REPLACE MACRO measured_above(points DOUBLE[], peak DOUBLE) AS
    list_min(list_filter(points, lambda x: x > peak));
-- A ratio's range runs from the smallest numerator over the largest denominator to the largest over the
-- smallest. Each end takes both sides' ranges (numerator's min and max, then the denominator's), so a call
-- names the two ranges and the convention, here only, picks the ends; the ratio itself is the medians'.
CREATE OR REPLACE MACRO ratio_low(num_min, num_max, den_min, den_max) AS num_min / den_max;
CREATE OR REPLACE MACRO ratio_high(num_min, num_max, den_min, den_max) AS num_max / den_min;
-- A pair's workload ids differ only in the target they name (churn-pgbouncer-scram beside churn-direct-scram,
-- pgbouncer beside direct); workload is the direct side's. The points are a parameter: a table macro is bound
-- where it is made, before point_stats is.
CREATE OR REPLACE MACRO pooled_vs_direct(points, pooler) AS TABLE
SELECT d.machine, d.workload, d.clients, d.server_cores, d.clients_per_core,
       d.tps_median AS direct_tps, d.tps_min AS direct_tps_min, d.tps_max AS direct_tps_max,
       p.tps_median AS pooled_tps, p.tps_min AS pooled_tps_min, p.tps_max AS pooled_tps_max,
       d.latency_avg_median AS direct_latency_ms, p.latency_avg_median AS pooled_latency_ms,
       p.tps_median / d.tps_median AS pooled_over_direct,
       ratio_low(p.tps_min, p.tps_max, d.tps_min, d.tps_max) AS pooled_over_direct_low,
       ratio_high(p.tps_min, p.tps_max, d.tps_min, d.tps_max) AS pooled_over_direct_high,
       d.server_backends_max AS direct_backends, p.server_backends_max AS pooled_backends,
       p.server_backends_min AS pooled_backends_low, p.pooler_cpu_median AS pooler_cpu,
       -- Whether pgbench, not the path, set either side's rate: the most of its cores it used in a pass.
       d.client_cpu_share_max AS direct_client_cpu, p.client_cpu_share_max AS pooled_client_cpu,
       greatest(d.client_cpu_share_max, p.client_cpu_share_max) AS client_cpu,
       d.windows_client_saturated > 0 AS direct_client_saturated,
       p.windows_client_saturated > 0 AS pooled_client_saturated,
       d.client_budget_cores AS client_cores
FROM query_table(points) d
JOIN query_table(points) p
  ON p.machine = d.machine AND p.clients = d.clients AND replace(p.workload, pooler, 'direct') = d.workload
WHERE d.target = 'direct' AND p.target = pooler;
-- A version that lacks what a workload needs runs none of its windows, and each row says so in its error
-- (NOT_RUN_ERROR): such a group is no failure, and the caller names it in its own words.
CREATE OR REPLACE MACRO windows_outcome(ok, error, not_run) AS
    CASE WHEN count(*) FILTER (WHERE ok) = count(*) THEN 'ok'
         WHEN bool_and(NOT ok AND error LIKE '%{NOT_RUN_ERROR}%') THEN not_run
         ELSE 'failed' END;
"""

# A point's windows: one client count of one workload through one target, on one CPU budget and one version
# of the server and the pooler (point_stats' grouping, with the versions a versions experiment varies).
POINT_COLUMNS = (
    "machine, profile, workload, target, transport, server_cpu_budget, clients, "
    "pooler_version, postgres_version"
)
# The steady-state figures: what a point that was mostly connecting leaves out (its CPU, memory, connection
# and error figures stay, as they are not rates over the window's steady part).
STEADY_STATE_COLUMNS = (
    "tps", "latency_avg_ms", "latency_stddev_ms", "latency_p50_ms", "latency_p95_ms", "latency_p99_ms",
)  # fmt: skip
# A point is steady when the median share of its good windows spent connecting is at most
# CONNECTING_SHARE_LIMIT (a point without a good window has nothing to leave out).
STEADY_SQL = f"""coalesce(
    median(CASE WHEN ok THEN connect_share END) OVER (PARTITION BY {POINT_COLUMNS})
        <= {CONNECTING_SHARE_LIMIT},
    true)"""

BEST_PROFILE_VIEW = f"""
CREATE OR REPLACE TABLE windows AS
WITH best AS (
    SELECT * REPLACE ({CLIENT_BOUND_SQL} AS client_saturated),
           coalesce(initial_connection_ms, 0) / (1000.0 * nullif(duration_s, 0)) AS connect_share
    FROM raw_windows
    QUALIFY CASE profile WHEN 'full' THEN 3 WHEN 'quick' THEN 2 ELSE 1 END
          = max(CASE profile WHEN 'full' THEN 3 WHEN 'quick' THEN 2 ELSE 1 END) OVER (PARTITION BY machine)
), judged AS (
    SELECT *, {STEADY_SQL} AS steady FROM best
)
SELECT * REPLACE ({", ".join(f"CASE WHEN steady THEN {c} END AS {c}" for c in STEADY_STATE_COLUMNS)})
FROM judged
-- One order whatever the window functions' partitions left: sums of floats (a slope, a mean) read the rows
-- in it, so a machine aggregated alone (an incremental build) gives the same last digits as with the rest.
ORDER BY machine, run_id, window_no, pass_no, started_at
"""

# Over the windows pgbench reported a throughput and latency for (the CPU and probe figures: every window).
OK_WINDOWS = " FILTER (WHERE ok)"


def _median_and_range(value: str, name: str, where: str = "") -> str:
    """A figure over a point's windows: its median and its range, from the slowest pass to the fastest (the
    project's one range convention), as the columns <name>_median, <name>_min and <name>_max."""
    return ",\n    ".join(f"{stat}({value}){where} AS {name}_{stat}" for stat in ("median", "min", "max"))


POINT_STATS_VIEW = f"""
CREATE OR REPLACE VIEW point_stats AS
SELECT
    machine, profile, workload, target, transport, server_cpu_budget AS server_cores, clients,
    clients / server_cpu_budget AS clients_per_core,
    any_value(jobs) AS jobs,
    coalesce(any_value(client_cpu_budget), any_value(client_cores)) AS client_budget_cores,
    any_value(pool_size) AS pool_size,
    any_value(pool_size) / server_cpu_budget AS pool_per_core,
    count(*) AS windows,
    count(*) FILTER (WHERE ok) AS windows_ok,
    count(*) FILTER (WHERE client_saturated) AS windows_client_saturated,
    -- Whether the point was steady (its throughput and latency figures are NULL otherwise), and the share of
    -- its good windows spent connecting, for the page that says why a point has no figure.
    bool_and(steady) AS steady,
    median(connect_share) FILTER (WHERE ok) AS connect_share_median,
    max(connect_share) FILTER (WHERE ok) AS connect_share_max,
    CASE WHEN NOT bool_and(steady) THEN
        'at ' || clients || ' clients (' || workload || '), connecting took '
        -- rounded to a millionth first: a median a last bit either side of a half rounds the same way
        || round(round(100 * median(connect_share) FILTER (WHERE ok), 6))::INTEGER
        || '% of the window (a steady state needs {CONNECTING_SHARE_LIMIT:.0%} at most)'
    END AS unsteady_reason,
    -- The most pgbench used of its own cores (or quota) in any pass: a claim on the point says it where
    -- the load generator, not the server, set the figure.
    max(client_cpu_cores / nullif(coalesce(client_cpu_budget, client_cores), 0)) AS client_cpu_share_max,
    {_median_and_range("tps", "tps", OK_WINDOWS)},
    (max(tps) FILTER (WHERE ok) - min(tps) FILTER (WHERE ok)) / median(tps) FILTER (WHERE ok) AS spread,
    {_median_and_range("1000.0 * clients / tps", "ms_per_tx", OK_WINDOWS)},
    {_median_and_range("latency_avg_ms", "latency_avg", OK_WINDOWS)},
    median(latency_p50_ms) FILTER (WHERE ok) AS latency_p50_median,
    {_median_and_range("latency_p95_ms", "latency_p95", OK_WINDOWS)},
    median(latency_p99_ms) FILTER (WHERE ok) AS latency_p99_median,
    median(latency_stddev_ms) FILTER (WHERE ok) AS latency_stddev_median,
    {_median_and_range("avg_connection_ms", "connection_ms", OK_WINDOWS)},
    median(server_cpu_cores) AS server_cpu_median,
    median(client_cpu_cores) AS client_cpu_median,
    {_median_and_range("pooler_cpu_cores", "pooler_cpu")},
    -- The pooler's own budget where its run had a cgroup of its own; a pooler CPU figure without one was
    -- read while the pooler ran inside the server's cgroup, whose CPU then counted the pooler's too.
    max(pooler_cpu_budget) AS pooler_cpu_budget,
    bool_or(coalesce(pooler_shares_server_cores, pooler_cpu_cores IS NOT NULL)) AS pooler_shares_server_cores,
    bool_or(pooler_cpu_cores IS NOT NULL AND pooler_cpu_budget IS NULL) AS pooler_in_server_cgroup,
    max(steal_pct) AS steal_pct_max,
    max(cpu_pressure_pct) AS cpu_pressure_pct_max,
    sum(checkpoints) AS checkpoints,
    sum(autovacuums) AS autovacuums,
    max(server_backends_max) AS server_backends_max,
    min(server_backends_max) AS server_backends_min,
    sum(wait_samples) FILTER (WHERE ok) AS polls,
    {_median_and_range("pool_cl_waiting_avg", "cl_waiting_avg")},
    max(pool_cl_waiting_max) AS cl_waiting_max,
    median(pool_maxwait_ms_max) AS maxwait_ms_median,
    max(pool_maxwait_ms_max) AS maxwait_ms_max,
    sum(pool_samples) AS pool_samples,
    string_agg(DISTINCT error, '; ') FILTER (WHERE NOT ok) AS errors
FROM windows
GROUP BY machine, profile, workload, target, transport, server_cpu_budget, clients
"""

PEAK_STATS_VIEW = """
CREATE OR REPLACE VIEW peak_stats AS
SELECT
    machine, workload, server_cores,
    arg_max(clients, tps_median) AS peak_clients,
    arg_max(clients_per_core, tps_median) AS peak_clients_per_core,
    max(tps_median) AS peak_tps,
    arg_max(tps_min, tps_median) AS peak_tps_min,
    arg_max(tps_max, tps_median) AS peak_tps_max,
    arg_max(latency_avg_median, tps_median) AS peak_latency_ms,
    arg_max(latency_avg_min, tps_median) AS peak_latency_min_ms,
    arg_max(latency_avg_max, tps_median) AS peak_latency_max_ms,
    arg_max(latency_p95_median, tps_median) AS peak_latency_p95_ms,
    measured_below(list(clients), arg_max(clients, tps_median)) AS peak_clients_below,
    measured_above(list(clients), arg_max(clients, tps_median)) AS peak_clients_above,
    measured_below(list(clients_per_core), arg_max(clients_per_core, tps_median)) AS peak_per_core_below,
    measured_above(list(clients_per_core), arg_max(clients_per_core, tps_median)) AS peak_per_core_above
FROM point_stats
WHERE tps_median IS NOT NULL AND windows_client_saturated = 0
GROUP BY machine, workload, server_cores
"""
