-- pooler-ceiling: clients served against clients sent, per pooler.
-- Input: the view windows (results/*/pooler-ceiling/*.csv, most thorough profile per machine).

CREATE OR REPLACE TABLE ceiling AS
SELECT machine, target AS pooler, clients,
       count(*) AS windows, count(*) FILTER (WHERE ok) AS windows_ok,
       median(clients_connected) AS clients_served_median,
       min(clients_connected) AS clients_served_min,
       max(clients_connected) AS clients_served_max,
       clients - median(clients_connected) AS clients_waiting_median,
       max(server_backends_max) AS server_backends_max,
       median(tps) FILTER (WHERE ok) AS tps_median,
       string_agg(DISTINCT error, '; ') FILTER (WHERE NOT ok) AS errors
FROM windows
GROUP BY machine, target, clients;
