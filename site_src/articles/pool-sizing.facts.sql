-- Facts of the article "Pool sizing, measured". Each `-- name:` query becomes a list of records in
-- build/data/facts/pool-sizing.json
-- (a measured machine's rows of a query that names machines: facts/pool-sizing/<machine>.json).

-- name: fit_machines
SELECT DISTINCT machine FROM main.usl_fits WHERE experiment = 'clients-sweep' ORDER BY machine;

-- name: fits
-- Every fit: per machine and workload, on medians and on all passes, free and anchored.
SELECT f.*, p.peak_clients AS measured_peak_clients, p.peak_tps AS measured_peak_tps,
       p.peak_tps_min AS measured_peak_tps_min, p.peak_tps_max AS measured_peak_tps_max
FROM main.usl_fits f
LEFT JOIN clients_sweep.peaks p USING (machine, workload)
WHERE f.experiment = 'clients-sweep'
ORDER BY machine, workload, basis, anchored;

-- name: published_fits
-- The reference article's own fit, as it printed it (its points are not all in its text).
SELECT machine,
       max(value) FILTER (WHERE metric = 'lambda') AS lambda_tps,
       max(value) FILTER (WHERE metric = 'sigma') AS sigma,
       max(value) FILTER (WHERE metric = 'kappa') AS kappa,
       max(value) FILTER (WHERE metric = 'r_squared') AS r_squared,
       max(value) FILTER (WHERE metric = 'n_star') AS n_star,
       max(value) FILTER (WHERE metric = 'r_squared_anchored') AS r_squared_anchored
FROM main.published WHERE experiment = 'usl-fit'
GROUP BY machine ORDER BY machine;

-- name: published_points
SELECT machine, workload, clients, metric, value, note FROM main.published
WHERE experiment IN ('clients-sweep', 'folk-formula', 'sync-commit', 'client-bound')
  AND machine = 'published-pool-sizing'
ORDER BY experiment, workload, clients, metric;

-- name: simulator_points
-- Measured medians with the free fit on medians repeated on each row: the simulator's defaults.
SELECT p.machine, p.workload, p.clients, p.tps_median, p.tps_min, p.tps_max,
       f.lambda_tps AS fit_lambda, f.sigma AS fit_sigma, f.kappa AS fit_kappa, f.n_star AS fit_n_star
FROM clients_sweep.points p
JOIN main.usl_fits f ON f.machine = p.machine AND f.workload = p.workload
    AND f.experiment = 'clients-sweep' AND f.basis = 'medians' AND NOT f.anchored
WHERE p.tps_median IS NOT NULL
ORDER BY p.machine, p.workload, p.clients;

-- name: folk_formula
-- (cores x 2) + effective spindles, with one spindle as the seed counted it, against the measured optimum
-- and the fitted N*, per machine and workload.
SELECT k.machine, k.workload, k.server_cores, k.formula_connections,
       k.peak_clients AS measured_peak_clients, p.peak_tps, f.n_star, k.measured_over_formula
FROM clients_sweep.folk_formula k
JOIN clients_sweep.peaks p USING (machine, workload)
LEFT JOIN main.usl_fits f ON f.machine = k.machine AND f.workload = k.workload
    AND f.experiment = 'clients-sweep' AND f.basis = 'medians' AND NOT f.anchored
WHERE NOT k.published
ORDER BY k.machine, k.workload;

-- name: littles_law
-- Clients ÷ throughput is the mean time a client waits per transaction (Little's law, with no think
-- time); pgbench's own mean latency should match it. Points whose windows spent more than a tenth of
-- their length connecting have no throughput and are left out of the ratio (clients_sweep.littles_law).
SELECT l.machine, l.workload, l.clients, p.tps_median, p.latency_avg_median,
       1000.0 * l.clients / p.tps_median AS littles_law_ms,
       l.ratio AS measured_over_predicted, l.windows, l.steady_windows,
       l.connect_share_max, l.duration_s
FROM clients_sweep.littles_law l JOIN clients_sweep.points p USING (machine, workload, clients)
ORDER BY machine, workload, clients;

-- name: littles_law_summary
-- tolerance: how far measured ÷ predicted may stray from 1 (the claims file checks the same band).
SELECT machine, any_value(profile) AS profile, count(*) FILTER (WHERE steady_windows > 0) AS points,
       0.1 AS tolerance,
       bool_and(abs(ratio - 1) <= 0.1) FILTER (WHERE steady_windows > 0) AS within_tolerance,
       min(ratio) AS ratio_min, max(ratio) AS ratio_max, median(ratio) AS ratio_median,
       count(*) FILTER (WHERE steady_windows = 0) AS ramped_points,
       max(connect_share_max) FILTER (WHERE steady_windows = 0) AS connect_share_max,
       any_value(duration_s) AS duration_s
FROM clients_sweep.littles_law
GROUP BY machine ORDER BY machine;

-- name: sync_summary
-- With the clients-sweep's tpcb-like peak beside it: the sync-on sweep measures the same curve again.
SELECT s.*, k.peak_clients AS sweep_peak_clients, k.peak_clients_low AS sweep_peak_clients_low,
       k.peak_clients_high AS sweep_peak_clients_high,
       k.peak_clients IS NOT NULL AND k.peak_clients NOT BETWEEN s.on_plateau_min AND s.on_plateau_max
           AND s.on_peak_clients NOT BETWEEN k.peak_clients_low AND k.peak_clients_high AS sweeps_disagree
FROM sync_commit.summary s
LEFT JOIN clients_sweep.peak_ranges k ON k.machine = s.machine AND k.workload = 'tpcb-like'
ORDER BY machine;

-- name: sync_off_vs_on
SELECT * FROM sync_commit.off_vs_on ORDER BY machine, clients;

-- name: sync_points
SELECT * FROM sync_commit.points ORDER BY machine, workload, clients;

-- name: client_bound
SELECT * FROM client_bound.verdicts ORDER BY machine, base_workload, clients;

-- name: client_bound_sweep
-- The clients-sweep's own flags: windows where pgbench saturated its cores (excluded from peaks and fits).
SELECT machine, workload, clients, windows, windows_client_saturated, client_cpu_median
FROM clients_sweep.points
ORDER BY machine, workload, clients;

-- name: queue_points
SELECT * FROM queue_depth.points ORDER BY machine, clients, pool_size;

-- name: seed_version_peaks
-- The seed's PostgreSQL major, measured here by pg-versions: each machine's tpcb-like peak per core on
-- that major beside the seed's published peak.
SELECT a.machine, a.postgres_version, a.peak_per_core, a.peak_per_core_low, a.peak_per_core_high,
       s.peak_clients_per_core AS seed_peak_per_core
FROM pg_versions.at_seed_major a
JOIN clients_sweep.curve_peaks s ON s.machine = a.seed AND s.workload = a.workload
WHERE a.seed = 'published-pool-sizing' AND a.workload = 'tpcb-like'
ORDER BY a.machine;
