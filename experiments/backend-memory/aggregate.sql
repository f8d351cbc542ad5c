-- backend-memory: what a backend holds while it runs queries, counted as RSS and as PSS (seed 002).
-- Input: the view windows (results/*/backend-memory/*.csv, most thorough profile per machine); the mem_*
-- columns were read halfway through each window, with every client connected.

-- Per window: the figures per backend, and how far RSS overstates PSS.
CREATE OR REPLACE TABLE per_window AS
SELECT machine, profile, pass_no, clients, server_cpu_budget AS server_cores,
       mem_rss_sum_bytes / mem_backends AS rss_per_backend,
       mem_pss_sum_bytes / mem_backends AS pss_per_backend,
       mem_anon_rss_sum_bytes / mem_backends AS anon_rss_per_backend,
       mem_rss_sum_bytes / nullif(mem_pss_sum_bytes, 0) AS rss_over_pss,
       client_saturated, client_cpu_cores / nullif(coalesce(client_cpu_budget, client_cores), 0) AS client_cpu,
       coalesce(client_cpu_budget, client_cores) AS client_cores
FROM windows
WHERE ok AND mem_backends = clients AND mem_pss_sum_bytes > 0;

-- Per machine: the medians over the passes and the passes' range.
CREATE OR REPLACE TABLE per_backend AS
SELECT machine, any_value(profile) AS profile, any_value(clients) AS clients,
       any_value(server_cores) AS server_cores, count(*) AS windows,
       median(rss_per_backend) / 1048576.0 AS rss_mib, median(pss_per_backend) / 1048576.0 AS pss_mib,
       median(anon_rss_per_backend) / 1048576.0 AS anon_rss_mib,
       median(rss_over_pss) AS rss_over_pss, min(rss_over_pss) AS rss_over_pss_min,
       max(rss_over_pss) AS rss_over_pss_max,
       bool_or(client_saturated) AS client_saturated, max(client_cpu) AS client_cpu,
       any_value(client_cores) AS client_cores
FROM per_window
GROUP BY machine;
