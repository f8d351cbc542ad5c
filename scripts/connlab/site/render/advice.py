"""Each article's "What to do": its answer for a server-core count the reader picks, from the measured data.

A reader asks in their own units (a server with 8 cores, 200 Node clients), not in the machines measured.
For each core count a reader may pick (CORE_CHOICES) the answer is either measured (machines with that many
server cores measured it) or taken from the machines nearest in core count: a figure per server core (a pool
size, a peak's clients) is scaled by the cores, a ratio (pooled ÷ direct, a share of the peak) is quoted as
measured. Each answer carries its basis in one line that names its machines with their server cores, and
says "indicative" where only quick-profile runs stand behind it.

Reads what the renderer already has: the claims' per-machine values (connlab.data.claims), each machine's
one pool size (pool-sizes.json, connlab.data.answers), the Machines page's columns (server cores, profile),
Four poolers' facts whole (its answer, and the largest crowd PgBouncer served, which the configuration's
max_client_conn and max_prepared_statements rest on) and the article's own facts. Writes nothing: the
renderer hands the result to _what_to_do.md.j2. Words of the answers are the template's; every figure is
computed here.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable

from connlab.contract.poolers.features import (
    PGBOUNCER_PREPARED_SINCE,
    PREPARED_IN_TRANSACTION_MODE,
    SUPPORTED,
    parse_version,
    pgbouncer_support,
    version_label,
)
from connlab.contract.poolers.registry import pooler_label
from connlab.poolers.pgbouncer.config import PREPARED_CACHE_SIZE

# The server-core counts a reader may pick, and the one shown first (and without JavaScript, the one whose
# configuration is written out).
CORE_CHOICES = (1, 2, 4, 8, 16, 32, 64)
DEFAULT_CORES = 8
# max_connections = the pool + PostgreSQL's superuser_reserved_connections default + a margin for the
# sessions that are not the application's (monitoring, migrations, a psql). The project's rule, not a
# measurement: no experiment measures the sessions beside the application's.
SUPERUSER_RESERVED = 3
ADMIN_MARGIN = 10
# max_client_conn in the fragment is the most clients measured through PgBouncer with every window finished
# (so every client connected and was served): the project's rule, what the data supports, not a limit found.
# Read from Four poolers' facts, the experiments that load PgBouncer with crowds: (fact, its pooler column).
CROWD_FACTS = (("memory", "pooler"), ("throughput", "pooler"), ("ceiling", "pooler"))
PGBOUNCER = "pgbouncer"
# Machines named in a basis line; past this many, the count stands for the rest.
NAMED_UP_TO = 4

# The claims each article's answer reads, by the role they play: (the article whose claims file holds it, its
# id in connlab.data.claims).
TOO_MANY = {
    "peak": ("too-many-connections", "peak-four-per-core"),
    "share": ("too-many-connections", "gentle-decline-furthest"),
    "latency": ("too-many-connections", "latency-tenfold-furthest"),
}
TRADE = {
    "per_request": ("pgbouncer-trade", "churn-pooler-faster"),
    "steady": ("too-many-connections", "pooler-slows-held-connections"),
    "crowd": ("pgbouncer-trade", "direct-beats-pooled-at-200"),
    "crowd_per_core": ("pgbouncer-trade", "crowd-pooled-read-write"),
}
# The articles whose claims the answers read, for the renderer to hand over.
CLAIM_ARTICLES = ("too-many-connections", "pgbouncer-trade")
# The articles that open with "What to do"; Four poolers reads its facts whole (every machine's rows).
ADVISED_ARTICLES = ("too-many-connections", "pool-sizing", "pgbouncer-trade", "four-poolers")
WHOLE_FACTS = ("four-poolers",)
# The facts every article's configuration reads whole: the crowds PgBouncer served (pgbouncer_crowd).
POOLER_FACTS = "four-poolers"
PREPARED_SINCE = ".".join(str(part) for part in PGBOUNCER_PREPARED_SINCE)
MEASURED_VERDICTS = ("holds", "does not hold", "inconclusive", "cannot be evaluated")


def machine_heads(columns: list[dict]) -> dict[str, dict]:
    """Each measured machine's server cores and whether its runs are quick-profile only (the Machines facts'
    columns)."""
    return {
        str(c["machine"]): {"server_cores": float(c["server_cores"]), "indicative": bool(c.get("indicative"))}
        for c in columns
        if c.get("server_cores")
    }


def cores_label(cores: float) -> str:
    """'1 server core', '8 server cores', '0.5 server cores'."""
    shown = f"{cores:g}"
    return f"{shown} server core" if cores == 1 else f"{shown} server cores"


def machine_label(machine: str, cores: float) -> str:
    return f"{machine}, {cores_label(cores)}"


def readings(claim: dict | None, heads: dict[str, dict]) -> list[dict]:
    """A claim's measured machines' values with their server cores (published sets are the source's, never
    the reader's basis)."""
    found = []
    for cell in (claim or {}).get("verdicts", []):
        machine = str(cell["machine"])
        if machine not in heads or cell.get("value") is None or cell.get("verdict") not in MEASURED_VERDICTS:
            continue
        found.append(
            {
                "machine": machine,
                "value": float(cell["value"]),
                "low": cell.get("low"),
                "high": cell.get("high"),
                "versions": ((cell.get("conditions") or {}).get("poolers") or {}),
                **heads[machine],
            }
        )
    return found


def nearest_cores(measured: Iterable[float], cores: int) -> float:
    """The measured core count nearest the reader's, by ratio (8 is as far from 4 as 16); a tie goes to the
    larger, which is nearer a production server."""
    return min(set(measured), key=lambda k: (abs(math.log(k / cores)), -k))


def basis(found: list[dict], cores: int, scaled: bool) -> dict | None:
    """The machines that answer for `cores` server cores: those with that many, else those at the nearest
    measured core count. scaled: the figure is per server core and is multiplied by the reader's cores."""
    if not found:
        return None
    at = [r for r in found if r["server_cores"] == cores]
    kind = "measured"
    if not at:
        near = nearest_cores((r["server_cores"] for r in found), cores)
        at = [r for r in found if r["server_cores"] == near]
        kind = "scaled" if scaled else "nearest"
    at = sorted(at, key=lambda r: r["machine"])
    indicative = all(r["indicative"] for r in at)
    names = "; ".join(machine_label(r["machine"], r["server_cores"]) for r in at[:NAMED_UP_TO])
    if len(at) > NAMED_UP_TO:
        names += f"; and {len(at) - NAMED_UP_TO} more"
    count = f"{len(at)} machine" + ("s" if len(at) != 1 else "")
    near = at[0]["server_cores"]
    if kind == "measured":
        line = f"measured on {count} with {cores_label(cores)} ({names})"
    elif kind == "scaled":
        line = f"scaled per core from the machines measured ({names}; {nearest_text(near)})"
    else:
        line = f"as measured on the machines nearest in cores ({names}; {nearest_text(near)})"
    if indicative:
        line += ", indicative (quick runs only)"
    # A peak its measured neighbours do not place (connlab.data.answers.pool_size): where it may lie.
    # Named as the machines are, up to NAMED_UP_TO: past them, how many more (their pages say where).
    gaps = [f"{machine_label(r['machine'], r['server_cores'])}: {r['gap']}" for r in at if r.get("gap")]
    if gaps:
        more = f"; and {len(gaps) - NAMED_UP_TO} more" if len(gaps) > NAMED_UP_TO else ""
        line += "; the peak is not placed (" + "; ".join(gaps[:NAMED_UP_TO]) + more + ")"
    return {
        "kind": kind,
        "line": line,
        "indicative": indicative,
        "machines": [{"machine": r["machine"], "server_cores": r["server_cores"]} for r in at],
        "value": statistics.median(r["value"] for r in at),
        "low": min(_bound(r, "low") for r in at),
        "high": max(_bound(r, "high") for r in at),
        "versions": versions_measured(at),
    }


def versions_measured(at: list[dict]) -> list[str]:
    """The pooler versions the basis machines ran, as the page names them ("PgBouncer 1.18.0"); where they
    ran different versions, each with its machines, so that the reader knows which version a figure is
    from."""
    by_label: dict[str, list[str]] = {}
    for r in at:
        for pooler, version in sorted(r["versions"].items()):
            by_label.setdefault(pooler_label(pooler, version), []).append(r["machine"])
    if len(by_label) <= 1:
        return sorted(by_label)
    return [f"{label} on {', '.join(machines)}" for label, machines in sorted(by_label.items())]


def nearest_text(near: float) -> str:
    return f"the nearest measured core count is {near:g}"


def _bound(reading: dict, side: str) -> float:
    value = reading.get(side)
    return float(value) if value is not None else reading["value"]


def decision(figure: dict | None) -> str:
    """'faster', 'slower' or 'no measurable difference': a pooled ÷ direct figure whose passes' range lies
    wholly above or below 1."""
    if figure is None:
        return "not measured"
    if figure["low"] > 1:
        return "faster"
    if figure["high"] < 1:
        return "slower"
    return "no measurable difference"


# -- pool sizing ------------------------------------------------------------------------------------------
def pool_per_core(pool_sizes: dict, heads: dict[str, dict]) -> list[dict]:
    """Each measured machine's one pool size (connlab.data.answers' reconciled choice) per server core."""
    found = []
    for machine, lead in sorted(pool_sizes.items()):
        if machine not in heads or not lead.get("pool_size"):
            continue
        cores = heads[machine]["server_cores"]
        found.append(
            {
                "machine": machine,
                "value": lead["pool_size"] / cores,
                "low": lead.get("low", lead["pool_size"]) / cores,
                "high": lead.get("high", lead["pool_size"]) / cores,
                "versions": {},
                "pool_size": lead["pool_size"],
                "gap": lead.get("gap"),
                **heads[machine],
            }
        )
    return found


def pgbouncer_crowd(pooler_facts: dict, heads: dict[str, dict]) -> dict | None:
    """The most clients measured through PgBouncer with every window of the point finished and every client
    served, with the machine and the PgBouncer version that served them (the row's own version where it has
    one, else the one the machine's machine.yaml recorded). On a tie in clients, the newest version: what
    the fragment's max_prepared_statements may rest on."""
    recorded = {
        str(r["machine"]): str(r["version"])
        for r in pooler_facts.get("poolers", [])
        if r.get("pooler") == PGBOUNCER and r.get("available")
    }
    found = []
    for fact, column in CROWD_FACTS:
        for r in pooler_facts.get(fact, []):
            machine = str(r.get("machine"))
            if machine not in heads or r.get(column) != PGBOUNCER or not r.get("clients"):
                continue
            clients = int(r["clients"])
            served = r.get("clients_served_min")
            if not r.get("windows") or r.get("windows_ok") != r["windows"]:
                continue
            if served is not None and served < clients:
                continue
            version = parse_version(str(r.get("pooler_version") or r.get("version") or "")) or parse_version(
                recorded.get(machine, "")
            )
            if version is None:
                continue
            found.append((clients, version, machine, fact))
    if not found:
        return None
    clients, version, machine, fact = max(found, key=lambda f: (f[0], f[1], f[2]))
    return {
        "clients": clients,
        "version": version_label(version),
        "machine": machine_label(machine, heads[machine]["server_cores"]),
        "indicative": heads[machine]["indicative"],
        "fact": fact,
    }


def configuration(pool: int, crowd: dict | None) -> dict:
    """The settings that follow from a pool size: pgbouncer.ini, max_connections, application pools. The
    fragment's PgBouncer figures rest on the crowd (pgbouncer_crowd): max_client_conn is its clients, and
    max_prepared_statements is written only where the version that served it has the setting."""
    version = crowd["version"] if crowd else None
    prepared = version is not None and pgbouncer_support(PREPARED_IN_TRANSACTION_MODE, version) == SUPPORTED
    ini = ["[pgbouncer]", "pool_mode = transaction", f"default_pool_size = {pool}"]
    if crowd:
        ini.append(f"max_client_conn = {crowd['clients']}")
    if prepared:
        ini.append(f"max_prepared_statements = {PREPARED_CACHE_SIZE}")
    return {
        "pool": pool,
        "max_connections": pool + SUPERUSER_RESERVED + ADMIN_MARGIN,
        "pgbouncer_ini": "\n".join(ini),
        "max_client_conn": crowd["clients"] if crowd else None,
        "crowd": crowd,
        "pgbouncer_version": version,
        "prepared_setting": prepared,
        "prepared_cache": PREPARED_CACHE_SIZE,
        "prepared_since": PREPARED_SINCE,
        "node": f"new Pool({{ max: {pool} }})",
        "hikari": f"maximumPoolSize={pool}",
        "sqlalchemy": f"create_engine(url, pool_size={pool}, max_overflow=0)",
    }


def pool_sizing(pool_sizes: dict, heads: dict[str, dict], crowd: dict | None) -> list[dict]:
    found = pool_per_core(pool_sizes, heads)
    rows = []
    for cores in CORE_CHOICES:
        base = basis(found, cores, scaled=True)
        if base is None:
            continue
        pool = max(1, round(base["value"] * cores))
        rows.append({"cores": cores, "per_core": base["value"], "basis": base, **configuration(pool, crowd)})
    return rows


# -- too many connections ---------------------------------------------------------------------------------
def furthest_per_core(normalised: list[dict], workload: str = "mixed") -> dict[str, float]:
    """Each machine's furthest point measured, in clients per server core (the curve the far-side claims
    read)."""
    far: dict[str, float] = {}
    for row in normalised:
        if row.get("workload") == workload and not row.get("published") and row.get("clients_per_core"):
            machine = str(row["machine"])
            far[machine] = max(far.get(machine, 0.0), float(row["clients_per_core"]))
    return far


def too_many_connections(
    claims: dict[tuple[str, str], dict], heads: dict[str, dict], facts: dict, pool_rows: list[dict]
) -> list[dict]:
    """Where throughput peaks, scaled per core, and what the far side costs, quoted as measured; the
    configuration is Pool sizing's (one pool size per machine, everywhere)."""
    pools = {row["cores"]: row for row in pool_rows}
    peak = readings(claims.get(TOO_MANY["peak"]), heads)
    share = readings(claims.get(TOO_MANY["share"]), heads)
    latency = readings(claims.get(TOO_MANY["latency"]), heads)
    far = furthest_per_core(facts.get("normalised", []))
    far_found = [
        {**r, "value": far[r["machine"]], "low": None, "high": None} for r in share if r["machine"] in far
    ]
    rows = []
    for cores in CORE_CHOICES:
        base = basis(peak, cores, scaled=True)
        if base is None:
            continue
        share_base, latency_base = basis(share, cores, False), basis(latency, cores, False)
        far_base = basis(far_found, cores, scaled=True)
        rows.append(
            {
                "cores": cores,
                "per_core": base["value"],
                "peak_clients": max(1, round(base["value"] * cores)),
                "basis": base,
                "share": share_base,
                "latency": latency_base,
                "far_per_core": far_base["value"] if far_base else None,
                "far_clients": round(far_base["value"] * cores) if far_base else None,
                "share_label": (claims.get(TOO_MANY["share"]) or {}).get("value_label"),
                "latency_label": (claims.get(TOO_MANY["latency"]) or {}).get("value_label"),
                "pool": pools.get(cores),
            }
        )
    return rows


# -- PgBouncer's trade ------------------------------------------------------------------------------------
def pgbouncer_trade(
    claims: dict[tuple[str, str], dict], pool_rows: list[dict], heads: dict[str, dict]
) -> list[dict]:
    """How the application connects decides: a new connection per request, a few steady clients, a crowd.
    Each figure is pooled ÷ direct as measured (not scaled); the pool comes from Pool sizing's rows."""
    pools = {row["cores"]: row for row in pool_rows}
    found = {role: readings(claims.get(claim_id), heads) for role, claim_id in TRADE.items()}
    unsettled = {role: undecided(claims.get(claim_id), heads) for role, claim_id in TRADE.items()}
    rows = []
    for cores in CORE_CHOICES:
        figures = {}
        for role, claim_id in TRADE.items():
            base = basis(found[role], cores, scaled=False)
            if base is not None:
                label = (claims.get(claim_id) or {}).get("value_label")
                figures[role] = {**base, "label": label, "decision": decision(base)}
        if not figures and cores not in pools:
            continue
        # A way of connecting no machine decided is said, with why, rather than left off the list.
        open_roles = {role: cells for role, cells in unsettled.items() if cells and role not in figures}
        rows.append({"cores": cores, "figures": figures, "pool": pools.get(cores), "undecided": open_roles})
    return rows


def undecided(claim: dict | None, heads: dict[str, dict]) -> list[dict]:
    """The measured machines whose points could not decide a claim, each with the reason in words (a point
    mostly spent connecting, a client-bound rate): what the answer says where no machine gives a figure."""
    return [
        {"machine": machine_label(str(cell["machine"]), heads[str(cell["machine"])]["server_cores"]),
         "reason": str(cell["reason"])}
        for cell in (claim or {}).get("verdicts", [])
        if str(cell["machine"]) in heads and cell.get("value") is None and cell.get("reason")
        and cell.get("verdict") == "cannot be evaluated"
    ]  # fmt: skip


# -- four poolers -----------------------------------------------------------------------------------------
def four_poolers(facts: dict, heads: dict[str, dict]) -> dict:
    """A recommendation per constraint, each with the version measured and the machines with their cores."""
    versions = {
        (str(r["machine"]), str(r["pooler"])): str(r["version"])
        for r in facts.get("poolers", [])
        if r.get("available") and str(r["machine"]) in heads
    }

    def who(machine: str, pooler: str) -> dict:
        version = versions.get((machine, pooler.removesuffix("-prepared")))
        return {
            "pooler": pooler,
            "version": version or "version not recorded",
            # As the page names it, with the version measured: "PgBouncer 1.18.0"; direct is direct.
            "label": pooler_label(
                pooler, version or ("(version not recorded)" if pooler != "direct" else None)
            ),
            "machine": machine_label(machine, heads[machine]["server_cores"]),
            "indicative": heads[machine]["indicative"],
        }

    measured = [r for r in facts.get("memory_at_start", []) if str(r["machine"]) in heads]
    at_start = sorted(
        (
            {**who(str(r["machine"]), str(r["pooler"])), "mib": r["rss_mib"], "processes": r["processes"]}
            for r in measured
        ),
        key=lambda r: r["mib"],
    )
    loaded: dict[tuple[str, str], float] = {}
    for r in facts.get("memory", []):
        if str(r["machine"]) in heads and r.get("rss_mib_median") is not None:
            key = (str(r["machine"]), str(r["pooler"]))
            loaded[key] = max(loaded.get(key, 0.0), float(r["rss_mib_median"]))
    under_load = sorted(({**who(m, p), "mib": mib} for (m, p), mib in loaded.items()), key=lambda r: r["mib"])
    prepared = [
        {
            **who(str(r["machine"]), str(r["pooler"])),
            "windows": r["windows"],
            "windows_ok": r["windows_ok"],
            "outcome": r["outcome"],
            "errors": r.get("errors"),
        }
        for r in facts.get("prepared", [])
        if r.get("protocol") == "prepared" and str(r["machine"]) in heads
    ]
    throughput = _best_by_clients(facts.get("throughput", []), heads, who)
    churn = _best_by_clients(facts.get("churn", []), heads, who, field="target")
    return {
        "memory_at_start": at_start,
        "memory_under_load": under_load,
        "memory_by_pooler": memory_by_pooler(at_start, under_load),
        "prepared": prepared,
        "prepared_ok": [r for r in prepared if r["windows_ok"] == r["windows"] and r["windows"]],
        "prepared_since": PREPARED_SINCE,
        # Whether a PgBouncer version that has transaction-mode prepared statements ran here at all.
        "prepared_versions_support": any(
            pgbouncer_support(PREPARED_IN_TRANSACTION_MODE, r["version"]) == SUPPORTED
            for r in prepared
            if r["pooler"].startswith("pgbouncer")
        ),
        "throughput": throughput,
        "churn": churn,
    }


def memory_by_pooler(at_start: list[dict], under_load: list[dict]) -> list[dict]:
    """One line per pooler and version, least memory first: the range over the machines that measured it,
    before the first query and at its most under load, and those machines. A phone's first screen lists
    four poolers, not every machine's reading of each."""
    grouped: dict[str, list[dict]] = {}
    for r in at_start:
        grouped.setdefault(r["label"], []).append(r)
    lines = []
    for label, rows in grouped.items():
        loads = [r["mib"] for r in under_load if r["label"] == label]
        lines.append(
            {
                "label": label,
                "pooler": rows[0]["pooler"],
                "start_low": min(r["mib"] for r in rows),
                "start_high": max(r["mib"] for r in rows),
                "load_low": min(loads) if loads else None,
                "load_high": max(loads) if loads else None,
                "processes": max(r["processes"] for r in rows),
                "machines": [r["machine"] for r in rows],
            }
        )
    return sorted(lines, key=lambda line: line["start_low"])


def _best_by_clients(
    rows: list[dict], heads: dict[str, dict], who: Callable[[str, str], dict], field: str = "pooler"
) -> list[dict]:
    """At each machine's client counts, the poolers ranked by median throughput (those that finished)."""
    grouped: dict[tuple[str, int], list[dict]] = {}
    for r in rows:
        if str(r["machine"]) in heads and r.get("tps_median") is not None:
            grouped.setdefault((str(r["machine"]), int(r["clients"])), []).append(r)
    ranked = []
    for (machine, clients), found in sorted(grouped.items()):
        order = sorted(found, key=lambda r: -float(r["tps_median"]))
        ranked.append(
            {
                "clients": clients,
                "ranking": [{**who(machine, str(r[field])), "tps": r["tps_median"]} for r in order],
            }
        )
    return ranked


# -- the page ---------------------------------------------------------------------------------------------
def what_to_do(
    slug: str,
    claims: dict[str, list[dict]],
    pool_sizes: dict,
    columns: list[dict],
    pooler_facts: dict,
    facts: dict,
) -> dict:
    """An article's "What to do": rows by server-core count (CORE_CHOICES) for the articles that scale by
    cores, each with the configuration that follows from Pool sizing's pool, and a recommendation by
    constraint for Four poolers. claims: the claims of CLAIM_ARTICLES, by article; pooler_facts: Four
    poolers' facts whole (POOLER_FACTS: the crowd PgBouncer served); facts: the article's facts (whole for
    WHOLE_FACTS)."""
    heads = machine_heads(columns)
    by_id = {(article, str(c["id"])): c for article, found in claims.items() for c in found}
    advice: dict = {"slug": slug, "choices": list(CORE_CHOICES), "default_cores": DEFAULT_CORES, "rows": []}
    advice["rule"] = {"superuser_reserved": SUPERUSER_RESERVED, "margin": ADMIN_MARGIN}
    crowd = pgbouncer_crowd(pooler_facts, heads)
    if slug == "pool-sizing":
        advice["rows"] = pool_sizing(pool_sizes, heads, crowd)
    elif slug == "too-many-connections":
        advice["rows"] = too_many_connections(by_id, heads, facts, pool_sizing(pool_sizes, heads, crowd))
    elif slug == "pgbouncer-trade":
        advice["rows"] = pgbouncer_trade(by_id, pool_sizing(pool_sizes, heads, crowd), heads)
    elif slug == "four-poolers":
        advice["poolers"] = four_poolers(facts, heads)
    return advice
