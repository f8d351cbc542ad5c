-- pgbouncer: direct against pooled, persistent and churning clients.
-- Input: the view windows (results/*/pgbouncer/*.csv, most thorough profile per machine).

CREATE OR REPLACE TABLE points AS
SELECT
    machine, profile, workload, clients, server_cores, clients_per_core,
    windows, windows_ok, windows_client_saturated, tps_median, tps_min, tps_max,
    ms_per_tx_median, latency_avg_median, server_cpu_median, client_cpu_median, pooler_cpu_median,
    server_backends_max, server_backends_min, errors
FROM point_stats;

-- Pooled against direct at each client count, persistent clients: the pairs are told apart by their target
-- column (direct, or the pooler the window went through), not by their workload ids.
CREATE OR REPLACE TABLE persistent AS
SELECT d.machine, d.clients, d.server_cores, d.clients_per_core,
       d.tps_median AS direct_tps, d.tps_min AS direct_tps_min, d.tps_max AS direct_tps_max,
       p.tps_median AS pooled_tps, p.tps_min AS pooled_tps_min, p.tps_max AS pooled_tps_max,
       p.tps_median / d.tps_median AS pooled_over_direct,
       -- The range the passes allow: slowest pooled against fastest direct, and the reverse.
       ratio_low(p.tps_min, p.tps_max, d.tps_min, d.tps_max) AS pooled_over_direct_low,
       ratio_high(p.tps_min, p.tps_max, d.tps_min, d.tps_max) AS pooled_over_direct_high,
       d.server_backends_max AS direct_backends, p.server_backends_max AS pooled_backends,
       p.server_backends_min AS pooled_backends_low,
       p.pooler_cpu_median AS pooler_cpu,
       -- Whether pgbench set either side's rate: the most of its cores it used in a pass.
       d.windows_client_saturated > 0 AS direct_client_saturated,
       p.windows_client_saturated > 0 AS pooled_client_saturated,
       greatest(d.client_cpu_share_max, p.client_cpu_share_max) AS client_cpu,
       d.client_budget_cores AS client_cores
FROM point_stats d JOIN point_stats p ON p.machine = d.machine AND p.clients = d.clients
WHERE d.target = 'direct' AND p.target = 'pgbouncer'
  AND d.workload NOT LIKE 'churn-%' AND p.workload NOT LIKE 'churn-%';

-- Connection churn: how many times the direct throughput the pooler delivers, per authentication (the
-- workload id's last word).
CREATE OR REPLACE TABLE churn AS
SELECT d.machine, d.clients, d.clients_per_core, regexp_extract(d.workload, '[a-z]+$') AS auth,
       d.tps_median AS direct_tps, p.tps_median AS pooled_tps, p.tps_median / d.tps_median AS speedup,
       ratio_low(p.tps_min, p.tps_max, d.tps_min, d.tps_max) AS speedup_low,
       ratio_high(p.tps_min, p.tps_max, d.tps_min, d.tps_max) AS speedup_high,
       p.pooler_cpu_median AS pooler_cpu,
       d.windows_client_saturated > 0 AS direct_client_saturated,
       p.windows_client_saturated > 0 AS pooled_client_saturated,
       greatest(d.client_cpu_share_max, p.client_cpu_share_max) AS client_cpu,
       d.client_budget_cores AS client_cores
FROM point_stats d JOIN point_stats p
  ON p.machine = d.machine AND p.clients = d.clients
 AND regexp_extract(p.workload, '[a-z]+$') = regexp_extract(d.workload, '[a-z]+$')
WHERE d.target = 'direct' AND p.target = 'pgbouncer'
  AND d.workload LIKE 'churn-%' AND p.workload LIKE 'churn-%';
