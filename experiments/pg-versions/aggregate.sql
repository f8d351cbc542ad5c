-- pg-versions: the same workloads on several PostgreSQL majors, measured in turn on one machine.
-- Input: the views point_stats and windows; a workload id carries its major as a suffix (mixed-pg15).

CREATE OR REPLACE MACRO base_workload(id) AS regexp_extract(id, '^(.*)-pg[0-9]+$', 1);
CREATE OR REPLACE MACRO major_of(id) AS CAST(regexp_extract(id, '-pg([0-9]+)$', 1) AS INTEGER);

CREATE OR REPLACE TABLE points AS
SELECT machine, profile, base_workload(workload) AS workload, major_of(workload) AS major,
       clients, server_cores, clients_per_core, windows, windows_ok, windows_client_saturated,
       tps_median, tps_min, tps_max, latency_avg_median, latency_avg_min, latency_avg_max,
       connection_ms_median, connection_ms_min, connection_ms_max,
       server_cpu_median, client_cpu_median, cpu_pressure_pct_max, errors,
       client_cpu_share_max, client_budget_cores
FROM point_stats;

-- The exact server each major was (e.g. 15.18 and 18.6).
CREATE OR REPLACE TABLE versions AS
SELECT machine, major_of(workload) AS major, any_value(postgres_version) AS postgres_version
FROM windows
GROUP BY machine, major_of(workload);

-- Points a peak may sit at: pgbench never saturated its own cores there.
CREATE OR REPLACE TABLE curve_points AS
SELECT * FROM points
WHERE workload IN ('mixed', 'tpcb-like') AND tps_median IS NOT NULL AND windows_client_saturated = 0;

-- Each pass's own peak, over the same points: the range of the passes for where the peak sits.
CREATE OR REPLACE TABLE pass_peaks AS
SELECT w.machine, c.workload, c.major, w.pass_no,
       arg_max(w.clients / w.server_cpu_budget, w.tps) AS peak_per_core
FROM windows w
JOIN curve_points c
  ON c.machine = w.machine AND c.clients = w.clients AND w.workload = c.workload || '-pg' || c.major
WHERE w.ok
GROUP BY w.machine, c.workload, c.major, w.pass_no;

-- The furthest point each curve measured, client-bound or not: the collapse is read there, at the same
-- client count on every version (a client-bound far point is flagged, its figure is then a lower bound).
CREATE OR REPLACE TABLE far_points AS
SELECT machine, workload, major,
       max(clients) AS far_clients,
       arg_max(clients_per_core, clients) AS far_per_core,
       arg_max(tps_median, clients) AS far_tps,
       arg_max(tps_min, clients) AS far_tps_min,
       arg_max(tps_max, clients) AS far_tps_max,
       arg_max(windows_client_saturated, clients) > 0 AS far_client_bound
FROM points
WHERE workload IN ('mixed', 'tpcb-like') AND tps_median IS NOT NULL
GROUP BY machine, workload, major;

-- Each version's peak on the medians, the range of its passes' peaks, and what is left of the peak at the
-- furthest point measured (the collapse past it).
CREATE OR REPLACE TABLE peaks AS
WITH ranked AS (
    SELECT machine, workload, major, count(*) AS points,
           arg_max(clients, tps_median) AS peak_clients,
           arg_max(clients_per_core, tps_median) AS peak_per_core,
           max(tps_median) AS peak_tps,
           arg_max(tps_min, tps_median) AS peak_tps_min,
           arg_max(tps_max, tps_median) AS peak_tps_max,
           -- The peak's measured neighbours on its curve (NULL at the curve's first or last point).
           measured_below(list(clients_per_core), arg_max(clients_per_core, tps_median)) AS peak_per_core_below,
           measured_above(list(clients_per_core), arg_max(clients_per_core, tps_median)) AS peak_per_core_above
    FROM curve_points
    GROUP BY machine, workload, major
),
pass_range AS (
    SELECT machine, workload, major, min(peak_per_core) AS peak_per_core_low,
           max(peak_per_core) AS peak_per_core_high
    FROM pass_peaks
    GROUP BY machine, workload, major
)
SELECT r.*, p.peak_per_core_low, p.peak_per_core_high,
       f.far_clients, f.far_per_core, f.far_tps, f.far_tps_min, f.far_tps_max, f.far_client_bound,
       f.far_tps / r.peak_tps AS far_share,
       ratio_low(f.far_tps_min, f.far_tps_max, r.peak_tps_min, r.peak_tps_max) AS far_share_low,
       ratio_high(f.far_tps_min, f.far_tps_max, r.peak_tps_min, r.peak_tps_max) AS far_share_high
