"""main.odyssey_config: what the config writer did with each machine's Odyssey, as data a page and a claim
can quote (the data stage calls `register_main_tables`, connlab.data.main_tables.register_pooler_tables).

Odyssey's defaults changed between the seed's 1.4.0 and the 1.5 releases: from 1.5.1 `log_async` preallocates
a logging buffer of `log_queue_depth` slots (about 31 MB at the default), which the harness bounds, and from
1.5.0 `pool_reserve_prepared_statement` is on by default, so the "default config" variant tracks prepared
statements. A memory figure or a prepared-statement verdict means nothing without those choices beside it.
They are derived here from the version each machine.yaml records and from the config writer itself
(config.py beside this file), never typed: one row per machine whose Odyssey ran, published folders included
(their version is the seed's).

The rows describe the config the writer produces for that version today; the windows do not record it. A
change to the writer's choices for a version already measured changes what these rows say of old results,
so such a change needs its results measured again.
"""

from __future__ import annotations

import duckdb

from connlab.analysis.bulk import insert_rows
from connlab.contract.poolers.features import parse_version
from connlab.errors import LabError
from connlab.poolers.odyssey import config

TABLE = "main.odyssey_config"
COLUMNS = (
    "machine VARCHAR, published BOOLEAN, version VARCHAR, log_queue_depth INTEGER, log_buffer VARCHAR, "
    "prepared_by_default BOOLEAN, versions VARCHAR"
)


def config_row(version: config.Version) -> tuple[int | None, str, bool]:
    """The logging buffer's slots (None where the version has no buffer), the choice in words, and whether
    the version's default config reserves prepared statements: what the writer does for that version."""
    depth = config.log_buffer_settings(version).get("log_queue_depth")
    return (
        None if depth is None else int(depth),  # type: ignore[call-overload]
        config.log_buffer_note(version),
        version >= config.PREPARED_DEFAULT_ON_SINCE,
    )


def versions_note(version: str, seed_versions: list[str]) -> str:
    """'Odyssey 1.5.1 here, 1.4.0 in the seed': the version difference a verdict states beside itself."""
    label = config.CONFIG.label
    if not seed_versions:
        return f"{label} {version} here; the seed names no version"
    seed = " or ".join(seed_versions)
    same = " (the same)" if seed_versions == [version] else ""
    return f"{label} {version} here, {seed} in the seed{same}"


def register_main_tables(con: duckdb.DuckDBPyConnection) -> None:
    """main.odyssey_config from main.pooler_versions and main.machines (register_machines runs first). A
    version the writer cannot read is refused in one line naming the machine."""
    con.execute(f"CREATE OR REPLACE TABLE {TABLE} ({COLUMNS})")
    rows = con.execute(
        "SELECT v.machine, m.published, v.version FROM main.pooler_versions v "
        "JOIN main.machines m ON m.id = v.machine WHERE v.pooler = ? AND v.available "
        "ORDER BY v.machine",
        [config.CONFIG.kind],
    ).fetchall()
    seed_versions = sorted({str(version) for _, published, version in rows if published})
    table: list[list[object]] = []
    for machine, published, version in rows:
        parsed = parse_version(str(version))
        if parsed is None:
            field = config.CONFIG.version_field
            raise LabError(f"results/{machine}/machine.yaml: {field}: no version in {version!r}")
        depth, buffer, prepared = config_row(parsed)
        note = None if published else versions_note(str(version), seed_versions)
        table.append([machine, bool(published), str(version), depth, buffer, prepared, note])
    insert_rows(con, TABLE, table)
