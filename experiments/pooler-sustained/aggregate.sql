-- pooler-sustained: the pooler's RSS every 10 s of one long window, and its start, warm-up and plateau.
-- Input: the view windows (results/*/pooler-sustained/*.csv, most thorough profile per machine).

CREATE OR REPLACE TABLE rss_series AS
SELECT machine, target AS pooler, pass_no, (step - 1) * 10 AS seconds,
       CAST(value AS BIGINT) / 1024.0 AS rss_mib
FROM (SELECT machine, target, pass_no, unnest(string_split(pooler_rss_series_kib, ';')) AS value,
             generate_subscripts(string_split(pooler_rss_series_kib, ';'), 1) AS step
      FROM windows WHERE pooler_rss_series_kib IS NOT NULL);

-- Start (the first reading), after warm-up and the end; drift is the change from warm-up to the end, as a
-- share of the warm-up figure. Warm-up is the seed's first five minutes, or a third of a shorter window.
CREATE OR REPLACE TABLE sustained AS
SELECT machine, pooler, pass_no,
       arg_min(rss_mib, seconds) AS rss_start_mib,
       arg_min(rss_mib, abs(seconds - least(300, max_seconds / 3.0))) AS rss_warm_mib,
       arg_max(rss_mib, seconds) AS rss_end_mib,
       (arg_max(rss_mib, seconds) - arg_min(rss_mib, abs(seconds - least(300, max_seconds / 3.0))))
         / arg_min(rss_mib, abs(seconds - least(300, max_seconds / 3.0))) AS drift_after_warmup
FROM (SELECT *, max(seconds) OVER (PARTITION BY machine, pooler, pass_no) AS max_seconds FROM rss_series)
GROUP BY machine, pooler, pass_no;

-- Per pooler, how many of its long windows ran to the end with every client (a pooler that died or
-- dropped its clients mid-window fails it), and the throughput of those that did, with the passes' range.
CREATE OR REPLACE TABLE outcomes AS
SELECT machine, target AS pooler, count(*) AS windows, count(*) FILTER (WHERE ok) AS windows_ok,
       median(tps) FILTER (WHERE ok) AS tps_median,
       min(tps) FILTER (WHERE ok) AS tps_min,
       max(tps) FILTER (WHERE ok) AS tps_max,
       string_agg(DISTINCT error, '; ') FILTER (WHERE NOT ok) AS errors
FROM windows
GROUP BY machine, target;
