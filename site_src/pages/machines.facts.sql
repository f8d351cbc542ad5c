-- Facts of the Machines page and of every verdict table's column headers: what each machine measured, on
-- how many server cores, in which profile and when. Each `-- name:` query becomes a list of records in
-- build/data/facts/machines.json.

-- name: measured
SELECT machine, experiment, profile, windows, server_cores, first_window, last_window, pooler_versions,
       off_calibrations
FROM main.measured ORDER BY machine, experiment;

-- name: columns
-- One record per measured machine: the verdict tables' column headers, and what it did not run.
WITH experiments AS (SELECT experiment FROM main.experiments)
SELECT m.id AS machine, m.cores,
       coalesce(max(d.server_cores) FILTER (WHERE d.experiment = 'clients-sweep'), max(d.server_cores))
           AS server_cores,
       -- The least thorough profile any of its experiments ran: a verdict is only as firm as its data.
       CASE WHEN bool_or(d.profile = 'quick') THEN 'quick' WHEN bool_or(d.profile = 'tiny') THEN 'tiny'
            ELSE coalesce(any_value(d.profile), m.profile) END AS profile,
       bool_or(d.profile <> 'full') AS indicative,
       left(coalesce(max(d.last_window), ''), 10) AS date,
       count(DISTINCT d.experiment) AS experiments,
       string_agg(DISTINCT d.experiment, ', ' ORDER BY d.experiment) AS measured,
       (SELECT string_agg(e.experiment, ', ' ORDER BY e.experiment) FROM experiments e
        WHERE e.experiment NOT IN (SELECT experiment FROM main.measured x WHERE x.machine = m.id)) AS missing
FROM main.machines m LEFT JOIN main.measured d ON d.machine = m.id
WHERE NOT m.published
GROUP BY m.id, m.cores, m.profile
ORDER BY m.id;

-- name: comparison
-- Each measured machine against the others: its mixed-workload peak (absolute and per server core), its
-- calibration, and the same figures' medians over the other measured machines, for the page's sentence.
WITH cores AS (
    SELECT machine, coalesce(max(server_cores) FILTER (WHERE experiment = 'clients-sweep'), max(server_cores))
               AS server_cores,
           CASE WHEN bool_or(profile = 'quick') THEN 'quick' WHEN bool_or(profile = 'tiny') THEN 'tiny'
                ELSE any_value(profile) END AS profile,
           count(DISTINCT experiment) AS experiments
    FROM main.measured GROUP BY machine
), m AS (
    SELECT x.id AS machine, c.server_cores, c.profile, c.experiments, x.calibration_tps,
           k.peak_tps, k.peak_tps_min, k.peak_tps_max, k.peak_clients, k.peak_clients_per_core,
           k.peak_tps / k.server_cores AS peak_tps_per_core
    FROM main.machines x
    LEFT JOIN cores c ON c.machine = x.id
    LEFT JOIN clients_sweep.peaks k ON k.machine = x.id AND k.workload = 'mixed'
    WHERE NOT x.published
)
SELECT m.*,
       (SELECT count(*) FROM main.machines x WHERE NOT x.published) - 1 AS others,
       (SELECT median(o.peak_tps_per_core) FROM m o WHERE o.machine <> m.machine) AS others_tps_per_core,
       (SELECT median(o.peak_clients_per_core) FROM m o WHERE o.machine <> m.machine)
           AS others_clients_per_core,
       (SELECT median(o.calibration_tps) FROM m o WHERE o.machine <> m.machine) AS others_calibration_tps,
       (SELECT count(*) FROM main.experiments) AS all_experiments
FROM m ORDER BY machine;