FROM ranked r
JOIN pass_range p USING (machine, workload, major)
JOIN far_points f USING (machine, workload, major);

-- Each seed's own PostgreSQL major, where a machine measured it: that machine's peak on that major, for
-- the articles to set beside the seed's published peak (main.machines holds the seeds' versions).
CREATE OR REPLACE TABLE at_seed_major AS
SELECT m.id AS seed, k.machine, k.workload, v.postgres_version,
       k.peak_per_core, k.peak_per_core_low, k.peak_per_core_high
FROM main.machines m
JOIN peaks k ON k.major = TRY_CAST(split_part(m.postgres_version, '.', 1) AS INTEGER)
JOIN versions v ON v.machine = k.machine AND v.major = k.major
WHERE m.published;

-- The newest major against the oldest on each machine: where the peak sits, how much is left far past
-- it, and the throughput at every point, each with the range its passes allow.
CREATE OR REPLACE TABLE version_pairs AS
WITH bounds AS (
    SELECT machine, min(major) AS old_major, max(major) AS new_major
    FROM points GROUP BY machine HAVING count(DISTINCT major) >= 2
)
SELECT b.machine, o.workload, b.old_major, b.new_major, o.points,
       o.peak_per_core AS old_peak_per_core, n.peak_per_core AS new_peak_per_core,
       o.peak_per_core_low AS old_peak_per_core_low, o.peak_per_core_high AS old_peak_per_core_high,
       n.peak_per_core_low AS new_peak_per_core_low, n.peak_per_core_high AS new_peak_per_core_high,
       o.peak_per_core_below AS old_peak_per_core_below, o.peak_per_core_above AS old_peak_per_core_above,
       n.peak_per_core_below AS new_peak_per_core_below, n.peak_per_core_above AS new_peak_per_core_above,
       n.peak_per_core / o.peak_per_core AS peak_moved,
       ratio_low(n.peak_per_core_low, n.peak_per_core_high, o.peak_per_core_low, o.peak_per_core_high)
           AS peak_moved_low,
       ratio_high(n.peak_per_core_low, n.peak_per_core_high, o.peak_per_core_low, o.peak_per_core_high)
           AS peak_moved_high,
       o.peak_tps AS old_peak_tps, n.peak_tps AS new_peak_tps,
       n.peak_tps / o.peak_tps AS peak_tps_ratio,
       ratio_low(n.peak_tps_min, n.peak_tps_max, o.peak_tps_min, o.peak_tps_max) AS peak_tps_ratio_low,
       ratio_high(n.peak_tps_min, n.peak_tps_max, o.peak_tps_min, o.peak_tps_max) AS peak_tps_ratio_high,
       o.far_per_core, o.far_client_bound OR n.far_client_bound AS far_client_bound,
       o.far_share AS old_far_share, n.far_share AS new_far_share,
       o.far_share_low AS old_far_share_low, o.far_share_high AS old_far_share_high,
       n.far_share_low AS new_far_share_low, n.far_share_high AS new_far_share_high,
       -- Only compared where both curves reach the same far point.
       CASE WHEN o.far_clients = n.far_clients THEN n.far_share - o.far_share END AS far_share_change,
       CASE WHEN o.far_clients = n.far_clients THEN n.far_share_low - o.far_share_high END
           AS far_share_change_low,
       CASE WHEN o.far_clients = n.far_clients THEN n.far_share_high - o.far_share_low END
           AS far_share_change_high
