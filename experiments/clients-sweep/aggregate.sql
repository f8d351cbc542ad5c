-- clients-sweep: raw windows -> one row per (machine, workload, clients) with medians and ranges,
-- each machine's peak, and what running past the peak costs.
-- Input: the view windows: the rows of results/*/clients-sweep/*.csv, typed, in the most thorough
-- profile each machine has.

-- A window counts only when pgbench exited 0 with no failed transaction (column ok).
CREATE OR REPLACE TABLE points AS
SELECT
    machine, profile, workload, clients, server_cores, clients_per_core,
    windows, windows_ok, windows_client_saturated, tps_median, tps_min, tps_max,
    latency_avg_median, latency_avg_min, latency_avg_max, latency_p50_median,
    latency_p95_median, latency_p95_min, latency_p95_max, latency_p99_median, latency_stddev_median,
    server_cpu_median, client_cpu_median, steal_pct_max, cpu_pressure_pct_max, checkpoints, autovacuums,
    errors, client_cpu_share_max, client_budget_cores, steady, connect_share_median, unsteady_reason
FROM point_stats;

-- The peak: the highest median among points where pgbench never saturated its own cores (a
-- client-bound point measures the client, not the server).
CREATE OR REPLACE TABLE peaks AS
SELECT * FROM peak_stats;

-- Every point relative to its machine's peak: the price of oversubscription, each ratio with the range
-- its passes allow (ratio_low, ratio_high: the point's slowest pass over the peak's fastest, to its fastest
-- over the peak's slowest).
CREATE OR REPLACE TABLE relative_to_peak AS
SELECT
    p.machine, p.workload, p.clients, p.clients_per_core,
    p.clients / k.peak_clients                          AS clients_over_peak,
    p.tps_median / k.peak_tps                           AS tps_share,
    ratio_low(p.tps_min, p.tps_max, k.peak_tps_min, k.peak_tps_max) AS tps_share_min,
    ratio_high(p.tps_min, p.tps_max, k.peak_tps_min, k.peak_tps_max) AS tps_share_max,
    p.latency_avg_median / k.peak_latency_ms            AS latency_factor,
    ratio_low(p.latency_avg_min, p.latency_avg_max, k.peak_latency_min_ms, k.peak_latency_max_ms)
                                                        AS latency_factor_min,
    ratio_high(p.latency_avg_min, p.latency_avg_max, k.peak_latency_min_ms, k.peak_latency_max_ms)
                                                        AS latency_factor_max,
    p.latency_p95_median / k.peak_latency_p95_ms        AS latency_p95_factor,
    -- Whether pgbench set the point's rate (the peak never is: peak_stats leaves such points out).
    p.windows_client_saturated > 0                      AS client_saturated,
    p.client_cpu_share_max                              AS client_cpu,
    p.client_budget_cores                               AS client_cores
FROM points p
JOIN peaks k USING (machine, workload)
WHERE p.tps_median IS NOT NULL;

-- The band of client counts that stay within 10% of the peak.
CREATE OR REPLACE TABLE near_peak AS
SELECT machine, workload,
       min(clients) AS near_peak_min_clients, max(clients) AS near_peak_max_clients,
       min(clients_per_core) AS near_peak_min_per_core, max(clients_per_core) AS near_peak_max_per_core
FROM relative_to_peak
WHERE tps_share >= 0.9
GROUP BY machine, workload;

-- Published reference curves (results/published-*/published.csv), kept apart from measured medians.
CREATE OR REPLACE TABLE published_points AS
SELECT
    p.machine, p.workload, p.clients,
    p.clients / m.server_cores                                  AS clients_per_core,
    max(p.value) FILTER (WHERE p.metric = 'tps')                AS tps,
    max(p.value) FILTER (WHERE p.metric = 'latency_avg_ms')     AS latency_avg_ms
FROM main.published p
JOIN main.machines m ON m.id = p.machine
WHERE p.experiment = 'clients-sweep' AND p.clients IS NOT NULL AND p.metric IN ('tps', 'latency_avg_ms')
GROUP BY p.machine, p.workload, p.clients, m.server_cores;

