-- sync-commit: the tpcb-like sweep with synchronous_commit on and off; does the ceiling move, does the
-- peak move, against the run-to-run range?
-- Input: the view windows (results/*/sync-commit/*.csv, most thorough profile per machine).

CREATE OR REPLACE TABLE points AS
SELECT
    machine, profile, workload, clients, clients_per_core,
    windows, windows_ok, windows_client_saturated, tps_median, tps_min, tps_max,
    latency_avg_median, latency_avg_min, latency_avg_max, spread
FROM point_stats;

-- Each setting's peak among server-bound points (the view peak_stats: one CPU budget per machine here), and
-- the client counts whose range overlaps the peak's (no measurable difference from it).
CREATE OR REPLACE TABLE peaks AS
WITH best AS (
    SELECT machine, workload, peak_clients, peak_tps, peak_tps_min, peak_tps_max,
           -- The peak's measured neighbours on its curve (NULL at the curve's first or last point).
           peak_clients_below, peak_clients_above
    FROM peak_stats
)
SELECT b.*,
       min(p.clients) FILTER (WHERE p.tps_max >= b.peak_tps_min) AS plateau_min_clients,
       max(p.clients) FILTER (WHERE p.tps_max >= b.peak_tps_min) AS plateau_max_clients,
       median(p.spread) AS median_spread
FROM best b JOIN points p USING (machine, workload)
GROUP BY ALL;

-- Off against on at every client count: the ratio of medians and the range the passes allow.
CREATE OR REPLACE TABLE off_vs_on AS
SELECT n.machine, n.clients,
       n.tps_median AS on_tps, n.tps_min AS on_tps_min, n.tps_max AS on_tps_max,
       f.tps_median AS off_tps, f.tps_min AS off_tps_min, f.tps_max AS off_tps_max,
       f.tps_median / n.tps_median AS off_over_on,
       ratio_low(f.tps_min, f.tps_max, n.tps_min, n.tps_max) AS off_over_on_low,
       ratio_high(f.tps_min, f.tps_max, n.tps_min, n.tps_max) AS off_over_on_high,
       f.tps_min > n.tps_max AS off_measurably_higher
FROM points n JOIN points f ON f.machine = n.machine AND f.clients = n.clients
WHERE n.workload = 'sync-on' AND f.workload = 'sync-off'
ORDER BY n.machine, n.clients;

-- One line per machine: the ceiling's move against the peak's.
CREATE OR REPLACE TABLE summary AS
SELECT n.machine,
       n.peak_clients AS on_peak_clients, f.peak_clients AS off_peak_clients,
       n.peak_clients_below AS on_peak_clients_below, n.peak_clients_above AS on_peak_clients_above,
       f.peak_clients_below AS off_peak_clients_below, f.peak_clients_above AS off_peak_clients_above,
       n.peak_tps AS on_peak_tps, f.peak_tps AS off_peak_tps,
       f.peak_tps / n.peak_tps AS ceiling_ratio,
       ratio_low(f.peak_tps_min, f.peak_tps_max, n.peak_tps_min, n.peak_tps_max) AS ceiling_ratio_low,
       ratio_high(f.peak_tps_min, f.peak_tps_max, n.peak_tps_min, n.peak_tps_max) AS ceiling_ratio_high,
       n.plateau_min_clients AS on_plateau_min, n.plateau_max_clients AS on_plateau_max,
       f.plateau_min_clients AS off_plateau_min, f.plateau_max_clients AS off_plateau_max,
       -- The peak moved measurably only if either peak lies outside the other setting's plateau: the
       -- comparison runs both ways.
       f.peak_clients NOT BETWEEN n.plateau_min_clients AND n.plateau_max_clients
           OR n.peak_clients NOT BETWEEN f.plateau_min_clients AND f.plateau_max_clients AS peak_moved,
       (SELECT median(off_over_on) FROM off_vs_on o WHERE o.machine = n.machine) AS median_off_over_on,
       (SELECT min(off_over_on) FROM off_vs_on o WHERE o.machine = n.machine) AS min_off_over_on,
       (SELECT max(off_over_on) FROM off_vs_on o WHERE o.machine = n.machine) AS max_off_over_on,
       n.median_spread AS on_median_spread
FROM peaks n JOIN peaks f ON f.machine = n.machine
WHERE n.workload = 'sync-on' AND f.workload = 'sync-off';
