-- Figures quoted by the article "PgBouncer's trade" (seed 004).
-- Each `-- name:` query becomes a list of records in build/data/facts/pgbouncer-trade.json
-- (a measured machine's rows of a query that names machines: facts/pgbouncer-trade/<machine>.json).
-- The seed's figures are set beside ours at the same point per server core (its machine had 8), never mixed in.

-- name: churn
-- A new connection per transaction, direct and through PgBouncer, with the seed's figures at the same
-- clients per core where it measured that point.
WITH seed_pooler_churn AS (
    SELECT * FROM main.published_per_core
    WHERE machine = 'published-pgbouncer-tradeoffs' AND experiment = 'pooler-churn'
)
SELECT c.*, sd.value AS seed_direct_tps, sp.value AS seed_pooled_tps, sp.value / sd.value AS seed_speedup,
       sdl.value AS seed_direct_latency_ms, spl.value AS seed_pooled_latency_ms
FROM pgbouncer_trade.churn c
LEFT JOIN seed_pooler_churn sd ON sd.clients_per_core = c.clients_per_core AND sd.workload = 'direct' AND sd.metric = 'tps'
LEFT JOIN seed_pooler_churn sp ON sp.clients_per_core = c.clients_per_core AND sp.workload = 'pgbouncer' AND sp.metric = 'tps'
LEFT JOIN seed_pooler_churn sdl ON sdl.clients_per_core = c.clients_per_core AND sdl.workload = 'direct' AND sdl.metric = 'latency_avg_ms'
LEFT JOIN seed_pooler_churn spl ON spl.clients_per_core = c.clients_per_core AND spl.workload = 'pgbouncer' AND spl.metric = 'latency_avg_ms'
ORDER BY c.machine, c.clients;

-- name: churn_points
-- The churn windows as a chart draws them: one line direct, one through PgBouncer.
SELECT machine, workload, clients, tps_median, tps_min, tps_max, latency_avg_median, connection_ms_median
FROM pgbouncer_trade.points WHERE workload IN ('churn-direct', 'churn-pgbouncer')
ORDER BY machine, workload, clients;

-- name: trade_curve
-- Through PgBouncer ÷ straight to the server by clients per server core, for a new connection per transaction
-- and for persistent clients (pgbouncer_trade.trade_curve), as the article's chart and each machine's draw it.
SELECT * FROM pgbouncer_trade.trade_curve ORDER BY machine, connect, builtin, clients;

-- name: direct_curve
-- Persistent clients straight to the server, with the seed's figure at the same clients per core.
WITH seed_clients_sweep AS (
    SELECT * FROM main.published_per_core
    WHERE machine = 'published-pgbouncer-tradeoffs' AND experiment = 'clients-sweep'
)
SELECT d.*, st.value AS seed_tps, sl.value AS seed_latency_ms
FROM pgbouncer_trade.direct_curve d
LEFT JOIN seed_clients_sweep st ON st.clients_per_core = d.clients_per_core AND st.workload = d.builtin AND st.metric = 'tps'
LEFT JOIN seed_clients_sweep sl ON sl.clients_per_core = d.clients_per_core AND sl.workload = d.builtin AND sl.metric = 'latency_avg_ms'
ORDER BY d.machine, d.builtin, d.clients;

-- name: pool_sizes
-- A crowd through PgBouncer by pool size, against the same crowd direct, with the seed's figure beside:
-- as printed where the crowd and pool are the seed's own (200 clients, pools of 4 to 100), and per server
-- core for the crowd of 25 per core on a pool of 2 per core (the seed's 200 on a pool of 16, on 8 cores).
WITH seed_pool AS (
    SELECT *, CAST(regexp_extract(note, 'pool size ([0-9]+)', 1) AS INTEGER) AS pool,
           CAST(regexp_extract(note, 'pool size ([0-9]+)', 1) AS INTEGER) / server_cores AS pool_per_core
    FROM main.published_per_core
    WHERE machine = 'published-pgbouncer-tradeoffs' AND experiment = 'pool-size'
)
SELECT s.*, st.value AS seed_tps, sl.value AS seed_latency_ms,
       CASE WHEN st.clients = s.clients THEN 'as printed' WHEN st.value IS NOT NULL THEN 'per core' END AS seed_match
FROM pgbouncer_trade.pool_sizes s
LEFT JOIN seed_pool st ON st.workload = s.builtin AND st.metric = 'tps'
 AND ((st.clients = s.clients AND st.pool = s.pool_size)
      OR (st.clients <> s.clients AND st.clients_per_core = s.clients / s.server_cores
          AND st.pool_per_core = s.pool_size / s.server_cores))
LEFT JOIN seed_pool sl ON sl.workload = s.builtin AND sl.metric = 'latency_avg_ms'
 AND ((sl.clients = s.clients AND sl.pool = s.pool_size)
      OR (sl.clients <> s.clients AND sl.clients_per_core = s.clients / s.server_cores
          AND sl.pool_per_core = s.pool_size / s.server_cores))
ORDER BY s.machine, s.builtin, s.clients, s.pool_size;

-- name: pool_spread
SELECT * FROM pgbouncer_trade.pool_spread ORDER BY machine, builtin;

-- name: refusal
SELECT * FROM too_many_clients.refusal ORDER BY machine;

-- name: crowd_pooled
SELECT * FROM too_many_clients.pooled ORDER BY machine;

-- name: tls
SELECT * FROM tls_trade.tls_cost ORDER BY machine, connect, target, clients;

-- name: tls_speedup
SELECT * FROM tls_trade.churn_speedup ORDER BY machine, clients;

-- name: processes
SELECT * FROM pgbouncer_processes.processes ORDER BY machine, clients;

-- name: network
-- Whether the machine's kernel could add network delay (netem); the network-distance rows are measured
-- only where it could, and say why not otherwise.
SELECT id AS machine, netem FROM main.machines WHERE NOT published ORDER BY id;

-- name: network_summary
-- The same across machines, counted (the article stays the same size whatever the number of machines).
SELECT count(*) AS machines,
       count(*) FILTER (WHERE netem IS NOT NULL AND NOT starts_with(netem, 'netem not available')) AS with_netem,
       count(*) FILTER (WHERE starts_with(netem, 'netem not available')) AS without_netem,
       count(*) FILTER (WHERE netem IS NULL) AS not_probed
FROM main.machines WHERE NOT published;

-- name: pooler_rules
-- The seed's four "when to add a pooler" rules as checks over each machine's data, with the numbers that
-- decide them:
-- 1. a new connection per request: through PgBouncer over direct at 2 clients per core (the seed's 16 on 8);
-- 2. many instances: the direct tpcb-like throughput at 50 clients per core (the seed's 400 on 8) as a share
--    of its peak, against the pooled crowd's at 25 per core (the seed's 200 on 8);
-- 3. a few steady servers: the best pooled over direct among the persistent crowds of 25 to 50 clients per
--    core, the seed's (below 1: direct wins);
-- 4. too many clients: how many the server admitted before refusing, and whether the pooler served all.
-- The starting pool size is the direct tpcb-like peak's client count, in clients per core times cores.
WITH churn AS (
    SELECT * FROM pgbouncer_trade.churn
    QUALIFY row_number() OVER (PARTITION BY machine ORDER BY abs(ln(clients_per_core / 2))) = 1
), crowd AS (
    SELECT d.machine, d.share_of_peak AS direct_share_of_peak, d.clients AS direct_clients
    FROM pgbouncer_trade.direct_curve d
    WHERE d.builtin = 'tpcb-like'
    QUALIFY row_number() OVER (PARTITION BY d.machine ORDER BY abs(ln(d.clients_per_core / 50))) = 1
), held AS (
    SELECT machine, max(pooled_over_direct) AS best_pooled_over_direct,
           arg_max(pooled_over_direct_low, pooled_over_direct) AS best_pooled_over_direct_low,
           arg_max(pooled_over_direct_high, pooled_over_direct) AS best_pooled_over_direct_high,
           max(pooler_cpu) AS pooler_cpu_max
    FROM pgbouncer_trade.pool_sizes
    WHERE direct_tps IS NOT NULL AND clients / server_cores BETWEEN 25 AND 50 GROUP BY machine
), peak AS (
    SELECT machine, arg_max(clients, tps_median) AS peak_clients, arg_max(clients_per_core, tps_median) AS peak_per_core,
           any_value(server_cores) AS server_cores
    FROM pgbouncer_trade.direct_curve WHERE builtin = 'tpcb-like' GROUP BY machine
)
SELECT m.id AS machine, m.server_cores,
       churn.clients AS churn_clients, churn.speedup, churn.speedup_low, churn.speedup_high,
       crowd.direct_clients, crowd.direct_share_of_peak,
       held.best_pooled_over_direct, held.best_pooled_over_direct_low, held.best_pooled_over_direct_high,
       held.pooler_cpu_max,
       r.clients_connected_median AS admitted, r.windows_refused, r.windows AS refusal_windows,
       p.windows_ok AS pooled_windows_ok, p.windows AS pooled_windows, p.server_backends_max AS pooled_backends,
       peak.peak_clients, peak.peak_per_core
FROM main.machines m
LEFT JOIN churn ON churn.machine = m.id
LEFT JOIN crowd ON crowd.machine = m.id
LEFT JOIN held ON held.machine = m.id
LEFT JOIN too_many_clients.refusal r ON r.machine = m.id
LEFT JOIN too_many_clients.pooled p ON p.machine = m.id
LEFT JOIN peak ON peak.machine = m.id
WHERE NOT m.published AND (churn.machine IS NOT NULL OR r.machine IS NOT NULL)
ORDER BY m.id;

-- name: seed_version_peaks
-- The seed's PostgreSQL major, measured here by pg-versions: each machine's tpcb-like peak per core on
-- that major beside the seed's published peak (its read-write curve peaked at 16 clients on 8 cores).
SELECT a.machine, a.postgres_version, a.peak_per_core, a.peak_per_core_low, a.peak_per_core_high,
       s.seed_peak_per_core
FROM pg_versions.at_seed_major a
JOIN (
    SELECT machine, arg_max(clients_per_core, value) AS seed_peak_per_core FROM main.published_per_core
    WHERE experiment = 'clients-sweep' AND workload = 'tpcb-like' AND metric = 'tps' GROUP BY machine
) s ON s.machine = a.seed
WHERE a.seed = 'published-pgbouncer-tradeoffs' AND a.workload = 'tpcb-like'
ORDER BY a.machine;

-- name: published
-- The seed's own figures, as printed, with its machine's server cores (a chart names them beside the seed's
-- points, since its clients ran on another core count than ours).
SELECT p.experiment, p.workload, p.clients, p.metric, p.value, p.unit, p.note, m.server_cores
FROM main.published p JOIN main.machines m ON m.id = p.machine
WHERE p.machine = 'published-pgbouncer-tradeoffs'
ORDER BY experiment, workload, metric, clients, TRY_CAST(regexp_extract(note, '[0-9]+') AS INTEGER) NULLS FIRST;
