-- core-budget: the same sweep at several server CPU budgets, interleaved; where each budget peaks.
-- Input: the view windows (results/*/core-budget/*.csv, most thorough profile per machine);
-- server_cpu_budget is each window's budget.

CREATE OR REPLACE TABLE points AS
SELECT
    machine, profile, workload, server_cores AS budget, clients, clients_per_core,
    windows, windows_ok, windows_client_saturated, tps_median, tps_min, tps_max,
    latency_avg_median, server_cpu_median, client_cpu_median
FROM point_stats;

-- Each budget's peak, among points where pgbench never saturated its cores, with its measured neighbours
-- per core (NULL where the peak is the budget's first or last point).
CREATE OR REPLACE TABLE peaks AS
SELECT machine, workload, server_cores AS budget, peak_clients, peak_clients_per_core, peak_tps, peak_tps_min,
       peak_tps_max, peak_per_core_below, peak_per_core_above
FROM peak_stats;

-- Smallest against largest budget: does the peak keep its multiple of the cores?
CREATE OR REPLACE TABLE scaling AS
SELECT s.machine, s.workload,
       s.budget AS small_budget, l.budget AS large_budget,
       s.peak_clients AS small_peak_clients, l.peak_clients AS large_peak_clients,
       s.peak_clients_per_core AS small_peak_per_core, l.peak_clients_per_core AS large_peak_per_core,
       l.peak_clients_per_core / s.peak_clients_per_core AS per_core_ratio,
       l.peak_tps / s.peak_tps AS throughput_ratio,
       s.peak_per_core_below AS small_peak_per_core_below, s.peak_per_core_above AS small_peak_per_core_above,
       l.peak_per_core_below AS large_peak_per_core_below, l.peak_per_core_above AS large_peak_per_core_above
FROM peaks s JOIN peaks l USING (machine, workload)
WHERE s.budget = (SELECT min(budget) FROM peaks p WHERE p.machine = s.machine AND p.workload = s.workload)
  AND l.budget = (SELECT max(budget) FROM peaks p WHERE p.machine = l.machine AND p.workload = l.workload)
  AND s.budget < l.budget;

-- Each pass's own peak per budget, and the range of the per-core ratio the passes allow (a claim about
-- the peak's multiple is judged on the medians and on every pass).
CREATE OR REPLACE TABLE pass_peaks AS
SELECT w.machine, w.workload, w.server_cpu_budget AS budget, w.pass_no,
       arg_max(w.clients / w.server_cpu_budget, w.tps) AS peak_clients_per_core
FROM windows w
JOIN points p ON p.machine = w.machine AND p.workload = w.workload AND p.budget = w.server_cpu_budget
     AND p.clients = w.clients
WHERE w.ok AND p.windows_client_saturated = 0
GROUP BY ALL;

CREATE OR REPLACE TABLE scaling_ranges AS
WITH pass_range AS (
    SELECT machine, workload, budget, min(peak_clients_per_core) AS low, max(peak_clients_per_core) AS high
    FROM pass_peaks
    GROUP BY machine, workload, budget
)
SELECT s.machine, s.workload, s.small_budget, s.large_budget, s.per_core_ratio,
       s.small_peak_per_core, s.small_peak_per_core_below, s.small_peak_per_core_above,
       s.large_peak_per_core, s.large_peak_per_core_below, s.large_peak_per_core_above,
       ratio_low(l.low, l.high, m.low, m.high) AS per_core_ratio_low,
       ratio_high(l.low, l.high, m.low, m.high) AS per_core_ratio_high
FROM scaling s
LEFT JOIN pass_range l ON l.machine = s.machine AND l.workload = s.workload AND l.budget = s.large_budget
LEFT JOIN pass_range m ON m.machine = s.machine AND m.workload = s.workload AND m.budget = s.small_budget;
