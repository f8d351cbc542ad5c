"""The tables every experiment's SQL may read besides its own windows, in DuckDB's main schema: the machines
(each machine.yaml, read once and cached by file status), the pooler versions they record, the tables a
pooler's folder adds of its own, the published figures, the experiments' pool sizes, and which experiments
each machine measured."""

from __future__ import annotations

import importlib
import importlib.util
import ipaddress
import json
import math
from pathlib import Path

import duckdb

from connlab.analysis.bulk import insert_rows
from connlab.contract.cache import read_json, write_atomically
from connlab.contract.columns import PUBLISHED_FILE_NAME, PUBLISHED_TYPES
from connlab.contract.experiment import experiment_names, load_experiment
from connlab.contract.machine_schema import NOT_AVAILABLE, TIME_WAIT_S, MachineFile, parse_port_range
from connlab.contract.names import PUBLISHED_PREFIX
from connlab.contract.poolers.registry import CONFIGS, package_of
from connlab.contract.provenance import CALIBRATION_FLOOR, calibrations_agree
from connlab.contract.yaml_models import load_contributed_yaml
from connlab.data.experiment_tables import MEASURED_WINDOWS
from connlab.data.result_files import is_regular_file
from connlab.data.sql_text import sql_string
from connlab.errors import LabError
from connlab.paths import AGGREGATE_SQL_NAME, EXPERIMENTS_DIR, MACHINE_FILE_NAME, RESULTS_DIR

# A pooler's folder may add main tables of its own (what a page or a claim quotes of that pooler alone): its
# connlab/poolers/<kind>/facts.py, whose register_main_tables(con) the aggregation calls.
POOLER_FACTS_MODULE = "facts"
POOLER_FACTS_HOOK = "register_main_tables"


