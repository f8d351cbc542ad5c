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
       max(pooler_start_processes) AS processes
FROM (SELECT DISTINCT machine, run_id, target, pooler_start_rss_bytes, pooler_start_pss_bytes,
             pooler_start_processes FROM windows WHERE pooler_start_rss_bytes IS NOT NULL)
GROUP BY machine, target;
