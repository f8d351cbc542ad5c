-- queue-depth: PgBouncer pools below, at and above the optimum; clients waiting for a server connection.
-- Input: the view windows (results/*/queue-depth/*.csv, most thorough profile per machine).

CREATE OR REPLACE TABLE points AS
SELECT
    machine, profile, workload, pool_size, clients, pool_per_core,
    windows, windows_ok, tps_median, tps_min, tps_max, latency_avg_median,
    cl_waiting_avg_median, cl_waiting_avg_min, cl_waiting_avg_max, cl_waiting_max,
    maxwait_ms_median, maxwait_ms_max, pool_samples, server_backends_max,
    server_cpu_median, pooler_cpu_median,
    -- Whether pgbench set the point's rate: the most of its cores it used in a pass.
    windows_client_saturated > 0 AS client_saturated, client_cpu_share_max AS client_cpu,
    client_budget_cores AS client_cores
FROM point_stats;
