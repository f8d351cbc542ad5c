-- pgbouncer-processes: one PgBouncer process against two on one port (so_reuseport), with direct beside.
-- Input: the view windows (results/*/pgbouncer-processes/*.csv, most thorough profile per machine).

CREATE OR REPLACE TABLE points AS
SELECT
    machine, profile, workload, target, clients, server_cores, clients_per_core, pool_size,
    windows, windows_ok, windows_client_saturated, tps_median, tps_min, tps_max, latency_avg_median,
    server_cpu_median, client_cpu_median, pooler_cpu_median, server_backends_max, errors
FROM point_stats;

-- Two processes over one, with the range the passes allow, and each side's pooler CPU (cores; the pair's
-- is both processes summed) and the direct throughput at the same crowd.
CREATE OR REPLACE TABLE processes AS
SELECT one.machine, one.clients, one.server_cores, one.clients_per_core,
       d.tps_median AS direct_tps,
       one.tps_median AS one_tps, one.tps_min AS one_tps_min, one.tps_max AS one_tps_max,
       two.tps_median AS two_tps, two.tps_min AS two_tps_min, two.tps_max AS two_tps_max,
       two.tps_median / one.tps_median AS two_over_one,
       ratio_low(two.tps_min, two.tps_max, one.tps_min, one.tps_max) AS two_over_one_low,
       ratio_high(two.tps_min, two.tps_max, one.tps_min, one.tps_max) AS two_over_one_high,
       one.pooler_cpu_median AS one_pooler_cpu, two.pooler_cpu_median AS two_pooler_cpu,
       one.server_backends_max AS one_backends, two.server_backends_max AS two_backends,
       one.server_cpu_median AS one_server_cpu,
       -- The server and the one pooler together, counted once (before the pooler had a cgroup of its own
       -- the server's cgroup counted both), and the pooler's own budget where it had one.
       one.server_cpu_median + CASE WHEN one.pooler_in_server_cgroup THEN 0
                                    ELSE coalesce(one.pooler_cpu_median, 0) END AS one_busy_cpu,
       one.pooler_cpu_budget AS one_pooler_cpu_budget, one.pooler_shares_server_cores AS one_pooler_shares_server_cores,
       one.pooler_in_server_cgroup AS one_pooler_in_server_cgroup,
       greatest(one.client_cpu_share_max, two.client_cpu_share_max) AS client_cpu,
       one.windows_client_saturated + two.windows_client_saturated > 0 AS client_saturated,
       one.client_budget_cores AS client_cores
FROM point_stats one
JOIN point_stats two ON two.machine = one.machine AND two.clients = one.clients
LEFT JOIN point_stats d ON d.machine = one.machine AND d.clients = one.clients AND d.target = 'direct'
WHERE one.target = 'pgbouncer' AND two.target = 'pgbouncer-pair';
