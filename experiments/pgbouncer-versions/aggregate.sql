-- pgbouncer-versions: per PgBouncer version each row recorded (pooler_version), its -M prepared outcome at
-- max_prepared_statements 0 and 200, its memory before the first query and under load, and its churn.
-- Input: the view windows (results/*/pgbouncer-versions/*.csv, most thorough profile per machine). The
-- workload ids say what a window is: prepared-<max_prepared_statements>-..., load-..., churn-....

CREATE OR REPLACE TABLE prepared AS
SELECT machine, pooler_version,
       regexp_extract(workload, '^prepared-([0-9]+)-', 1)::INTEGER AS max_prepared_statements,
       count(*) AS windows, count(*) FILTER (WHERE ok) AS windows_ok,
       -- A version that lacks the setting ran no window at 200: its rows say so in their error.
       windows_outcome(ok, error, 'unsupported') AS outcome,
       -- Only windows whose every client finished give a throughput: an aborted run's tps line is not one.
       median(tps) FILTER (WHERE ok) AS tps_median,
       min(tps) FILTER (WHERE ok) AS tps_min,
       max(tps) FILTER (WHERE ok) AS tps_max,
       sum(failed_transactions)::BIGINT AS failed_transactions,
       string_agg(DISTINCT error, '; ') FILTER (WHERE NOT ok) AS errors
FROM windows
WHERE workload LIKE 'prepared-%'
GROUP BY machine, pooler_version, max_prepared_statements;

-- One line per version. The load and churn windows are summed up alike, per kind of window (the workload
-- id's first word), each kind's figures then taken from its own row.
CREATE OR REPLACE TABLE versions AS
WITH by_kind AS (
    SELECT machine, pooler_version, split_part(workload, '-', 1) AS kind,
           -- The start reading is taken once per pass, before the pass's first window: idle, no query yet.
           median(pooler_start_rss_bytes) / 1048576.0 AS start_rss_mib,
           median(pooler_start_pss_bytes) / 1048576.0 AS start_pss_mib,
           median(pooler_rss_peak_bytes) / 1048576.0 AS peak_rss_mib,
           median(pooler_pss_peak_bytes) / 1048576.0 AS peak_pss_mib,
           median(tps) FILTER (WHERE ok) AS tps,
           min(tps) FILTER (WHERE ok) AS tps_min,
           max(tps) FILTER (WHERE ok) AS tps_max,
           median(avg_connection_ms) FILTER (WHERE ok) AS connection_ms,
           count(*) FILTER (WHERE NOT ok) AS windows_failed
    FROM windows WHERE workload LIKE 'load-%' OR workload LIKE 'churn-%'
    GROUP BY machine, pooler_version, kind
), outcomes AS (
    SELECT machine, pooler_version,
           any_value(outcome) FILTER (WHERE max_prepared_statements = 0) AS prepared_0_outcome,
           any_value(outcome) FILTER (WHERE max_prepared_statements = 200) AS prepared_200_outcome,
           any_value(tps_median) FILTER (WHERE max_prepared_statements = 200) AS prepared_200_tps
    FROM prepared
    GROUP BY machine, pooler_version
), measured AS (
    SELECT DISTINCT machine, pooler_version FROM windows WHERE pooler_version IS NOT NULL
)
SELECT m.machine, m.pooler_version,
       o.prepared_0_outcome, o.prepared_200_outcome, o.prepared_200_tps,
       l.start_rss_mib, l.start_pss_mib, l.peak_rss_mib, l.peak_pss_mib,
       l.tps AS load_tps, l.windows_failed AS load_windows_failed,
       c.tps AS churn_tps, c.tps_min AS churn_tps_min, c.tps_max AS churn_tps_max,
       c.connection_ms AS churn_connection_ms, c.windows_failed AS churn_windows_failed
FROM measured m
LEFT JOIN outcomes o USING (machine, pooler_version)
LEFT JOIN by_kind l ON l.machine = m.machine AND l.pooler_version = m.pooler_version AND l.kind = 'load'
LEFT JOIN by_kind c ON c.machine = m.machine AND c.pooler_version = m.pooler_version AND c.kind = 'churn'
ORDER BY m.machine, string_split(m.pooler_version, '.')::INTEGER[];
