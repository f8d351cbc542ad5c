-- Facts of the Machines page and of every verdict table's column headers: what each machine measured, on
-- how many server cores, in which profile and when. Each `-- name:` query becomes a list of records in
-- build/data/facts/machines.json.

-- name: measured
SELECT machine, experiment, profile, windows, server_cores, first_window, last_window
FROM main.measured ORDER BY machine, experiment;

-- name: columns
-- One record per measured machine: the verdict tables' column headers, and what it did not run.
WITH experiments AS (SELECT DISTINCT experiment FROM main.measured)
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
