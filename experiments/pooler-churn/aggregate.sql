-- pooler-churn: a new SCRAM connection per transaction, per target and client count, and the direction.
-- Input: the view windows (results/*/pooler-churn/*.csv, most thorough profile per machine).

CREATE OR REPLACE TABLE churn AS
SELECT machine, target, clients, windows, windows_ok, tps_median, tps_min, tps_max,
       connection_ms_median, connection_ms_min, connection_ms_max, errors,
       -- Whether pgbench, not the pooler, set the rate: the most of its cores it used in a pass.
       client_cpu_share_max AS client_cpu, windows_client_saturated > 0 AS client_saturated,
       client_budget_cores AS client_cores
FROM point_stats;

-- From the fewest to the most clients: rises, falls, or no measurable difference where the ranges overlap.
CREATE OR REPLACE TABLE churn_direction AS
SELECT lo.machine, lo.target, lo.clients AS clients_low, hi.clients AS clients_high,
       lo.tps_median AS tps_low, hi.tps_median AS tps_high,
       lo.windows_client_saturated > 0 OR hi.windows_client_saturated > 0 AS client_saturated,
       CASE WHEN hi.tps_min > lo.tps_max THEN 'rises'
            WHEN hi.tps_max < lo.tps_min THEN 'falls'
            ELSE 'no measurable difference' END AS direction
FROM point_stats lo JOIN point_stats hi ON hi.machine = lo.machine AND hi.target = lo.target
WHERE lo.clients = (SELECT min(clients) FROM point_stats p WHERE p.machine = lo.machine)
  AND hi.clients = (SELECT max(clients) FROM point_stats p WHERE p.machine = lo.machine)
  AND lo.tps_median IS NOT NULL AND hi.tps_median IS NOT NULL;
