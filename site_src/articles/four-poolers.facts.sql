-- Figures quoted by the article "Four poolers compared".
-- Each `-- name:` query becomes a list of records in build/data/facts/four-poolers.json
-- (a measured machine's rows of a query that names machines: facts/four-poolers/<machine>.json).

-- name: poolers
-- Which of the four poolers each machine ran, in which version (machine.yaml's, the one on its PATH; builds:
-- every version its rows ran, a staged build beside it), beside the version the source article ran.
WITH builds AS (
    SELECT r.machine, split_part(b, ' ', 1) AS pooler,
           list_sort(list_distinct(list(split_part(b, ' ', 2)))) AS builds
    FROM main.measured r, unnest(r.pooler_versions) AS u(b)
    GROUP BY ALL
)
SELECT v.machine, v.pooler, v.version, v.available, s.version AS seed_version, b.builds
FROM main.pooler_versions v
LEFT JOIN main.pooler_versions s ON s.machine = 'published-four-poolers' AND s.pooler = v.pooler
LEFT JOIN builds b ON b.machine = v.machine AND b.pooler = v.pooler
JOIN main.machines m ON m.id = v.machine
WHERE NOT m.published
ORDER BY v.machine, v.pooler;

-- name: memory
SELECT * FROM pooler_memory.memory ORDER BY machine, pooler, clients;

-- name: throughput
SELECT * FROM pooler_memory.throughput ORDER BY machine, clients, pooler;

-- name: side_by_side
-- Each pooler version measured on a machine, as the article draws memory and throughput side by side: the
-- resident memory of its whole process tree under load (at the client count where it held the most), and its
-- throughput at the source article's client count for its throughput comparison (the published set's
-- pooler-throughput rows: its pgbench -S -c), each the median of the passes with their range. A row that
-- recorded no version of its own takes machine.yaml's.
WITH source AS (
    SELECT min(clients) AS clients FROM main.published
    WHERE machine = 'published-four-poolers' AND experiment = 'pooler-throughput' AND workload <> 'direct'
), versioned AS (
    SELECT b.* REPLACE (coalesce(b.version, v.version) AS version)
    FROM pooler_memory.by_version b
    LEFT JOIN main.pooler_versions v ON v.machine = b.machine AND v.pooler = b.pooler AND v.available
), memory AS (
    -- Of equal medians, the most clients: a tie is decided the same way on every build.
    SELECT machine, pooler, version, max(rss_mib_median) AS rss_mib_median,
           arg_max(rss_mib_min, [rss_mib_median, clients]) AS rss_mib_min,
           arg_max(rss_mib_max, [rss_mib_median, clients]) AS rss_mib_max,
           arg_max(clients, [rss_mib_median, clients]) AS memory_clients
    FROM versioned WHERE rss_mib_median IS NOT NULL GROUP BY machine, pooler, version
), pooler_runs AS (
    SELECT machine, pooler, version, any_value(profile) AS profile, any_value(server_cores) AS server_cores
    FROM versioned GROUP BY machine, pooler, version
)
SELECT r.machine, r.pooler, r.version, r.profile, r.server_cores,
       m.memory_clients, m.rss_mib_median, m.rss_mib_min, m.rss_mib_max,
       t.clients AS tps_clients, t.tps_median, t.tps_min, t.tps_max,
       t.windows AS tps_windows, t.windows_ok AS tps_windows_ok
FROM pooler_runs r
LEFT JOIN memory m ON m.machine = r.machine AND m.pooler = r.pooler AND m.version IS NOT DISTINCT FROM r.version
LEFT JOIN versioned t ON t.machine = r.machine AND t.pooler = r.pooler AND t.version IS NOT DISTINCT FROM r.version
 AND t.clients = (SELECT clients FROM source)
ORDER BY r.machine, r.pooler, r.version;

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

