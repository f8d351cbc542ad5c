-- client-bound: the same points with pgbench on its whole cores, on half of them (quota), and with two
-- threads per core. Where throughput follows the client's budget, the client is the bottleneck.
-- Input: the view windows (results/*/client-bound/*.csv, most thorough profile per machine).

CREATE OR REPLACE TABLE points AS
SELECT
    machine, profile, workload,
    regexp_replace(workload, '-(half-client|2-threads)$', '') AS base_workload,
    CASE WHEN workload LIKE '%-half-client' THEN 'half the client cores'
         WHEN workload LIKE '%-2-threads' THEN 'two threads per core'
         ELSE 'whole client cores' END AS variant,
    clients, jobs, client_budget_cores, windows, windows_ok, windows_client_saturated,
    tps_median, tps_min, tps_max, client_cpu_median, server_cpu_median
FROM point_stats;

-- Per point of the default set-up (whole client cores): is it client-bound? Either pgbench saturated its
-- cores, or taking half of them away lowered throughput beyond the passes' range.
CREATE OR REPLACE TABLE verdicts AS
SELECT w.machine, w.base_workload, w.clients,
       w.tps_median AS whole_tps, w.tps_min AS whole_tps_min, w.tps_max AS whole_tps_max,
       h.tps_median AS half_tps, h.tps_min AS half_tps_min, h.tps_max AS half_tps_max,
       t.tps_median AS threads_tps, t.tps_min AS threads_tps_min, t.tps_max AS threads_tps_max,
       h.tps_median / w.tps_median AS half_over_whole,
       t.tps_median / w.tps_median AS threads_over_whole,
       w.client_cpu_median AS whole_client_cpu, h.client_cpu_median AS half_client_cpu,
       w.client_budget_cores AS whole_budget, h.client_budget_cores AS half_budget,
       w.windows_client_saturated > 0 AS whole_saturated,
       h.windows_client_saturated > 0 AS half_saturated,
       h.tps_max < w.tps_min AS half_measurably_lower,
       (w.windows_client_saturated > 0) OR (h.tps_max < w.tps_min AND h.windows_client_saturated > 0
            AND w.client_cpu_median >= h.client_budget_cores) AS whole_client_bound
FROM points w
LEFT JOIN points h ON h.machine = w.machine AND h.base_workload = w.base_workload AND h.clients = w.clients
    AND h.variant = 'half the client cores'
LEFT JOIN points t ON t.machine = w.machine AND t.base_workload = w.base_workload AND t.clients = w.clients
    AND t.variant = 'two threads per core'
WHERE w.variant = 'whole client cores'
ORDER BY w.machine, w.base_workload, w.clients;