-- One curve per machine and workload, measured (medians of non-client-bound points) or published.
CREATE OR REPLACE TABLE curves AS
SELECT machine, false AS published, workload, clients, clients_per_core,
       tps_median AS tps, tps_min, tps_max, latency_avg_median AS latency_avg_ms
FROM points
WHERE tps_median IS NOT NULL AND windows_client_saturated = 0
UNION ALL
SELECT machine, true, workload, clients, clients_per_core, tps, NULL, NULL, latency_avg_ms
FROM published_points
WHERE tps IS NOT NULL;

-- Each curve's peak with its measured neighbours, the nearest client counts of the same curve below and
-- above it (NULL where the peak is the curve's first or last point): the true peak lies between them, so a
-- claim about where it lies is judged only where they resolve it (connlab.data.claims).
CREATE OR REPLACE TABLE curve_peaks AS
SELECT machine, any_value(published) AS published, workload,
       arg_max(clients, tps) AS peak_clients, arg_max(clients_per_core, tps) AS peak_clients_per_core,
       max(tps) AS peak_tps, arg_max(latency_avg_ms, tps) AS peak_latency_ms,
       max(clients) AS max_clients, count(*) AS points,
       measured_below(list(clients), arg_max(clients, tps)) AS peak_clients_below,
       measured_above(list(clients), arg_max(clients, tps)) AS peak_clients_above,
       measured_below(list(clients_per_core), arg_max(clients_per_core, tps)) AS peak_per_core_below,
       measured_above(list(clients_per_core), arg_max(clients_per_core, tps)) AS peak_per_core_above
FROM curves
GROUP BY machine, workload;

-- Every curve as a share of its own peak, against clients per server core: machines of any size on
-- one chart.
CREATE OR REPLACE TABLE normalised AS
SELECT c.machine, c.published, c.workload, c.clients, c.clients_per_core,
       c.tps / k.peak_tps AS tps_share, c.tps_min / k.peak_tps AS tps_share_min,
       c.tps_max / k.peak_tps AS tps_share_max
FROM curves c JOIN curve_peaks k USING (machine, workload);

-- The last point of each curve against its peak: what the furthest oversubscription measured costs.
CREATE OR REPLACE TABLE far_past_peak AS
SELECT c.machine, c.published, c.workload, c.clients, c.clients_per_core,
       c.clients / k.peak_clients AS clients_over_peak,
       c.tps / k.peak_tps AS tps_share, c.latency_avg_ms / k.peak_latency_ms AS latency_factor
FROM curves c JOIN curve_peaks k USING (machine, workload)
WHERE c.clients = k.max_clients AND k.max_clients > k.peak_clients;

-- Each pass's own peak, over the same eligible points as the medians' peak: the range of the passes for
-- where the peak sits (a claim about the peak is judged on the medians and on every pass).
CREATE OR REPLACE TABLE pass_peaks AS
SELECT w.machine, w.workload, w.pass_no,
       arg_max(w.clients, w.tps) AS peak_clients,
       arg_max(w.clients / w.server_cpu_budget, w.tps) AS peak_clients_per_core
FROM windows w
JOIN points p ON p.machine = w.machine AND p.workload = w.workload AND p.clients = w.clients
WHERE w.ok AND p.windows_client_saturated = 0
GROUP BY w.machine, w.workload, w.pass_no;

-- Every curve's peak with the range of its passes' peaks and its measured neighbours; a published curve has
-- one figure, no range.
CREATE OR REPLACE TABLE peak_ranges AS
SELECT k.machine, k.published, k.workload, coalesce(mk.server_cores, m.server_cores) AS server_cores, k.points,
       k.peak_clients, k.peak_clients_per_core,
       coalesce(min(pp.peak_clients_per_core), any_value(k.peak_clients_per_core)) AS peak_per_core_low,
       coalesce(max(pp.peak_clients_per_core), any_value(k.peak_clients_per_core)) AS peak_per_core_high,
       coalesce(min(pp.peak_clients), any_value(k.peak_clients)) AS peak_clients_low,
       coalesce(max(pp.peak_clients), any_value(k.peak_clients)) AS peak_clients_high,
       k.peak_clients_below, k.peak_clients_above, k.peak_per_core_below, k.peak_per_core_above
FROM curve_peaks k
JOIN main.machines m ON m.id = k.machine
LEFT JOIN peaks mk ON mk.machine = k.machine AND mk.workload = k.workload
LEFT JOIN pass_peaks pp ON pp.machine = k.machine AND pp.workload = k.workload
GROUP BY k.machine, k.published, k.workload, mk.server_cores, m.server_cores, k.points, k.peak_clients, k.peak_clients_per_core,
         k.peak_clients_below, k.peak_clients_above, k.peak_per_core_below, k.peak_per_core_above;

-- Every point past the peak with its share of the peak and its latency multiple, each with the range of
-- the passes (against the peak's own passes, as relative_to_peak). A published curve has no range; where
-- its article printed the headline figure itself (share of the peak, latency at the peak), that figure is
-- used.
CREATE OR REPLACE TABLE oversubscription AS
SELECT r.machine, false AS published, r.workload, r.clients, r.clients_per_core,
       r.tps_share, r.tps_share_min, r.tps_share_max,
       r.latency_factor, r.latency_factor_min, r.latency_factor_max,
       r.client_saturated, r.client_cpu, r.client_cores
FROM relative_to_peak r JOIN peaks k USING (machine, workload)
WHERE r.clients > k.peak_clients
UNION ALL
SELECT c.machine, true, c.workload, c.clients, c.clients_per_core,
       coalesce(s.value, c.tps / k.peak_tps), NULL, NULL,
       coalesce(l.value / a.value, c.latency_avg_ms / k.peak_latency_ms), NULL, NULL, NULL, NULL, NULL
FROM curves c
JOIN curve_peaks k USING (machine, workload)
LEFT JOIN main.published s ON s.machine = c.machine AND s.workload = c.workload AND s.clients = c.clients
     AND s.experiment = 'clients-sweep' AND s.metric = 'tps_share_of_peak'
LEFT JOIN main.published l ON l.machine = c.machine AND l.workload = c.workload AND l.clients = c.clients
     AND l.experiment = 'clients-sweep' AND l.metric = 'latency_avg_ms_far'
LEFT JOIN main.published a ON a.machine = c.machine AND a.workload = c.workload
     AND a.experiment = 'clients-sweep' AND a.metric = 'latency_avg_ms_at_peak'
WHERE c.published AND c.clients > k.peak_clients;

-- Little's law per point: measured mean latency ÷ (clients ÷ throughput), per window. pgbench's -T window
-- includes the time its clients take to connect, and throughput and latency count only the transactions
-- after that; while hundreds of clients are still connecting, fewer than `clients` are in flight, and the
-- ratio falls below 1 by about the share of the window spent connecting (on one 4 s quick window at 400
-- clients: 1.8 s connecting, ratio 0.72). Only points in a steady state (the windows' rule,
-- connlab.data.views: connecting took at most a tenth of the window) have a throughput; the others are
-- counted, and named on the page.
CREATE OR REPLACE TABLE littles_law AS
WITH w AS (
    SELECT machine, profile, workload, clients, duration_s, connect_share,
           latency_avg_ms * tps / (1000.0 * clients) AS ratio
    FROM windows WHERE ok
)
SELECT machine, profile, workload, clients, any_value(duration_s) AS duration_s,
       count(*) AS windows,
       count(ratio) AS steady_windows,
       median(ratio) AS ratio,
       min(ratio) AS ratio_min,
       max(ratio) AS ratio_max,
       max(connect_share) AS connect_share_max
FROM w
GROUP BY machine, profile, workload, clients;

-- The folk formula (cores × 2) + effective spindles against every peak. The data sits in memory, yet the
-- formula is taken as the seed took it: its 9 for 4 cores counts one spindle.
CREATE OR REPLACE TABLE folk_formula AS
SELECT machine, published, workload, server_cores, points,
       server_cores * 2 + 1 AS formula_connections,
       peak_clients, peak_clients_low, peak_clients_high, peak_clients_below, peak_clients_above,
       peak_clients / (server_cores * 2 + 1) AS measured_over_formula,
       peak_clients_low / (server_cores * 2 + 1) AS measured_over_formula_low,
       peak_clients_high / (server_cores * 2 + 1) AS measured_over_formula_high
FROM peak_ranges;
