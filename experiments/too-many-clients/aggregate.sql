-- too-many-clients (seed 004): 150 clients against max_connections = 100, straight to the server and
-- through PgBouncer. The refused direct windows are the measurement: pgbench's error and how many clients
-- the server had accepted when it refused the next one.
-- Input: the view windows (results/*/too-many-clients/*.csv, most thorough profile per machine).

CREATE OR REPLACE TABLE points AS
SELECT
    machine, profile, workload, target, clients, server_cores, clients_per_core, pool_size,
    windows, windows_ok, tps_median, tps_min, tps_max, latency_avg_median,
    server_cpu_median, pooler_cpu_median, server_backends_max, server_backends_min, errors
FROM point_stats;

-- Straight to the server: every window should fail; how many did, which error they printed (the FATAL
-- line, without the socket path that differs per run) and how many clients got in.
CREATE OR REPLACE TABLE refusal AS
SELECT machine, clients, server_cpu_budget AS server_cores,
       count(*) AS windows,
       count(*) FILTER (WHERE NOT ok) AS windows_refused,
       any_value(regexp_extract(error, 'FATAL:\s+(.*)$', 1)) FILTER (WHERE NOT ok) AS fatal_message,
       any_value(error) FILTER (WHERE NOT ok) AS error,
       median(clients_connected) AS clients_connected_median,
       min(clients_connected) AS clients_connected_min,
       max(clients_connected) AS clients_connected_max
FROM windows
WHERE target = 'direct'
GROUP BY machine, clients, server_cpu_budget;

-- Through PgBouncer: the same crowd's throughput, and the server backends it held (the pool, plus the
-- harness's sampler connection).
CREATE OR REPLACE TABLE pooled AS
SELECT machine, clients, server_cores, pool_size, windows, windows_ok,
       tps_median, tps_min, tps_max, latency_avg_median,
       server_backends_min, server_backends_max, pooler_cpu_median AS pooler_cpu
FROM point_stats
WHERE target = 'pgbouncer';