FROM bounds b
JOIN peaks o ON o.machine = b.machine AND o.major = b.old_major
JOIN peaks n ON n.machine = b.machine AND n.major = b.new_major AND n.workload = o.workload;

-- Every point of both curves side by side.
CREATE OR REPLACE TABLE point_pairs AS
SELECT b.machine, o.workload, o.clients, o.clients_per_core, b.old_major, b.new_major,
       o.tps_median AS old_tps, o.tps_min AS old_tps_min, o.tps_max AS old_tps_max,
       n.tps_median AS new_tps, n.tps_min AS new_tps_min, n.tps_max AS new_tps_max,
       n.tps_median / o.tps_median AS new_over_old,
       ratio_low(n.tps_min, n.tps_max, o.tps_min, o.tps_max) AS new_over_old_low,
       ratio_high(n.tps_min, n.tps_max, o.tps_min, o.tps_max) AS new_over_old_high
FROM (SELECT machine, min(major) AS old_major, max(major) AS new_major FROM points GROUP BY machine
      HAVING count(DISTINCT major) >= 2) b
JOIN points o ON o.machine = b.machine AND o.major = b.old_major
JOIN points n ON n.machine = b.machine AND n.major = b.new_major AND n.workload = o.workload
             AND n.clients = o.clients;

-- The cost of a new SCRAM connection per version, against a held one, and the newest against the oldest.
CREATE OR REPLACE TABLE connect_cost AS
SELECT h.machine, h.major, v.postgres_version,
       h.tps_median AS held_tps, h.tps_min AS held_tps_min, h.tps_max AS held_tps_max,
       c.tps_median AS new_tps, c.tps_min AS new_tps_min, c.tps_max AS new_tps_max,
       c.connection_ms_median, c.connection_ms_min, c.connection_ms_max,
       1000.0 / c.tps_median - 1000.0 / h.tps_median AS new_connection_ms_per_tx,
       h.tps_median / c.tps_median AS held_over_new,
       -- Whether pgbench set either rate: the most of its cores it used in a pass.
       h.windows_client_saturated + c.windows_client_saturated > 0 AS client_saturated,
       greatest(h.client_cpu_share_max, c.client_cpu_share_max) AS client_cpu,
       h.client_budget_cores AS client_cores
FROM points h
JOIN points c ON c.machine = h.machine AND c.major = h.major AND c.clients = h.clients
JOIN versions v ON v.machine = h.machine AND v.major = h.major
WHERE h.workload = 'held' AND c.workload = 'new-connection';

CREATE OR REPLACE TABLE connect_pairs AS
SELECT o.machine, o.major AS old_major, n.major AS new_major,
       o.connection_ms_median AS old_connection_ms, n.connection_ms_median AS new_connection_ms,
       n.connection_ms_median / o.connection_ms_median AS connection_ratio,
       ratio_low(n.connection_ms_min, n.connection_ms_max, o.connection_ms_min, o.connection_ms_max)
           AS connection_ratio_low,
       ratio_high(n.connection_ms_min, n.connection_ms_max, o.connection_ms_min, o.connection_ms_max)
           AS connection_ratio_high,
       n.new_tps / o.new_tps AS new_tps_ratio,
       ratio_low(n.new_tps_min, n.new_tps_max, o.new_tps_min, o.new_tps_max) AS new_tps_ratio_low,
       ratio_high(n.new_tps_min, n.new_tps_max, o.new_tps_min, o.new_tps_max) AS new_tps_ratio_high,
       o.client_saturated OR n.client_saturated AS client_saturated,
       greatest(o.client_cpu, n.client_cpu) AS client_cpu, o.client_cores
FROM connect_cost o
JOIN connect_cost n ON n.machine = o.machine
WHERE o.major = (SELECT min(major) FROM connect_cost x WHERE x.machine = o.machine)
  AND n.major = (SELECT max(major) FROM connect_cost x WHERE x.machine = o.machine)
  AND n.major > o.major;
