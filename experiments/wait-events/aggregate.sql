-- wait-events: what active client backends were doing, near the peak and far past it.
-- Input: the view windows (results/*/wait-events/*.csv, most thorough profile per machine); each
-- window's wait_events cell holds state=count pairs summed over its 100 ms polls.

CREATE OR REPLACE TABLE points AS
SELECT
    machine, profile, workload, clients, clients_per_core,
    windows, windows_ok, tps_median, tps_min, tps_max, latency_avg_median, polls,
    -- Whether pgbench set the point's rate: the most of its cores it used in a pass.
    windows_client_saturated > 0 AS client_saturated, client_cpu_share_max AS client_cpu,
    client_budget_cores AS client_cores
FROM point_stats;

-- One row per window and state (running, or a wait event as Type:Name) with its sample count.
CREATE OR REPLACE TABLE window_states AS
WITH pairs AS (
    SELECT machine, workload, clients, pass_no, unnest(string_split(wait_events, ';')) AS pair
    FROM windows
    WHERE ok AND wait_events IS NOT NULL
)
SELECT machine, workload, clients, pass_no,
       split_part(pair, '=', 1) AS state,
       CAST(split_part(pair, '=', 2) AS BIGINT) AS samples
FROM pairs;

-- Per point: every state's share of the active-backend samples, pooled over the passes, with the
-- range of the per-pass shares (a state a pass never saw counts as 0 there).
CREATE OR REPLACE TABLE states AS
WITH totals AS (
    SELECT machine, workload, clients, pass_no, sum(samples) AS pass_samples
    FROM window_states GROUP BY ALL
),
grid AS (
    SELECT DISTINCT s.machine, s.workload, s.clients, s.state, t.pass_no, t.pass_samples
    FROM window_states s
    JOIN totals t USING (machine, workload, clients)
),
shares AS (
    SELECT g.machine, g.workload, g.clients, g.state, g.pass_no,
           coalesce(w.samples, 0) AS samples, g.pass_samples,
           coalesce(w.samples, 0) / g.pass_samples AS pass_share
    FROM grid g
    LEFT JOIN window_states w USING (machine, workload, clients, state, pass_no)
)
SELECT machine, workload, clients, state,
       CASE WHEN state = 'running' THEN 'running' ELSE split_part(state, ':', 1) END AS state_type,
       sum(samples) AS samples,
       sum(samples) / sum(pass_samples) AS share,
       min(pass_share) AS share_min,
       max(pass_share) AS share_max,
       sum(pass_samples) AS point_samples,
       rank() OVER (PARTITION BY machine, workload, clients ORDER BY sum(samples) DESC) AS state_rank
FROM shares
GROUP BY machine, workload, clients, state;

-- Near the peak (fewest clients measured) against far past it (most clients): how the running share
-- changes and which wait grew most.
CREATE OR REPLACE TABLE near_and_far AS
WITH ends AS (
    SELECT machine, workload, min(clients) AS near_clients, max(clients) AS far_clients
    FROM points WHERE windows_ok > 0 GROUP BY ALL
)
SELECT e.machine, e.workload, e.near_clients, e.far_clients,
       pn.clients_per_core AS near_clients_per_core, pf.clients_per_core AS far_clients_per_core,
       coalesce(rn.share, 0) AS near_running_share,
       coalesce(rf.share, 0) AS far_running_share,
       (SELECT state FROM states s WHERE s.machine = e.machine AND s.workload = e.workload
          AND s.clients = e.far_clients AND s.state <> 'running' ORDER BY s.samples DESC LIMIT 1) AS far_top_wait,
       (SELECT s.share FROM states s WHERE s.machine = e.machine AND s.workload = e.workload
          AND s.clients = e.far_clients AND s.state <> 'running' ORDER BY s.samples DESC LIMIT 1) AS far_top_wait_share,
       pn.polls AS near_polls, pf.polls AS far_polls,
       (SELECT max(point_samples) FROM states s WHERE s.machine = e.machine AND s.workload = e.workload
          AND s.clients = e.near_clients) AS near_samples,
       (SELECT max(point_samples) FROM states s WHERE s.machine = e.machine AND s.workload = e.workload
          AND s.clients = e.far_clients) AS far_samples,
       pn.client_saturated OR pf.client_saturated AS client_saturated,
       greatest(pn.client_cpu, pf.client_cpu) AS client_cpu, pn.client_cores
FROM ends e
JOIN points pn ON pn.machine = e.machine AND pn.workload = e.workload AND pn.clients = e.near_clients
JOIN points pf ON pf.machine = e.machine AND pf.workload = e.workload AND pf.clients = e.far_clients
LEFT JOIN states rn ON rn.machine = e.machine AND rn.workload = e.workload AND rn.clients = e.near_clients
    AND rn.state = 'running'
LEFT JOIN states rf ON rf.machine = e.machine AND rf.workload = e.workload AND rf.clients = e.far_clients
    AND rf.state = 'running';
