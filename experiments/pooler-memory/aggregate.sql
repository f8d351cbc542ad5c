-- pooler-memory: each pooler's process tree at each client count.
-- Input: the view windows (results/*/pooler-memory/*.csv, most thorough profile per machine).

CREATE OR REPLACE TABLE memory AS
SELECT machine, target AS pooler, clients,
       count(*) AS windows, count(*) FILTER (WHERE ok) AS windows_ok,
       median(pooler_rss_peak_bytes) / 1048576.0 AS rss_mib_median,
       min(pooler_rss_peak_bytes) / 1048576.0 AS rss_mib_min,
       max(pooler_rss_peak_bytes) / 1048576.0 AS rss_mib_max,
       median(pooler_pss_peak_bytes) / 1048576.0 AS pss_mib_median,
       min(pooler_pss_peak_bytes) / 1048576.0 AS pss_mib_min,
       max(pooler_pss_peak_bytes) / 1048576.0 AS pss_mib_max,
       max(pooler_processes_peak) AS processes,
       max(server_backends_max) AS server_backends_max,
       -- Clients the pooler served: all of them, or as many as connected before one's wait ran out.
       min(clients_connected) AS clients_served_min,
       median(tps) FILTER (WHERE ok) AS tps_median,
       string_agg(DISTINCT error, '; ') FILTER (WHERE NOT ok) AS errors
FROM windows
GROUP BY machine, target, clients;

-- Before the first query: one reading per pooler start (every window of a run repeats it).
CREATE OR REPLACE TABLE memory_at_start AS
SELECT machine, target AS pooler,
       median(pooler_start_rss_bytes) / 1048576.0 AS rss_mib,
       median(pooler_start_pss_bytes) / 1048576.0 AS pss_mib,
       max(pooler_start_processes) AS processes,
       -- How many starts the figures rest on: a verdict on one says so.
       count(*) AS starts
FROM (SELECT DISTINCT machine, run_id, target, pooler_start_rss_bytes, pooler_start_pss_bytes,
             pooler_start_processes FROM windows WHERE pooler_start_rss_bytes IS NOT NULL)
GROUP BY machine, target;

-- Throughput with its spread and the initial connection time per pooler and client count (seed 002's
-- Odyssey took seconds to accept a hundred clients: a cost the tps line never shows).
CREATE OR REPLACE TABLE throughput AS
WITH connect AS (
    SELECT machine, target, clients,
           median(initial_connection_ms) FILTER (WHERE ok) AS connection_ms_median,
           min(initial_connection_ms) FILTER (WHERE ok) AS connection_ms_min,
           max(initial_connection_ms) FILTER (WHERE ok) AS connection_ms_max
    FROM windows GROUP BY machine, target, clients
)
SELECT p.machine, p.target AS pooler, p.clients, p.windows, p.windows_ok, p.tps_median, p.tps_min, p.tps_max,
       c.connection_ms_median, c.connection_ms_min, c.connection_ms_max,
       p.client_cpu_share_max AS client_cpu, p.windows_client_saturated > 0 AS client_saturated,
       p.client_budget_cores AS client_cores
FROM point_stats p JOIN connect c USING (machine, target, clients);

-- Every pair of poolers at the same client count: where the passes' ranges overlap the difference is
-- not measurable, whatever the medians say; otherwise which one was faster, and by how much.
CREATE OR REPLACE TABLE throughput_pairs AS
SELECT a.machine, a.clients, a.pooler, b.pooler AS other,
       a.tps_median / b.tps_median AS ratio,
       ratio_low(a.tps_min, a.tps_max, b.tps_min, b.tps_max) AS ratio_low,
       ratio_high(a.tps_min, a.tps_max, b.tps_min, b.tps_max) AS ratio_high,
       CASE WHEN a.tps_min <= b.tps_max AND b.tps_min <= a.tps_max THEN 'no measurable difference'
            WHEN a.tps_min > b.tps_max THEN 'faster' ELSE 'slower' END AS difference
FROM throughput a JOIN throughput b ON b.machine = a.machine AND b.clients = a.clients AND a.pooler < b.pooler
WHERE a.windows_ok = a.windows AND b.windows_ok = b.windows;

-- Each pooler version at each client count (the rows record the version they ran, pooler_version; older rows
-- none, and the article's facts then take machine.yaml's): the resident memory of the whole process tree and
-- the throughput, medians with the passes' range, and the machine's profile (a quick one indicates). Four
-- poolers compared draws them side by side (four-poolers.facts.sql's side_by_side).
CREATE OR REPLACE TABLE by_version AS
SELECT machine, target AS pooler, pooler_version AS version, clients, any_value(profile) AS profile,
       any_value(server_cpu_budget) AS server_cores,
       count(*) AS windows, count(*) FILTER (WHERE ok) AS windows_ok,
       median(pooler_rss_peak_bytes) / 1048576.0 AS rss_mib_median,
       min(pooler_rss_peak_bytes) / 1048576.0 AS rss_mib_min,
       max(pooler_rss_peak_bytes) / 1048576.0 AS rss_mib_max,
       median(tps) FILTER (WHERE ok) AS tps_median,
       min(tps) FILTER (WHERE ok) AS tps_min,
       max(tps) FILTER (WHERE ok) AS tps_max
FROM windows
GROUP BY machine, target, pooler_version, clients;