-- name: odyssey_config
-- What the config writer did with each machine's Odyssey (main.odyssey_config): the version beside the seed's,
-- the logging buffer it bounded or that the version lacks, and whether the default config reserves prepared
-- statements.
SELECT o.machine, o.version, o.log_queue_depth, o.log_buffer, o.prepared_by_default, o.versions,
       s.version AS seed_version, s.log_buffer AS seed_log_buffer, s.prepared_by_default AS seed_prepared_by_default
FROM main.odyssey_config o LEFT JOIN main.odyssey_config s ON s.published
WHERE NOT o.published
ORDER BY o.machine;

-- name: odyssey_churn
-- Odyssey's churn against PgBouncer's and PgPool-II's at each client count on the same machine: the ratio of
-- the medians with the passes' range, and whether pgbench saturated its cores at either point (then both
-- figures are pgbench's, not the poolers').
SELECT o.machine, o.clients, x.target AS other, o.tps_median, x.tps_median AS other_tps_median,
       o.tps_median / x.tps_median AS ratio,
       ratio_low(o.tps_min, o.tps_max, x.tps_min, x.tps_max) AS ratio_low,
       ratio_high(o.tps_min, o.tps_max, x.tps_min, x.tps_max) AS ratio_high,
       o.client_saturated OR x.client_saturated AS client_saturated,
       greatest(o.client_cpu, x.client_cpu) AS client_cpu
FROM pooler_churn.churn o JOIN pooler_churn.churn x USING (machine, clients)
WHERE o.target = 'odyssey' AND x.target IN ('pgbouncer', 'pgpool') AND x.tps_median > 0
ORDER BY o.machine, o.clients, x.target;

-- name: odyssey_summary
-- One line per machine that ran Odyssey, for the article (every machine at once): its version and logging
-- buffer, its tree before the first query and at the fewest and most clients, the clients it served there,
-- pgbench's initial connection time at 100 clients beside PgBouncer's, its churn against PgBouncer's and
-- PgPool-II's at the most churning clients, and -M prepared with its default config and with support on.
WITH mem AS (
    SELECT machine, min(clients) AS clients_low, max(clients) AS clients_high,
           arg_min(rss_mib_median, clients) AS rss_low_mib, arg_max(rss_mib_median, clients) AS rss_high_mib,
           arg_max(clients_served_min, clients) AS served_high
    FROM pooler_memory.memory WHERE pooler = 'odyssey' GROUP BY machine
), churn_high AS (
    SELECT machine, arg_max(clients, clients) AS churn_clients
    FROM pooler_churn.churn WHERE target = 'odyssey' GROUP BY machine
)
SELECT c.machine, c.version, c.versions, c.log_buffer,
       s.rss_mib AS rss_start_mib, m.clients_low, m.rss_low_mib, m.clients_high, m.rss_high_mib, m.served_high,
       t.clients AS connect_clients, t.connection_ms_median, t.connection_ms_min, t.connection_ms_max,
       tb.connection_ms_median AS pgbouncer_connection_ms_median,
       h.churn_clients, co.tps_median AS churn_tps, cb.tps_median AS churn_pgbouncer_tps,
       cp.tps_median AS churn_pgpool_tps,
       coalesce(co.client_saturated, false) OR coalesce(cb.client_saturated, false)
           OR coalesce(cp.client_saturated, false) AS churn_client_saturated,
       c.prepared_by_default, pd.outcome AS prepared_default_outcome, pw.outcome AS prepared_support_outcome
FROM main.odyssey_config c
LEFT JOIN pooler_memory.memory_at_start s ON s.machine = c.machine AND s.pooler = 'odyssey'
LEFT JOIN mem m ON m.machine = c.machine
LEFT JOIN pooler_memory.throughput t ON t.machine = c.machine AND t.pooler = 'odyssey' AND t.clients = 100
LEFT JOIN pooler_memory.throughput tb ON tb.machine = c.machine AND tb.pooler = 'pgbouncer' AND tb.clients = 100
LEFT JOIN churn_high h ON h.machine = c.machine
LEFT JOIN pooler_churn.churn co ON co.machine = c.machine AND co.target = 'odyssey' AND co.clients = h.churn_clients
LEFT JOIN pooler_churn.churn cb ON cb.machine = c.machine AND cb.target = 'pgbouncer' AND cb.clients = h.churn_clients
LEFT JOIN pooler_churn.churn cp ON cp.machine = c.machine AND cp.target = 'pgpool' AND cp.clients = h.churn_clients
LEFT JOIN prepared_statements.protocols pd ON pd.machine = c.machine AND pd.pooler = 'odyssey' AND pd.protocol = 'prepared'
LEFT JOIN prepared_statements.protocols pw ON pw.machine = c.machine AND pw.pooler = 'odyssey-prepared'
    AND pw.protocol = 'prepared'
