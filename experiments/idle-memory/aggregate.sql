-- idle-memory: what N idle connections cost the server, counted four ways.
-- Input: the view windows (results/*/idle-memory/*.csv, most thorough profile per machine); the mem_*
-- columns were read once all of a window's connections were connected and idle.

CREATE OR REPLACE TABLE points AS
SELECT
    machine, profile, clients,
    count(*) AS windows,
    count(*) FILTER (WHERE mem_backends = clients) AS windows_measured,
    median(mem_cgroup_usage_bytes) AS cgroup_usage_median,
    min(mem_cgroup_usage_bytes) AS cgroup_usage_min,
    max(mem_cgroup_usage_bytes) AS cgroup_usage_max,
    median(mem_cgroup_rss_bytes) AS cgroup_anon_median,
    median(mem_cgroup_cache_bytes) AS cgroup_cache_median,
    median(mem_cgroup_usage_bytes - mem_cgroup_cache_bytes) AS cgroup_noncache_median,
    min(mem_cgroup_usage_bytes - mem_cgroup_cache_bytes) AS cgroup_noncache_min,
    max(mem_cgroup_usage_bytes - mem_cgroup_cache_bytes) AS cgroup_noncache_max,
    median(mem_rss_sum_bytes) AS rss_sum_median,
    min(mem_rss_sum_bytes) AS rss_sum_min,
    max(mem_rss_sum_bytes) AS rss_sum_max,
    median(mem_pss_sum_bytes) AS pss_sum_median,
    median(mem_anon_rss_sum_bytes) AS anon_rss_sum_median,
    median(mem_rss_sum_bytes / clients) AS rss_per_backend,
    median(mem_pss_sum_bytes / clients) AS pss_per_backend,
    median(mem_anon_rss_sum_bytes / clients) AS anon_rss_per_backend
FROM windows
WHERE ok AND mem_backends = clients
GROUP BY machine, profile, clients;

-- Per pass: what one more idle connection adds, as the slope of each measure over N (least squares
-- over every N of the pass), so a constant (postmaster, shared_buffers) drops out.
CREATE OR REPLACE TABLE pass_slopes AS
SELECT machine, pass_no,
       count(*) AS points,
       regr_slope(mem_cgroup_usage_bytes, clients) AS cgroup_usage_per_conn,
       -- Usage less page cache: the cache (data files, WAL, shared buffers) moves with the server's
       -- I/O by tens of MiB between windows, which would drown a per-connection figure of ~1 MiB.
       regr_slope(mem_cgroup_usage_bytes - mem_cgroup_cache_bytes, clients) AS cgroup_noncache_per_conn,
       regr_slope(mem_cgroup_rss_bytes, clients) AS cgroup_anon_per_conn,
       regr_slope(mem_cgroup_cache_bytes, clients) AS cgroup_cache_per_conn,
       regr_slope(mem_rss_sum_bytes, clients) AS rss_sum_per_conn,
       regr_slope(mem_pss_sum_bytes, clients) AS pss_sum_per_conn,
       regr_slope(mem_anon_rss_sum_bytes, clients) AS anon_rss_per_conn,
       min(clients) AS min_clients, max(clients) AS max_clients
FROM windows
WHERE ok AND mem_backends = clients
GROUP BY machine, pass_no
HAVING count(DISTINCT clients) >= 2;

-- The honest per-connection cost and how far each per-process sum overstates it; medians of the
-- passes with their range.
CREATE OR REPLACE TABLE per_connection AS
SELECT machine,
       count(*) AS passes,
       any_value(min_clients) AS min_clients, any_value(max_clients) AS max_clients,
       median(cgroup_noncache_per_conn) AS cgroup_per_conn,
       min(cgroup_noncache_per_conn) AS cgroup_per_conn_min,
       max(cgroup_noncache_per_conn) AS cgroup_per_conn_max,
       median(cgroup_usage_per_conn) AS cgroup_usage_per_conn,
       min(cgroup_usage_per_conn) AS cgroup_usage_per_conn_min,
       max(cgroup_usage_per_conn) AS cgroup_usage_per_conn_max,
       median(cgroup_anon_per_conn) AS cgroup_anon_per_conn,
       median(cgroup_cache_per_conn) AS cgroup_cache_per_conn,
       median(rss_sum_per_conn) AS rss_per_conn,
       median(pss_sum_per_conn) AS pss_per_conn,
       median(anon_rss_per_conn) AS anon_rss_per_conn,
       median(rss_sum_per_conn) / median(cgroup_noncache_per_conn) AS rss_overstates,
       median(pss_sum_per_conn) / median(cgroup_noncache_per_conn) AS pss_over_cgroup,
       median(anon_rss_per_conn) / median(cgroup_noncache_per_conn) AS anon_rss_overstates,
       (max(cgroup_noncache_per_conn) - min(cgroup_noncache_per_conn)) / median(cgroup_noncache_per_conn)
           AS cgroup_pass_spread
FROM pass_slopes
GROUP BY machine;

-- A long form for the chart: each measure's median per client count, in MiB.
CREATE OR REPLACE TABLE measures AS
SELECT machine, clients, measure, mib FROM (
    SELECT machine, clients,
           cgroup_usage_median / 2^20 AS "cgroup usage",
           cgroup_noncache_median / 2^20 AS "cgroup usage less cache",
           cgroup_anon_median / 2^20 AS "cgroup anonymous (rss)",
           rss_sum_median / 2^20 AS "sum of RSS",
           pss_sum_median / 2^20 AS "sum of PSS",
           anon_rss_sum_median / 2^20 AS "sum of RssAnon"
    FROM points
) UNPIVOT (mib FOR measure IN ("cgroup usage", "cgroup usage less cache", "cgroup anonymous (rss)", "sum of RSS", "sum of PSS",
                              "sum of RssAnon"));
