-- connect-cost: held connections against a new connection per transaction, by authentication and
-- transport. Input: the view windows (results/*/connect-cost/*.csv, most thorough profile per machine).

-- Time per transaction as a client sees it: with -C pgbench's "latency average" leaves the connection
-- out, so the full cost is clients / tps (in ms), which includes connecting and authenticating.
CREATE OR REPLACE TABLE points AS
SELECT
    machine, profile, workload, transport, clients,
    windows, windows_ok, windows_client_saturated, tps_median, tps_min, tps_max,
    ms_per_tx_median, ms_per_tx_min, ms_per_tx_max, latency_avg_median,
    connection_ms_median, connection_ms_min, connection_ms_max,
    server_cpu_median, client_cpu_median, errors, client_cpu_share_max, client_budget_cores
FROM point_stats;

-- New against held, and SCRAM against trust, per machine, transport and client count.
CREATE OR REPLACE TABLE costs AS
SELECT
    h.machine, h.transport, h.clients,
    h.ms_per_tx_median                              AS held_ms,
    t.ms_per_tx_median                              AS new_trust_ms,
    s.ms_per_tx_median                              AS new_scram_ms,
    t.connection_ms_median                          AS trust_connection_ms,
    s.connection_ms_median                          AS scram_connection_ms,
    s.ms_per_tx_median / h.ms_per_tx_median         AS scram_over_held,
    ratio_low(s.ms_per_tx_min, s.ms_per_tx_max, h.ms_per_tx_min, h.ms_per_tx_max) AS scram_over_held_low,
    ratio_high(s.ms_per_tx_min, s.ms_per_tx_max, h.ms_per_tx_min, h.ms_per_tx_max) AS scram_over_held_high,
    t.ms_per_tx_median / h.ms_per_tx_median         AS trust_over_held,
    h.tps_median / s.tps_median                     AS held_tps_over_scram_tps,
    (s.connection_ms_median - t.connection_ms_median) / s.connection_ms_median AS auth_share_of_handshake,
    -- 1 - trust/SCRAM over the range the passes allow (its high end makes the share's low end).
    1 - ratio_high(t.connection_ms_min, t.connection_ms_max, s.connection_ms_min, s.connection_ms_max)
                                                    AS auth_share_low,
    1 - ratio_low(t.connection_ms_min, t.connection_ms_max, s.connection_ms_min, s.connection_ms_max)
                                                    AS auth_share_high,
    -- Whether pgbench set any of the three rates.
    h.windows_client_saturated + t.windows_client_saturated + s.windows_client_saturated > 0
                                                    AS client_saturated,
    greatest(h.client_cpu_share_max, t.client_cpu_share_max, s.client_cpu_share_max) AS client_cpu,
    h.client_budget_cores                           AS client_cores
FROM points h
JOIN points t ON t.machine = h.machine AND t.clients = h.clients AND t.workload = 'new-trust-' || h.transport
JOIN points s ON s.machine = h.machine AND s.clients = h.clients AND s.workload = 'new-scram-' || h.transport
WHERE h.workload = 'held-' || h.transport;
