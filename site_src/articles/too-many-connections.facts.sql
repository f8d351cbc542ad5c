-- Figures quoted by the article "How many connections is too many?".
-- Each `-- name:` query becomes a list of records in build/data/facts/too-many-connections.json
-- (a measured machine's rows of a query that names machines: facts/too-many-connections/<machine>.json).

-- name: sweep_machines
SELECT machine, any_value(profile) AS profile, any_value(server_cores) AS server_cores,
       count(DISTINCT clients) AS client_counts, min(clients) AS min_clients, max(clients) AS max_clients,
       sum(windows) AS windows, sum(windows_ok) AS windows_ok,
       sum(windows_client_saturated) AS windows_client_saturated,
       max(steal_pct_max) AS steal_pct_max, max(cpu_pressure_pct_max) AS cpu_pressure_pct_max
FROM clients_sweep.points
GROUP BY machine
ORDER BY machine;

-- name: points
SELECT * FROM clients_sweep.points ORDER BY machine, workload, clients;

-- name: peaks
SELECT k.*, n.near_peak_min_clients, n.near_peak_max_clients
FROM clients_sweep.peaks k LEFT JOIN clients_sweep.near_peak n USING (machine, workload)
ORDER BY machine, workload;

-- name: at_most_clients
-- The highest client count measured in a steady state on each machine and workload, against its peak (a
-- point whose windows were mostly connecting has no throughput: unsteady_points names it).
SELECT r.*
FROM clients_sweep.relative_to_peak r
WHERE r.tps_share IS NOT NULL
QUALIFY r.clients = max(r.clients) OVER (PARTITION BY r.machine, r.workload)
ORDER BY machine, workload;

-- name: unsteady_points
-- Points left out of every throughput and latency figure: their clients took more than the steady-state
-- share of the window to connect (connlab.contract.names.CONNECTING_SHARE_LIMIT).
SELECT machine, workload, clients, unsteady_reason FROM clients_sweep.points WHERE NOT steady
ORDER BY machine, workload, clients;

-- name: workloads
SELECT DISTINCT workload FROM clients_sweep.points ORDER BY workload;

-- name: failures
SELECT machine, workload, clients, windows - windows_ok AS failed_windows, errors
FROM clients_sweep.points
WHERE windows_ok < windows
ORDER BY machine, workload, clients;

-- name: client_bound
SELECT machine, workload, clients, windows_client_saturated, client_cpu_median
FROM clients_sweep.points
WHERE windows_client_saturated > 0
ORDER BY machine, workload, clients;

-- name: normalised
SELECT * FROM clients_sweep.normalised WHERE workload = 'mixed' ORDER BY machine, clients;

-- name: normalised_spread
-- The mixed curves of many machines as one band, beside each published curve as it is. Measured machines
-- share steps of half a power of two in clients per core (their core counts differ); at each step: how many
-- machines, the median of their shares of their own peaks, and the least and most any of them reached.
SELECT 'measured machines (median, min–max)' AS series, false AS published,
       2 ^ (round(log2(clients_per_core) * 2) / 2) AS clients_per_core, count(DISTINCT machine) AS machines,
       median(tps_share) AS tps_share, min(tps_share) AS tps_share_low, max(tps_share) AS tps_share_high
FROM clients_sweep.normalised WHERE workload = 'mixed' AND NOT published
GROUP BY 3
UNION ALL
SELECT machine, true, clients_per_core, 1, tps_share, tps_share, tps_share
FROM clients_sweep.normalised WHERE workload = 'mixed' AND published
ORDER BY published, series, clients_per_core;

-- name: neighbours_of_peak
-- The measured points next to each peak: is the peak really above them, or within the range of passes?
SELECT k.machine, k.workload, k.peak_clients, p.clients, p.tps_median, p.tps_min, p.tps_max,
       CASE WHEN p.clients < k.peak_clients THEN 'below' ELSE 'above' END AS side
FROM clients_sweep.peaks k
JOIN clients_sweep.points p USING (machine, workload)
WHERE p.clients = (SELECT max(q.clients) FROM clients_sweep.points q
                   WHERE q.machine = k.machine AND q.workload = k.workload AND q.clients < k.peak_clients)
   OR p.clients = (SELECT min(q.clients) FROM clients_sweep.points q
                   WHERE q.machine = k.machine AND q.workload = k.workload AND q.clients > k.peak_clients)
ORDER BY machine, workload, clients;

-- name: connect_costs
SELECT * FROM connect_cost.costs ORDER BY machine, transport, clients;

-- name: connect_points
SELECT * FROM connect_cost.points ORDER BY machine, clients, transport, workload;

-- name: pooler_persistent
-- Client counts with a figure on both sides (a side mostly spent connecting has none: no steady state).
SELECT * FROM pgbouncer.persistent WHERE pooled_over_direct IS NOT NULL ORDER BY machine, clients;

-- name: pooler_churn
SELECT * FROM pgbouncer.churn ORDER BY machine, auth;

-- name: pooler_points
SELECT * FROM pgbouncer.points ORDER BY machine, workload, clients;

-- name: budget_scaling
SELECT * FROM core_budget.scaling ORDER BY machine, workload;

-- name: budget_points
SELECT * FROM core_budget.points ORDER BY machine, workload, budget, clients;

-- name: wait_points
SELECT * FROM wait_events.points ORDER BY machine, workload, clients;

-- name: wait_near_far
SELECT * FROM wait_events.near_and_far ORDER BY machine, workload;

-- name: wait_states
-- For the chart and table: per machine and workload, running plus the six most frequent waits over all
-- its client counts; the rest pooled as "other" (its per-pass range is not defined, so left empty).
WITH ranked AS (
    SELECT machine, workload, state,
           rank() OVER (PARTITION BY machine, workload ORDER BY (state = 'running') DESC, sum(samples) DESC)
               AS overall_rank
    FROM wait_events.states GROUP BY machine, workload, state
)
SELECT s.machine, s.workload, s.clients,
       CASE WHEN r.overall_rank <= 7 THEN s.state ELSE 'other' END AS state,
       min(CASE WHEN r.overall_rank <= 7 THEN r.overall_rank ELSE 8 END) AS state_order,
       sum(s.share) AS share,
       CASE WHEN count(*) = 1 THEN min(s.share_min) END AS share_min,
       CASE WHEN count(*) = 1 THEN max(s.share_max) END AS share_max,
       sum(s.samples) AS samples,
       max(s.point_samples) AS point_samples
FROM wait_events.states s JOIN ranked r USING (machine, workload, state)
GROUP BY ALL
ORDER BY machine, workload, state_order, clients;

-- name: memory_per_connection
SELECT * FROM idle_memory.per_connection ORDER BY machine;

-- name: memory_points
SELECT * FROM idle_memory.points ORDER BY machine, clients;

-- name: memory_measures
SELECT * FROM idle_memory.measures ORDER BY machine, measure, clients;

-- name: peaks_by_cores
-- The mixed workload's peak against the server's cores, for every machine and CPU budget, with the range
-- of the passes' own peaks: the clients-sweep of each machine (and each published curve), and every
-- budget of the core-budget experiment.
SELECT machine, published, 'clients-sweep' AS experiment, server_cores, peak_clients,
       peak_clients_low, peak_clients_high, peak_clients_per_core
FROM clients_sweep.peak_ranges WHERE workload = 'mixed' AND points >= 3
UNION ALL
SELECT p.machine, false, 'core-budget', p.budget, p.peak_clients,
       min(q.peak_clients_per_core) * p.budget, max(q.peak_clients_per_core) * p.budget, p.peak_clients_per_core
FROM core_budget.peaks p JOIN core_budget.pass_peaks q USING (machine, workload, budget)
WHERE p.workload = 'mixed'
GROUP BY p.machine, p.budget, p.peak_clients, p.peak_clients_per_core
ORDER BY machine, experiment, server_cores;

-- name: version_pairs
-- pg-versions: the newest major against the oldest on each machine, each with its exact server.
SELECT p.*, o.postgres_version AS old_version, n.postgres_version AS new_version
FROM pg_versions.version_pairs p
JOIN pg_versions.versions o ON o.machine = p.machine AND o.major = p.old_major
JOIN pg_versions.versions n ON n.machine = p.machine AND n.major = p.new_major
ORDER BY machine, workload;

-- name: version_peaks
SELECT k.*, v.postgres_version
FROM pg_versions.peaks k JOIN pg_versions.versions v USING (machine, major)
ORDER BY machine, workload, major;

-- name: version_points
SELECT p.*, v.postgres_version
FROM pg_versions.points p JOIN pg_versions.versions v USING (machine, major)
WHERE p.workload IN ('mixed', 'tpcb-like')
ORDER BY machine, workload, major, clients;

-- name: version_connect
SELECT * FROM pg_versions.connect_cost ORDER BY machine, major;

-- name: version_connect_pairs
SELECT * FROM pg_versions.connect_pairs ORDER BY machine;

-- name: version_summary
-- One row per machine for the article's table across machines: the three questions of pg-versions.
SELECT p.machine, o.postgres_version AS old_version, n.postgres_version AS new_version,
       p.peak_moved, p.peak_moved_low, p.peak_moved_high,
       p.far_per_core, p.far_share_change, p.far_share_change_low, p.far_share_change_high,
       c.connection_ratio, c.connection_ratio_low, c.connection_ratio_high
FROM pg_versions.version_pairs p
JOIN pg_versions.versions o ON o.machine = p.machine AND o.major = p.old_major
JOIN pg_versions.versions n ON n.machine = p.machine AND n.major = p.new_major
LEFT JOIN pg_versions.connect_pairs c ON c.machine = p.machine
WHERE p.workload = 'mixed'
ORDER BY machine;

-- name: version_spread
-- The same three questions over the measured machines, one row per pair of versions, for the article's
-- table past a dozen machines: the median machine's figure, and the lowest and highest machine's.
SELECT o.postgres_version AS old_version, n.postgres_version AS new_version, count(*) AS machines,
       median(p.peak_moved) AS peak_moved, min(p.peak_moved) AS peak_moved_low,
       max(p.peak_moved) AS peak_moved_high,
       median(p.far_share_change) AS far_share_change, min(p.far_share_change) AS far_share_change_low,
       max(p.far_share_change) AS far_share_change_high,
       median(c.connection_ratio) AS connection_ratio, min(c.connection_ratio) AS connection_ratio_low,
       max(c.connection_ratio) AS connection_ratio_high
FROM pg_versions.version_pairs p
JOIN pg_versions.versions o ON o.machine = p.machine AND o.major = p.old_major
JOIN pg_versions.versions n ON n.machine = p.machine AND n.major = p.new_major
LEFT JOIN pg_versions.connect_pairs c ON c.machine = p.machine
WHERE p.workload = 'mixed'
GROUP BY o.postgres_version, n.postgres_version
ORDER BY old_version, new_version;

-- name: seed_version_peaks
-- The seed's PostgreSQL major, measured here by pg-versions: each machine's mixed peak per core on
-- that major beside the seed's published peak.
SELECT a.machine, a.postgres_version, a.peak_per_core, a.peak_per_core_low, a.peak_per_core_high,
       s.peak_clients_per_core AS seed_peak_per_core
FROM pg_versions.at_seed_major a
JOIN clients_sweep.curve_peaks s ON s.machine = a.seed AND s.workload = a.workload
WHERE a.seed = 'published-too-many-connections' AND a.workload = 'mixed'
ORDER BY a.machine;
