-- pgbouncer: direct against pooled, persistent and churning clients.
-- Input: the view windows (results/*/pgbouncer/*.csv, most thorough profile per machine).

CREATE OR REPLACE TABLE points AS
SELECT
    machine, profile, workload, clients, server_cores, clients_per_core,
    windows, windows_ok, windows_client_saturated, tps_median, tps_min, tps_max,
    ms_per_tx_median, latency_avg_median, server_cpu_median, client_cpu_median, pooler_cpu_median,
    server_backends_max, server_backends_min, errors
FROM point_stats;

-- Pooled against direct at each client count, persistent clients, as the shared pooled_vs_direct pairs them
-- (connlab.data.views), with the range the passes allow: slowest pooled against fastest direct, and the reverse.
CREATE OR REPLACE TABLE persistent AS
SELECT machine, clients, server_cores, clients_per_core, direct_tps, direct_tps_min, direct_tps_max,
       pooled_tps, pooled_tps_min, pooled_tps_max,
       pooled_over_direct, pooled_over_direct_low, pooled_over_direct_high,
       direct_backends, pooled_backends, pooled_backends_low, pooler_cpu,
       -- Whether pgbench set either side's rate: the most of its cores it used in a pass.
       direct_client_saturated, pooled_client_saturated, client_cpu, client_cores
FROM pooled_vs_direct(point_stats, 'pgbouncer')
WHERE workload NOT LIKE 'churn-%';

-- Connection churn: how many times the direct throughput the pooler delivers, per authentication (the
-- workload id's last word).
CREATE OR REPLACE TABLE churn AS
SELECT machine, clients, clients_per_core, regexp_extract(workload, '[a-z]+$') AS auth,
       direct_tps, pooled_tps, pooled_over_direct AS speedup,
       pooled_over_direct_low AS speedup_low, pooled_over_direct_high AS speedup_high,
       pooler_cpu, direct_client_saturated, pooled_client_saturated, client_cpu, client_cores
FROM pooled_vs_direct(point_stats, 'pgbouncer')
WHERE workload LIKE 'churn-%';
