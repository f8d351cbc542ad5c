-- Figures quoted by the article "Four poolers compared".
-- Each `-- name:` query becomes a list of records in build/data/facts/four-poolers.json
-- (a measured machine's rows of a query that names machines: facts/four-poolers/<machine>.json).

-- name: poolers
-- Which of the four poolers each machine ran, in which version, beside the version the source article ran.
SELECT v.machine, v.pooler, v.version, v.available, s.version AS seed_version
FROM main.pooler_versions v
LEFT JOIN main.pooler_versions s ON s.machine = 'published-four-poolers' AND s.pooler = v.pooler
JOIN main.machines m ON m.id = v.machine
WHERE NOT m.published
ORDER BY v.machine, v.pooler;

-- name: memory
SELECT * FROM pooler_memory.memory ORDER BY machine, pooler, clients;

-- name: throughput
SELECT * FROM pooler_memory.throughput ORDER BY machine, clients, pooler;

-- name: throughput_pairs
SELECT * FROM pooler_memory.throughput_pairs ORDER BY machine, clients, pooler, other;

-- name: memory_at_start
SELECT * FROM pooler_memory.memory_at_start ORDER BY machine, pooler;

-- name: ceiling
SELECT * FROM pooler_ceiling.ceiling ORDER BY machine, pooler;

-- name: prepared
SELECT * FROM prepared_statements.protocols ORDER BY machine, pooler, protocol;

-- name: churn
SELECT * FROM pooler_churn.churn ORDER BY machine, target, clients;

-- name: churn_direction
SELECT * FROM pooler_churn.churn_direction ORDER BY machine, target;

-- name: sustained
SELECT * FROM pooler_sustained.sustained ORDER BY machine, pooler, pass_no;

-- name: rss_series
-- Every 10 s reading of the sustained windows, as the chart draws them: a line per pooler, and per pass
-- where a machine ran more than one (each pass starts its poolers afresh).
SELECT machine,
       CASE WHEN max(pass_no) OVER (PARTITION BY machine) > 1 THEN pooler || ', pass ' || pass_no
            ELSE pooler END AS pooler,
       seconds, rss_mib
FROM pooler_sustained.rss_series ORDER BY machine, pooler, seconds;

-- name: published
-- The seed's own figures, drawn beside the measured ones and never mixed into them.
SELECT experiment, workload, clients, metric, value, unit, note
FROM main.published WHERE machine = 'published-four-poolers' ORDER BY experiment, workload, metric;
