-- prepared-statements: ok or failed per pooler variant and protocol, with pgbench's error.
-- Input: the view windows (results/*/prepared-statements/*.csv, most thorough profile per machine).

CREATE OR REPLACE TABLE protocols AS
SELECT machine, target AS pooler, regexp_extract(workload, '[a-z]+$') AS protocol, clients,
       count(*) AS windows, count(*) FILTER (WHERE ok) AS windows_ok,
       -- A pooler whose version lacks the support asked of it ran no window: its rows say so in their error.
       windows_outcome(ok, error, 'not supported by this version') AS outcome,
       -- Only windows whose every client finished give a throughput: an aborted run's tps line is not one.
       median(tps) FILTER (WHERE ok) AS tps_median,
       min(tps) FILTER (WHERE ok) AS tps_min,
       max(tps) FILTER (WHERE ok) AS tps_max,
       median(pooler_rss_peak_bytes) / 1048576.0 AS pooler_rss_mib_median,
       string_agg(DISTINCT error, '; ') FILTER (WHERE NOT ok) AS errors
FROM windows
GROUP BY machine, target, workload, clients;