def _clean(value: object) -> object:
    """JSON-safe values: NaN becomes null, DuckDB's decimals and dates become plain numbers/strings."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, int | float | str | bool) or value is None:
        return value
    if isinstance(value, dict):  # machine.yaml's remote_server
        return {str(key): _clean(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_clean(item) for item in value]
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(value)


def load_machines(results_dir: Path = RESULTS_DIR, cache_file: Path | None = None) -> list[dict[str, object]]:
    """Every machine.yaml, as the tables and pages read it. With cache_file, a file whose status (time, size,
    inode) is unchanged since it was read is taken from there: parsing a thousand machines' files again was
    a twentieth of adding one machine to them."""
    cached = read_json(cache_file) if cache_file is not None else None
    known: dict[str, list[object]] = cached if isinstance(cached, dict) else {}
    entries: dict[str, list[object]] = {}
    for path in sorted(results_dir.glob(f"*/{MACHINE_FILE_NAME}")):
        if not is_regular_file(path):
            continue
        status = path.stat()
        signature = f"{status.st_mtime_ns} {status.st_size} {status.st_ino}"
        entry = known.get(str(path))
        if not (isinstance(entry, list) and len(entry) == 2 and entry[0] == signature):
            entry = [signature, _machine_of(path)]
        entries[str(path)] = entry
    if cache_file is not None and entries != known:
        write_atomically(cache_file, json.dumps(entries))
    return [entry[1] for entry in entries.values()]  # type: ignore[misc]


def _machine_of(path: Path) -> dict[str, object]:
    # libyaml: validation has read these files already, and one is read per machine. It may still be reading
    # this one, beside the aggregation: a text that would crash libyaml is refused (load_contributed_yaml).
    data = load_contributed_yaml(path.read_text(encoding="utf-8")) or {}
    data["id"] = path.parent.name
    data["published"] = path.parent.name.startswith(PUBLISHED_PREFIX)
    # As the cache gives it back: JSON's values, so that a machine read anew and one cached are equal.
    return json.loads(json.dumps({key: _clean(value) for key, value in data.items()}))


def _client_ports(machine: dict[str, object]) -> int | None:
    """How many local ports the client host's ip_local_port_range holds; None where it is not recorded
    (validation has checked its form)."""
    recorded = machine.get("ip_local_port_range")
    if recorded is None:
        return None
    low, high = parse_port_range(str(recorded))
    return high - low + 1


def _server_on_loopback(machine: dict[str, object]) -> bool:
    """Whether the client reached the server over loopback: always, but where a remote server (connlab
    run --server) was named by an address of another host."""
    remote = machine.get("remote_server")
    if not isinstance(remote, dict):
        return True
    host = str(remote.get("host", ""))
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: another host's, as far as anything here can tell
        return False


def register_machines(con: duckdb.DuckDBPyConnection, machines: list[dict[str, object]]) -> None:
    """main.machines: one row per results folder; server_cores is the server's CPU allocation; netem is
    whether network delay could be added there ("available" or why not; NULL where never probed);
    postgres_version is the machine's own PostgreSQL (a published article's: the version its seed ran);
    client_ports, tcp_tw_reuse and tcp_fin_timeout are the client host's (NULL where machine.yaml does not
    record them), time_wait_s how long Linux holds a closed socket's port; server_on_loopback whether the
    server ran on the client host, reached over loopback (a remote server named by a loopback address
    included)."""
    con.execute(
        "CREATE OR REPLACE TABLE main.machines (id VARCHAR, published BOOLEAN, cores DOUBLE, "
        "server_cores DOUBLE, calibration_tps DOUBLE, calibration_spread_tps DOUBLE, profile VARCHAR, "
        "netem VARCHAR, "
        "postgres_version VARCHAR, client_ports INTEGER, tcp_tw_reuse INTEGER, tcp_fin_timeout INTEGER, "
        "time_wait_s INTEGER, server_on_loopback BOOLEAN)"
    )
    rows = [
        [machine["id"], machine["published"], machine.get("cores"),
         machine.get("server_cores") or machine.get("cores"), machine.get("calibration_tps"),
         machine.get("calibration_spread_tps"), machine.get("profile"), machine.get("netem"),
         machine.get("postgres_version"),
         _client_ports(machine), machine.get("tcp_tw_reuse"), machine.get("tcp_fin_timeout"), TIME_WAIT_S,
         _server_on_loopback(machine)]
        for machine in machines
    ]  # fmt: skip
    insert_rows(con, "main.machines", rows)
    # main.pooler_versions: each pooler kind machine.yaml records, per machine, and whether it ran there (the
    # file says "not available on this machine" where its program was missing); facts: what else the file
    # records of how it ran, as the kind declares ("allocator: jemalloc ..." for pgcat), NULL where nothing.
    con.execute(
        "CREATE OR REPLACE TABLE main.pooler_versions (machine VARCHAR, pooler VARCHAR, version VARCHAR, "
        "available BOOLEAN, facts VARCHAR)"
    )
    kinds = [name.removesuffix("_version") for name in MachineFile.model_fields if name.endswith("_version")]
    versions = [
        [
            machine["id"],
            kind,
            str(machine[f"{kind}_version"]),
            str(machine[f"{kind}_version"]) != NOT_AVAILABLE,
            _pooler_facts(machine, kind),
        ]
        for machine in machines
        for kind in kinds
        if kind in CONFIGS and machine.get(f"{kind}_version") is not None
    ]
    insert_rows(con, "main.pooler_versions", versions)


def _pooler_facts(machine: dict[str, object], kind: str) -> str | None:
    """The facts machine.yaml records of how a pooler kind ran, beside its version ("allocator: ..."), or
    None."""
    config = CONFIGS[kind]
    recorded = [
        f"{fact}: {machine[config.fact_field(fact)]}"
        for fact in config.facts
        if machine.get(config.fact_field(fact)) is not None
    ]
    return "; ".join(recorded) or None


def register_pooler_tables(con: duckdb.DuckDBPyConnection) -> None:
    """The main tables each pooler's folder adds (POOLER_FACTS_MODULE), from main.machines and
    main.pooler_versions (register_machines runs first). A folder without that file adds none; one whose file
    lacks the hook is refused in one line."""
    for kind in CONFIGS:
        name = f"{package_of(kind)}.{POOLER_FACTS_MODULE}"
        if importlib.util.find_spec(name) is None:
            continue
        module = importlib.import_module(name)
        hook = getattr(module, POOLER_FACTS_HOOK, None)
        if not callable(hook):
            raise LabError(f"{module.__file__}: {POOLER_FACTS_HOOK}: missing, or not a function")
        hook(con)


def register_measured(con: duckdb.DuckDBPyConnection) -> None:
    """main.measured: which experiments each machine measured, in which profile, and when (first and last
    window), how many of its windows were client-bound, and the calibrations of its runs that lie off the
    machine's (off_calibrations): what the site says once where a machine lacks an experiment, and what a
    claim's verdict is checked against (connlab.data.claims)."""
    selects = [
        f"SELECT machine, {sql_string(name)} AS experiment, profile, windows, server_cores, first_window, "
        f"last_window, windows_client_saturated, steal_pct_max, cpu_pressure_pct_max, passes, "
        f"window_lengths_s, client_grid, pool_sizes, cpu_methods, pooler_versions, unsteady_points, "
        f"calibrations FROM {name.replace('-', '_')}.{MEASURED_WINDOWS}"
        for name in experiment_names()
        if (EXPERIMENTS_DIR / name / AGGREGATE_SQL_NAME).exists()
    ]
    union = (
        " UNION ALL ".join(selects)
        if selects
        else (
            "SELECT NULL::VARCHAR AS machine, NULL::VARCHAR AS experiment, NULL::VARCHAR AS profile, "
            "0 AS windows, NULL::DOUBLE AS server_cores, NULL::VARCHAR AS first_window, "
            "NULL::VARCHAR AS last_window, 0 AS windows_client_saturated, NULL::DOUBLE AS steal_pct_max, "
            "NULL::DOUBLE AS cpu_pressure_pct_max, NULL::BIGINT AS passes, "
            "NULL::INTEGER[] AS window_lengths_s, NULL::INTEGER[] AS client_grid, "
            "NULL::INTEGER[] AS pool_sizes, NULL::VARCHAR[] AS cpu_methods, "
            "NULL::VARCHAR[] AS pooler_versions, NULL::VARCHAR[] AS unsteady_points, "
            "NULL::STRUCT(tps DOUBLE, spread DOUBLE)[] AS calibrations WHERE false"
        )
    )
    con.execute(f"CREATE OR REPLACE TEMP TABLE measured_runs AS {union}")
    con.execute(
        "CREATE OR REPLACE TEMP TABLE off_calibrations (machine VARCHAR, experiment VARCHAR, tps DOUBLE)"
    )
    insert_rows(con, "off_calibrations", _off_calibrations(con))
    con.execute(
        "CREATE OR REPLACE TABLE main.measured AS SELECT r.* EXCLUDE (calibrations), "
        "coalesce(o.tps, []::DOUBLE[]) AS off_calibrations FROM measured_runs r LEFT JOIN "
        "(SELECT machine, experiment, list(tps ORDER BY tps) AS tps FROM off_calibrations GROUP BY ALL) o "
        "USING (machine, experiment)"
    )
    con.execute("DROP TABLE measured_runs; DROP TABLE off_calibrations")
    # Every experiment of the project, measured anywhere or not: what a machine did not run is named
    # against this list.
    con.execute("CREATE OR REPLACE TABLE main.experiments (experiment VARCHAR)")
    insert_rows(con, "main.experiments", [(name,) for name in experiment_names()])


