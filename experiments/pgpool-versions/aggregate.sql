-- pgpool-versions: per PgPool-II version each row recorded (pooler_version), its process tree before the
-- first query, the tree and the throughput under select-only load at each client count, and its churn.
-- Input: the view windows (results/*/pgpool-versions/*.csv, most thorough profile per machine). The workload
-- ids say what a window is: load-... or churn-..., then installed or build.

-- Under load, per version and client count: the tree's peak memory and processes, and the throughput,
-- medians with the passes' range. No count of server backends: both versions run against one server, and
-- the backends probe counts every pooler's. A point whose clients spent more than a tenth of its windows
-- connecting has no throughput (the steady-state rule): connect_share_median says how much they spent.
CREATE OR REPLACE TABLE load AS
SELECT machine, pooler_version, clients,
       count(*) AS windows, count(*) FILTER (WHERE ok) AS windows_ok,
       median(pooler_rss_peak_bytes) / 1048576.0 AS rss_mib_median,
       min(pooler_rss_peak_bytes) / 1048576.0 AS rss_mib_min,
       max(pooler_rss_peak_bytes) / 1048576.0 AS rss_mib_max,
       median(pooler_pss_peak_bytes) / 1048576.0 AS pss_mib_median,
       max(pooler_processes_peak) AS processes,
       median(connect_share) FILTER (WHERE ok) AS connect_share_median,
       median(tps) FILTER (WHERE ok) AS tps_median,
       min(tps) FILTER (WHERE ok) AS tps_min,
       max(tps) FILTER (WHERE ok) AS tps_max,
       string_agg(DISTINCT error, '; ') FILTER (WHERE NOT ok) AS errors
FROM windows
WHERE workload LIKE 'load-%' AND pooler_version IS NOT NULL
GROUP BY machine, pooler_version, clients;

-- One line per version: the tree before the first query (read once per pass, the poolers started afresh),
-- and a new SCRAM connection per transaction at the fewest clients measured.
CREATE OR REPLACE TABLE versions AS
WITH start AS (
    SELECT machine, pooler_version,
           median(pooler_start_rss_bytes) / 1048576.0 AS start_rss_mib,
           min(pooler_start_rss_bytes) / 1048576.0 AS start_rss_mib_min,
           max(pooler_start_rss_bytes) / 1048576.0 AS start_rss_mib_max,
           median(pooler_start_pss_bytes) / 1048576.0 AS start_pss_mib,
           max(pooler_start_processes) AS start_processes
    FROM windows WHERE workload LIKE 'load-%' AND pooler_version IS NOT NULL
    GROUP BY machine, pooler_version
), churn AS (
    SELECT machine, pooler_version, clients AS churn_clients,
           median(tps) FILTER (WHERE ok) AS churn_tps,
           min(tps) FILTER (WHERE ok) AS churn_tps_min,
           max(tps) FILTER (WHERE ok) AS churn_tps_max,
           median(avg_connection_ms) FILTER (WHERE ok) AS churn_connection_ms,
           count(*) FILTER (WHERE NOT ok) AS churn_windows_failed
    FROM windows WHERE workload LIKE 'churn-%' AND pooler_version IS NOT NULL
    GROUP BY machine, pooler_version, clients
    QUALIFY clients = min(clients) OVER (PARTITION BY machine, pooler_version)
)
SELECT s.machine, s.pooler_version, s.start_rss_mib, s.start_rss_mib_min, s.start_rss_mib_max,
       s.start_pss_mib, s.start_processes,
       c.churn_clients, c.churn_tps, c.churn_tps_min, c.churn_tps_max, c.churn_connection_ms,
       c.churn_windows_failed
FROM start s LEFT JOIN churn c USING (machine, pooler_version)
ORDER BY s.machine, string_split(s.pooler_version, '.')::INTEGER[];