WHERE NOT c.published
  AND (s.machine IS NOT NULL OR m.machine IS NOT NULL OR h.machine IS NOT NULL OR pd.machine IS NOT NULL)
ORDER BY c.machine;

-- name: pgpool_versions
-- PgPool-II's versions on one machine (pgpool-versions): each version's tree before the first query and its
-- churn, a line per version.
SELECT * FROM pgpool_versions.versions ORDER BY machine, string_split(pooler_version, '.')::INTEGER[];

-- name: pgpool_versions_load
-- The same versions under select-only load: the tree, the server backends and the throughput at each client
-- count.
SELECT * FROM pgpool_versions.load ORDER BY machine, clients, string_split(pooler_version, '.')::INTEGER[];

-- name: pgpool_versions_summary
-- One line per machine that measured two PgPool-II versions, for the article (every machine at once): the
-- oldest and the newest, each one's tree before the first query and its throughput at the fewest clients,
-- with the newest over the oldest and the range the passes allow.
WITH ranked AS (
    SELECT *, string_split(pooler_version, '.')::INTEGER[] AS version_key FROM pgpool_versions.versions
), ends AS (
    SELECT machine, arg_min(pooler_version, version_key) AS old_version,
           arg_max(pooler_version, version_key) AS new_version
    FROM ranked GROUP BY machine HAVING count(*) >= 2
), few AS (
    SELECT machine, min(clients) AS clients FROM pgpool_versions.load GROUP BY machine
)
SELECT e.machine, e.old_version, e.new_version, s.version AS seed_version,
       o.start_rss_mib AS old_start_rss_mib, n.start_rss_mib AS new_start_rss_mib,
       n.start_rss_mib / o.start_rss_mib AS start_rss_ratio,
       ratio_low(n.start_rss_mib_min, n.start_rss_mib_max, o.start_rss_mib_min, o.start_rss_mib_max)
           AS start_rss_ratio_low,
       ratio_high(n.start_rss_mib_min, n.start_rss_mib_max, o.start_rss_mib_min, o.start_rss_mib_max)
           AS start_rss_ratio_high,
       o.start_processes AS old_start_processes, n.start_processes AS new_start_processes,
       f.clients AS few_clients, lo.tps_median AS old_tps, ln.tps_median AS new_tps,
       ln.tps_median / lo.tps_median AS tps_ratio,
       ratio_low(ln.tps_min, ln.tps_max, lo.tps_min, lo.tps_max) AS tps_ratio_low,
       ratio_high(ln.tps_min, ln.tps_max, lo.tps_min, lo.tps_max) AS tps_ratio_high
FROM ends e
JOIN pgpool_versions.versions o ON o.machine = e.machine AND o.pooler_version = e.old_version
JOIN pgpool_versions.versions n ON n.machine = e.machine AND n.pooler_version = e.new_version
JOIN few f ON f.machine = e.machine
LEFT JOIN main.pooler_versions s ON s.machine = 'published-four-poolers' AND s.pooler = 'pgpool'
LEFT JOIN pgpool_versions.load lo ON lo.machine = e.machine AND lo.pooler_version = e.old_version
    AND lo.clients = f.clients
LEFT JOIN pgpool_versions.load ln ON ln.machine = e.machine AND ln.pooler_version = e.new_version
    AND ln.clients = f.clients
ORDER BY e.machine;