def _off_calibrations(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, float]]:
    """Per machine and experiment, each calibration of the runs its figures come from that lie further from
    machine.yaml's than the calibration's spread allows (connlab.contract.provenance): this machine under
    other load then, or another machine. Such a run is kept and the verdicts that read it are marked
    (connlab.data.claims), not refused: a quiet virtual machine's calibration moves further than that
    within an hour, with nothing else running."""
    found = []
    # Only the records with a run further off than the least tolerance reach Python, which judges them by
    # the rule itself: every aggregation makes this table, over every machine and experiment.
    for machine, experiment, calibrations, reference, spread in con.execute(
        "SELECT r.machine, r.experiment, r.calibrations, m.calibration_tps, m.calibration_spread_tps "
        "FROM measured_runs r JOIN main.machines m ON m.id = r.machine "
        "WHERE m.calibration_tps IS NOT NULL AND len(list_filter(r.calibrations, lambda run: "
        f"abs(run.tps - m.calibration_tps) > {CALIBRATION_FLOOR!r} * m.calibration_tps)) > 0"
    ).fetchall():
        found.extend(
            (str(machine), str(experiment), run["tps"])
            for run in calibrations
            if not calibrations_agree(reference, spread, run["tps"], run["spread"])
        )
    return found


def register_pooler_settings(con: duckdb.DuckDBPyConnection) -> None:
    """main.pooler_settings: each experiment's poolers' pool sizes, which its rows do not repeat (a claim
    about admission control compares the backends the server saw with the pool it was given)."""
    con.execute(
        "CREATE OR REPLACE TABLE main.pooler_settings (experiment VARCHAR, pool_size INTEGER, pooler VARCHAR)"
    )
    # In one insert: a statement per pooler is a commit each, paid on every build.
    rows = [
        (name, pooler.pool_size, pooler.instance)
        for name in experiment_names()
        for pooler in load_experiment(name).poolers
    ]
    insert_rows(con, "main.pooler_settings", rows)


def register_published(con: duckdb.DuckDBPyConnection, results_dir: Path) -> None:
    """main.published: every published figure, in long form, with its folder as the machine."""
    found = results_dir.glob(f"{PUBLISHED_PREFIX}*/{PUBLISHED_FILE_NAME}")
    files = sorted(path for path in found if is_regular_file(path))
    columns = ", ".join(PUBLISHED_TYPES)
    if files:
        file_list = ", ".join(sql_string(str(path)) for path in files)
        types = ", ".join(f"{sql_string(name)}: {sql_string(kind)}" for name, kind in PUBLISHED_TYPES.items())
        source = (
            f"SELECT regexp_extract(filename, '([^/]+)/[^/]+$', 1) AS machine, {columns} "
            f"FROM read_csv([{file_list}], header = true, union_by_name = true, types = {{{types}}}, "
            f"nullstr = '', filename = true)"
        )
    else:
        typed = ", ".join(f"NULL::{kind} AS {name}" for name, kind in PUBLISHED_TYPES.items())
        source = f"SELECT NULL::VARCHAR AS machine, {typed} WHERE false"
    con.execute(f"CREATE OR REPLACE TABLE main.published AS {source}")
    # A seed's operating point per server core of its machine, so that its figure can be set beside
    # ours at the same clients per core (main.machines is registered first).
    con.execute(
        "CREATE OR REPLACE VIEW main.published_per_core AS SELECT p.*, m.server_cores, p.clients / "
        "m.server_cores AS clients_per_core FROM main.published p JOIN main.machines m ON m.id = p.machine"
    )
