-- tls-trade: what TLS adds, per path (direct or through PgBouncer) and per way of connecting (held, or a
-- new connection per transaction). Workload ids read <churn|held>-<direct|pgbouncer>-<plain|tls>.
-- Input: the view windows (results/*/tls-trade/*.csv, most thorough profile per machine).

CREATE OR REPLACE TABLE points AS
SELECT
    machine, profile, workload, target, clients, server_cores, clients_per_core, pool_size,
    windows, windows_ok, windows_client_saturated, tps_median, tps_min, tps_max,
    latency_avg_median, connection_ms_median, connection_ms_min, connection_ms_max,
    server_cpu_median, client_cpu_median, pooler_cpu_median, server_backends_max, errors
FROM point_stats;

-- TLS against plain at the same path, way of connecting and client count. With a new connection per
-- transaction, pgbench's average connection time tells the handshake's share: what TLS added to a
-- connection (TLS and SCRAM) over the connection without it (SCRAM alone).
CREATE OR REPLACE TABLE tls_cost AS
WITH tagged AS (
    SELECT *, split_part(workload, '-', 1) AS connect, split_part(workload, '-', 3) AS encryption
    FROM point_stats
)
SELECT t.machine, t.connect, t.target, t.clients, t.server_cores, t.clients_per_core,
       p.tps_median AS plain_tps, p.tps_min AS plain_tps_min, p.tps_max AS plain_tps_max,
       t.tps_median AS tls_tps, t.tps_min AS tls_tps_min, t.tps_max AS tls_tps_max,
       t.tps_median / p.tps_median AS tls_over_plain,
       ratio_low(t.tps_min, t.tps_max, p.tps_min, p.tps_max) AS tls_over_plain_low,
       ratio_high(t.tps_min, t.tps_max, p.tps_min, p.tps_max) AS tls_over_plain_high,
       p.connection_ms_median AS plain_connection_ms, t.connection_ms_median AS tls_connection_ms,
       (t.connection_ms_median - p.connection_ms_median) / t.connection_ms_median AS handshake_share,
       p.pooler_cpu_median AS plain_pooler_cpu, t.pooler_cpu_median AS tls_pooler_cpu,
       -- Whether pgbench, not the path, set either side's rate: the most of its cores it used in a pass.
       p.client_cpu_share_max AS plain_client_cpu, t.client_cpu_share_max AS tls_client_cpu,
       p.windows_client_saturated > 0 AS plain_client_saturated,
       t.windows_client_saturated > 0 AS tls_client_saturated,
       t.client_budget_cores AS client_cores
FROM tagged t JOIN tagged p
  ON p.machine = t.machine AND p.connect = t.connect AND p.target = t.target AND p.clients = t.clients
WHERE t.encryption = 'tls' AND p.encryption = 'plain';

-- The pooler's gain with TLS on both sides: new connections per transaction, through PgBouncer over
-- direct, with and without TLS (the seed guessed the gain grows with TLS).
CREATE OR REPLACE TABLE churn_speedup AS
SELECT machine, clients, clients_per_core,
       d.plain_tps AS direct_plain_tps, p.plain_tps AS pooled_plain_tps,
       p.plain_tps / d.plain_tps AS plain_speedup,
       ratio_low(p.plain_tps_min, p.plain_tps_max, d.plain_tps_min, d.plain_tps_max) AS plain_speedup_low,
       ratio_high(p.plain_tps_min, p.plain_tps_max, d.plain_tps_min, d.plain_tps_max) AS plain_speedup_high,
       d.tls_tps AS direct_tls_tps, p.tls_tps AS pooled_tls_tps,
       p.tls_tps / d.tls_tps AS tls_speedup,
       ratio_low(p.tls_tps_min, p.tls_tps_max, d.tls_tps_min, d.tls_tps_max) AS tls_speedup_low,
       ratio_high(p.tls_tps_min, p.tls_tps_max, d.tls_tps_min, d.tls_tps_max) AS tls_speedup_high,
       d.plain_client_cpu AS direct_plain_client_cpu, p.plain_client_cpu AS pooled_plain_client_cpu,
       d.tls_client_cpu AS direct_tls_client_cpu, p.tls_client_cpu AS pooled_tls_client_cpu,
       d.plain_client_saturated AS direct_plain_client_saturated,
       p.plain_client_saturated AS pooled_plain_client_saturated,
       d.tls_client_saturated AS direct_tls_client_saturated,
       p.tls_client_saturated AS pooled_tls_client_saturated,
       p.client_cores
FROM tls_cost d JOIN tls_cost p USING (machine, connect, clients, clients_per_core)
WHERE connect = 'churn' AND d.target = 'direct' AND p.target = 'pgbouncer';
