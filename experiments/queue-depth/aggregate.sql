-- queue-depth: PgBouncer pools below, at and above the optimum; clients waiting for a server connection.
-- Input: the view windows (results/*/queue-depth/*.csv, most thorough profile per machine).

CREATE OR REPLACE TABLE points AS
SELECT
    machine, profile, workload, pool_size, clients, pool_per_core,
    windows, windows_ok, tps_median, tps_min, tps_max, latency_avg_median,
    cl_waiting_avg_median, cl_waiting_avg_min, cl_waiting_avg_max, cl_waiting_max,
    maxwait_ms_median, maxwait_ms_max, pool_samples, server_backends_max,
    server_cpu_median, pooler_cpu_median
FROM point_stats;
