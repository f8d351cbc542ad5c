-- pgbouncer: direct against pooled, persistent and churning clients.
-- Input: the view windows (results/*/pgbouncer/*.csv, most thorough profile per machine).

CREATE OR REPLACE TABLE points AS
SELECT
    machine, profile, workload, clients,
    any_value(server_cpu_budget) AS server_cores,
    clients / any_value(server_cpu_budget) AS clients_per_core,
    count(*) AS windows, count(*) FILTER (WHERE ok) AS windows_ok,
    count(*) FILTER (WHERE client_saturated) AS windows_client_saturated,
    median(tps) FILTER (WHERE ok) AS tps_median,
    min(tps) FILTER (WHERE ok) AS tps_min,
    max(tps) FILTER (WHERE ok) AS tps_max,
    median(1000.0 * clients / tps) FILTER (WHERE ok) AS ms_per_tx_median,
    median(latency_avg_ms) FILTER (WHERE ok) AS latency_avg_median,
    median(server_cpu_cores) AS server_cpu_median,
    median(client_cpu_cores) AS client_cpu_median,
    median(pooler_cpu_cores) AS pooler_cpu_median,
    max(server_backends_max) AS server_backends_max,
    min(server_backends_max) AS server_backends_min,
    string_agg(DISTINCT error, '; ') FILTER (WHERE NOT ok) AS errors
FROM windows
GROUP BY machine, profile, workload, clients;

-- Pooled against direct at each client count, persistent clients.
CREATE OR REPLACE TABLE persistent AS
SELECT d.machine, d.clients, d.server_cores, d.clients_per_core,
       d.tps_median AS direct_tps, d.tps_min AS direct_tps_min, d.tps_max AS direct_tps_max,
       p.tps_median AS pooled_tps, p.tps_min AS pooled_tps_min, p.tps_max AS pooled_tps_max,
       p.tps_median / d.tps_median AS pooled_over_direct,
       -- The range the passes allow: slowest pooled against fastest direct, and the reverse.
       p.tps_min / d.tps_max AS pooled_over_direct_low,
       p.tps_max / d.tps_min AS pooled_over_direct_high,
       d.server_backends_max AS direct_backends, p.server_backends_max AS pooled_backends,
       p.server_backends_min AS pooled_backends_low,
       p.pooler_cpu_median AS pooler_cpu
FROM points d JOIN points p ON p.machine = d.machine AND p.clients = d.clients
WHERE d.workload = 'direct' AND p.workload = 'pgbouncer';

-- Connection churn: how many times the direct throughput the pooler delivers, per authentication.
CREATE OR REPLACE TABLE churn AS
SELECT d.machine, d.clients, d.clients_per_core, replace(d.workload, 'churn-direct-', '') AS auth,
       d.tps_median AS direct_tps, p.tps_median AS pooled_tps, p.tps_median / d.tps_median AS speedup,
       p.tps_min / d.tps_max AS speedup_low, p.tps_max / d.tps_min AS speedup_high,
       p.pooler_cpu_median AS pooler_cpu
FROM points d JOIN points p
  ON p.machine = d.machine AND p.clients = d.clients
 AND p.workload = replace(d.workload, 'churn-direct-', 'churn-pgbouncer-')
WHERE d.workload LIKE 'churn-direct-%';
