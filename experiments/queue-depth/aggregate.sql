-- queue-depth: PgBouncer pools below, at and above the optimum; clients waiting for a server connection.
-- Input: the view windows (results/*/queue-depth/*.csv, most thorough profile per machine).

CREATE OR REPLACE TABLE points AS
SELECT
    machine, profile, workload, any_value(pool_size) AS pool_size, clients,
    any_value(pool_size) / any_value(server_cpu_budget) AS pool_per_core,
    count(*) AS windows, count(*) FILTER (WHERE ok) AS windows_ok,
    median(tps) FILTER (WHERE ok) AS tps_median,
    min(tps) FILTER (WHERE ok) AS tps_min,
    max(tps) FILTER (WHERE ok) AS tps_max,
    median(latency_avg_ms) FILTER (WHERE ok) AS latency_avg_median,
    median(pool_cl_waiting_avg) AS cl_waiting_avg_median,
    min(pool_cl_waiting_avg) AS cl_waiting_avg_min,
    max(pool_cl_waiting_avg) AS cl_waiting_avg_max,
    max(pool_cl_waiting_max) AS cl_waiting_max,
    median(pool_maxwait_ms_max) AS maxwait_ms_median,
    max(pool_maxwait_ms_max) AS maxwait_ms_max,
    sum(pool_samples) AS pool_samples,
    max(server_backends_max) AS server_backends_max,
    median(server_cpu_cores) AS server_cpu_median,
    median(pooler_cpu_cores) AS pooler_cpu_median
FROM windows
GROUP BY machine, profile, workload, clients;
