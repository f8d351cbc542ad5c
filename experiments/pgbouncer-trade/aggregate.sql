-- pgbouncer-trade (seed 004): the seed's three tables per machine, each figure with the range its passes
-- allow, and PgBouncer's own CPU beside the server's.
-- Input: the view windows (results/*/pgbouncer-trade/*.csv, most thorough profile per machine).

CREATE OR REPLACE TABLE points AS
SELECT
    machine, profile, workload, target, clients, server_cores, clients_per_core, pool_size,
    windows, windows_ok, windows_client_saturated, tps_median, tps_min, tps_max,
    latency_avg_median, latency_avg_min, latency_avg_max, connection_ms_median,
    server_cpu_median, client_cpu_median, pooler_cpu_median,
    server_backends_max, server_backends_min, errors
FROM point_stats;

-- Table 1: a new connection per transaction, direct against through PgBouncer at the same client count (as
-- the shared pooled_vs_direct pairs them). The speed-up's range: slowest pooled over fastest direct, and
-- fastest pooled over slowest direct.
CREATE OR REPLACE TABLE churn AS
SELECT machine, clients, server_cores, clients_per_core, direct_tps, direct_tps_min, direct_tps_max,
       pooled_tps, pooled_tps_min, pooled_tps_max, direct_latency_ms, pooled_latency_ms,
       pooled_over_direct AS speedup, pooled_over_direct_low AS speedup_low,
       pooled_over_direct_high AS speedup_high, pooler_cpu,
       -- Whether pgbench, not the path, set either side's rate: the most of its cores it used in a pass.
       -- A client-bound pooled side makes the speed-up a lower bound (the pooler could have gone faster).
       direct_client_cpu, pooled_client_cpu, direct_client_saturated, pooled_client_saturated, client_cores
FROM pooled_vs_direct(point_stats, 'pgbouncer')
WHERE workload = 'churn-direct';

-- Table 2: persistent clients straight to the server, select-only and tpcb-like (the builtin is the
-- workload id's remainder after 'direct-').
CREATE OR REPLACE TABLE direct_curve AS
SELECT machine, regexp_replace(workload, '^direct-', '') AS builtin, clients, server_cores, clients_per_core,
       tps_median, tps_min, tps_max, latency_avg_median, latency_avg_min, latency_avg_max,
       server_cpu_median, server_backends_max,
       tps_median / max(tps_median) OVER (PARTITION BY machine, workload) AS share_of_peak,
       client_cpu_share_max AS client_cpu, windows_client_saturated > 0 AS client_saturated,
       client_budget_cores AS client_cores
FROM point_stats
WHERE target = 'direct' AND workload IN ('direct-select-only', 'direct-tpcb-like');

-- Each direct curve's peak per core with its measured neighbours, the nearest points of the same curve below
-- and above it (NULL where the peak is the curve's first or last point): where the true peak may lie.
CREATE OR REPLACE TABLE direct_peaks AS
SELECT machine, builtin, arg_max(clients_per_core, tps_median) AS peak_per_core,
       measured_below(list(clients_per_core) FILTER (WHERE tps_median IS NOT NULL),
                      arg_max(clients_per_core, tps_median)) AS peak_per_core_below,
       measured_above(list(clients_per_core) FILTER (WHERE tps_median IS NOT NULL),
                      arg_max(clients_per_core, tps_median)) AS peak_per_core_above
FROM direct_curve
GROUP BY machine, builtin;

-- Table 3: persistent clients through PgBouncer at a fixed crowd, by pool size, against the same crowd
-- direct. Statements through the pooler per second = transactions x statements per transaction: pgbench's
-- select-only sends 1, tpcb-like 7 (BEGIN, three updates, a select, an insert, END), as the seed counts them.
-- Per-backend server CPU: the server's cores spread over the backends it held. Where PgBouncer ran inside
-- the server's cgroup (runs before the pooler had a cgroup of its own), the server's CPU counts the
-- pooler's too: taken out here, else a backend would be charged with the pooler's work (server_cpu keeps
-- the cgroup's figure as read). busy_cpu: the server and the pooler together.
CREATE OR REPLACE TABLE pool_sizes AS
WITH pooled AS (
    SELECT *, regexp_extract(workload, '^pooled-(select-only|tpcb-like)', 1) AS builtin
    FROM point_stats WHERE target = 'pgbouncer' AND workload LIKE 'pooled-%'
),
-- The pooler against one backend, per pass: both were read around the same window, so each pass gives
-- one ratio, and the range is the smallest to the largest of them.
per_pass AS (
    SELECT machine, workload, clients,
           pooler_cpu_cores / nullif((server_cpu_cores - CASE WHEN pooler_cpu_budget IS NULL
                                                               THEN pooler_cpu_cores ELSE 0 END)
                                     / nullif(server_backends_max, 0), 0) AS ratio
    FROM windows WHERE target = 'pgbouncer' AND workload LIKE 'pooled-%' AND pooler_cpu_cores IS NOT NULL
),
backend AS (
    SELECT machine, workload, clients, median(ratio) AS pooler_over_backend,
           min(ratio) AS pooler_over_backend_low, max(ratio) AS pooler_over_backend_high
    FROM per_pass GROUP BY machine, workload, clients
)
SELECT p.machine, p.builtin, p.clients, p.server_cores, p.pool_size,
       p.tps_median AS pooled_tps, p.tps_min AS pooled_tps_min, p.tps_max AS pooled_tps_max,
       p.latency_avg_median AS pooled_latency_ms,
       d.tps_median AS direct_tps, d.tps_min AS direct_tps_min, d.tps_max AS direct_tps_max,
       d.latency_avg_median AS direct_latency_ms,
       p.tps_median / d.tps_median AS pooled_over_direct,
       ratio_low(p.tps_min, p.tps_max, d.tps_min, d.tps_max) AS pooled_over_direct_low,
       ratio_high(p.tps_min, p.tps_max, d.tps_min, d.tps_max) AS pooled_over_direct_high,
       p.tps_median * CASE p.builtin WHEN 'tpcb-like' THEN 7 ELSE 1 END AS statements_per_s,
       p.tps_min * CASE p.builtin WHEN 'tpcb-like' THEN 7 ELSE 1 END AS statements_per_s_min,
       p.tps_max * CASE p.builtin WHEN 'tpcb-like' THEN 7 ELSE 1 END AS statements_per_s_max,
       p.pooler_cpu_median AS pooler_cpu, p.pooler_cpu_min, p.pooler_cpu_max,
       p.server_cpu_median AS server_cpu,
       p.server_backends_max AS server_backends,
       (p.server_cpu_median - CASE WHEN p.pooler_in_server_cgroup THEN coalesce(p.pooler_cpu_median, 0) ELSE 0 END)
           / nullif(p.server_backends_max, 0) AS server_cpu_per_backend,
       p.server_cpu_median + CASE WHEN p.pooler_in_server_cgroup THEN 0 ELSE coalesce(p.pooler_cpu_median, 0) END
           AS busy_cpu,
       p.pooler_cpu_budget, p.pooler_shares_server_cores, p.pooler_in_server_cgroup,
       b.pooler_over_backend, b.pooler_over_backend_low, b.pooler_over_backend_high,
       p.client_cpu_share_max AS pooled_client_cpu, d.client_cpu_share_max AS direct_client_cpu,
       p.windows_client_saturated > 0 AS pooled_client_saturated,
       d.windows_client_saturated > 0 AS direct_client_saturated,
       p.client_budget_cores AS client_cores,
       p.unsteady_reason AS pooled_unsteady_reason, d.unsteady_reason AS direct_unsteady_reason
FROM pooled p
LEFT JOIN backend b USING (machine, workload, clients)
LEFT JOIN point_stats d
  ON d.machine = p.machine AND d.clients = p.clients AND d.target = 'direct'
 AND d.workload = 'direct-' || p.builtin;

-- Pool size barely matters: the best and worst pooled throughput among the pool sizes at 200 clients,
-- per builtin, and the best pool's share of direct (the seed's 45% and 47%).
CREATE OR REPLACE TABLE pool_spread AS
SELECT machine, builtin, clients,
       max(pooled_tps) AS best_pooled_tps, min(pooled_tps) AS worst_pooled_tps,
       min(pooled_tps) / max(pooled_tps) AS worst_over_best,
       arg_max(pool_size, pooled_tps) AS best_pool_size,
       arg_max(pooled_over_direct, pooled_tps) AS best_over_direct,
       arg_max(pooled_over_direct_low, pooled_tps) AS best_over_direct_low,
       arg_max(pooled_over_direct_high, pooled_tps) AS best_over_direct_high,
       max(statements_per_s) AS best_statements_per_s,
       max(pooler_cpu) AS pooler_cpu_max
FROM pool_sizes
WHERE clients = 200 AND pooled_tps IS NOT NULL
GROUP BY machine, builtin, clients;

-- The trade by clients per server core, as the article's chart draws it (pgbouncer-trade.facts.sql's
-- trade_curve): through PgBouncer ÷ straight to the server at each client count, for a new connection per
-- transaction (select-only, from churn) and for persistent clients (select-only and tpcb-like, from
-- pool_sizes) at each crowd measured through PgBouncer. Where a crowd ran through several pools (200 clients:
-- 4 to 100), the pool that served it fastest stands for it, as a pool would be tuned (the claims' "best
-- pool"; of equal throughput, the larger), with its size and how many pools were measured. The ratio's range
-- is the passes' (slowest pooled ÷ fastest direct to fastest ÷ slowest); client_saturated: pgbench was at its
-- limit on either side, so the ratio is a bound; the machine's profile says whether it decides (full).
CREATE OR REPLACE TABLE trade_curve AS
WITH profiles AS (
    SELECT machine, any_value(profile) AS profile FROM points GROUP BY machine
), churned AS (
    SELECT c.machine, 'per-transaction' AS connect, 'select-only' AS builtin, c.clients, c.server_cores,
           c.clients_per_core, p.pool_size, 1 AS pools, c.pooled_tps, c.direct_tps,
           c.speedup AS ratio, c.speedup_low AS ratio_low, c.speedup_high AS ratio_high,
           c.pooled_client_saturated OR c.direct_client_saturated AS client_saturated
    FROM churn c
    LEFT JOIN points p ON p.machine = c.machine AND p.clients = c.clients AND p.workload = 'churn-pgbouncer'
), held AS (
    SELECT machine, 'persistent' AS connect, builtin, clients, any_value(server_cores) AS server_cores,
           clients / any_value(server_cores) AS clients_per_core,
           arg_max(pool_size, [pooled_tps, pool_size]) AS pool_size, count(DISTINCT pool_size) AS pools,
           max(pooled_tps) AS pooled_tps, arg_max(direct_tps, [pooled_tps, pool_size]) AS direct_tps,
           arg_max(pooled_over_direct, [pooled_tps, pool_size]) AS ratio,
           arg_max(pooled_over_direct_low, [pooled_tps, pool_size]) AS ratio_low,
           arg_max(pooled_over_direct_high, [pooled_tps, pool_size]) AS ratio_high,
           arg_max(pooled_client_saturated OR direct_client_saturated, [pooled_tps, pool_size])
               AS client_saturated
    FROM pool_sizes
    WHERE pooled_tps IS NOT NULL AND direct_tps IS NOT NULL
    GROUP BY machine, builtin, clients
)
SELECT t.machine, profiles.profile, t.connect, t.builtin, t.clients, t.server_cores, t.clients_per_core,
       t.pool_size, t.pools, t.pooled_tps, t.direct_tps, t.ratio, t.ratio_low, t.ratio_high, t.client_saturated
FROM (SELECT * FROM churned WHERE ratio IS NOT NULL UNION ALL BY NAME SELECT * FROM held) t
JOIN profiles USING (machine);
