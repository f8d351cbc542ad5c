"""Each article's short answer: the claims that answer its title question (HEADLINES), each with its figure
across the machines and the pooler versions it is from.

Words only here: every figure comes from the claims' rows (connlab.data.answers.claim_rows), every version
from the verdicts' conditions or machine.yaml.
"""

from __future__ import annotations

from connlab.contract.poolers.registry import pooler_label
from connlab.data.answers.claim_rows import MEASURED
from connlab.data.answers.machines import cell_cores, named, spread

# The claims that answer each article's title question, with the words of the question each one answers
# (each with its unit and scope: per process or the whole pooler, per server core or in all) and the poolers
# whose figure it is, whose versions the short answer names. Words only: every figure comes from the claims'
# rows, every version from the verdicts' conditions.
HEADLINES: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {
    "too-many-connections": [
        ("peak-four-per-core", "Throughput peaks at, in clients per server core", ()),
        ("gentle-decline", "Share of the peak throughput left at 100 clients per server core", ()),
        (
            "latency-multiplies",
            "Mean latency at 100 clients per server core, as a multiple of the peak's",
            (),
        ),
        (
            "connect-costs-59-queries",
            "Time per transaction on a new SCRAM connection, as a multiple of on a held one",
            (),
        ),
    ],
    "pool-sizing": [
        (
            "folk-formula-too-low",
            "The measured optimum in clients, as a multiple of (server cores × 2) + 1",
            (),
        ),
        ("usl-optimum-near-peak", "The USL's fitted optimum N*, as a multiple of the measured peak", ()),
        ("usl-fits-well", "How well the USL fits the read-write curve (R²)", ()),
        (
            "small-pool-queues",
            "Throughput through a PgBouncer pool of one per server core, as a share of four per core's",
            ("pgbouncer",),
        ),
    ],
    "pgbouncer-trade": [
        (
            "churn-speedup-2-per-core",
            "PgBouncer's speed-up for a new SCRAM connection per transaction, throughput through it ÷ direct",
            ("pgbouncer",),
        ),
        (
            "read-write-collapses-at-50-per-core",
            "Direct read-write throughput at 50 clients per core ÷ peak",
            (),
        ),
        (
            "crowd-pooled-read-write",
            "Throughput of held connections through PgBouncer ÷ direct, read-write crowd",
            ("pgbouncer",),
        ),
        (
            "pooler-near-a-core",
            "PgBouncer's own CPU at 25 select-only clients per server core, in cores",
            ("pgbouncer",),
        ),
    ],
    "four-poolers": [
        (
            "pgpool-memory-before-query",
            "PgPool-II's resident memory before the first query, per process (its tree's sum ÷ its "
            "processes), MiB",
            ("pgpool",),
        ),
        (
            "pgpool-faster-than-pgbouncer-at-10",
            "PgPool-II's throughput ÷ PgBouncer's, 10 select-only clients",
            ("pgpool", "pgbouncer"),
        ),
        (
            "pgbouncer-falls-with-churn",
            "PgBouncer's throughput as connection churn rises, higher ÷ lower",
            ("pgbouncer",),
        ),
        (
            "prepared-fails-without-tracking",
            "Share of -M prepared windows that finished through PgBouncer in transaction mode, its default "
            "config",
            ("pgbouncer",),
        ),
    ],
}
# The articles whose short answer ends with each machine's pool size.
POOL_SIZE_ARTICLES = ("too-many-connections", "pool-sizing")


def short_answer(
    slug: str,
    rows: dict[str, dict],
    machine_versions: dict[str, dict[str, str]] | None = None,
    source: str | None = None,
    machine_cores: dict[str, float | None] | None = None,
) -> list[dict]:
    """The headline claims' rows, each with the question's words, in the article's order; a claim no
    machine could answer is left out (the findings say which could not be evaluated), unless some machine
    bounded it (pgbench saturated its core): the reader is told what the bound says. A pooler's figure
    names the versions measured (`versions`, one entry per version with its machines and their own figure)
    and the version the seed published with (`seed_versions`). machine_versions: each machine's pooler
    versions by kind (machine.yaml's, where a verdict's conditions do not give them; the seed's set's own);
    machine_cores: each machine's server cores, as claim_row takes them."""
    versions_of = machine_versions or {}
    bullets = []
    for claim_id, question, poolers in HEADLINES.get(slug, []):
        row = rows.get(claim_id)
        if row is None or (row["spread"] is None and not row.get("bounded")):
            continue
        seed_poolers = versions_of.get(source or "", {})
        bullets.append(
            {
                **row,
                "question": question,
                "poolers": list(poolers),
                "versions": pooler_versions(row, poolers, versions_of, machine_cores),
                "seed_versions": [
                    pooler_label(kind, seed_poolers[kind]) for kind in poolers if kind in seed_poolers
                ],
            }
        )
    return bullets


def pooler_versions(
    row: dict,
    poolers: tuple[str, ...],
    machine_versions: dict[str, dict[str, str]] | None = None,
    machine_cores: dict[str, float | None] | None = None,
) -> list[dict]:
    """The versions of `poolers` a claim's measured machines ran (their verdicts' conditions), one entry per
    version (several poolers: per combination, "PgPool-II 4.3.5 and PgBouncer 1.18.0"), each with its
    machines (those counted in the figure, and those that bounded it) and the median and range of their
    figures: where machines ran different versions, each figure is told apart by the version it is from.
    A verdict's conditions give its versions; machine_versions, where they do not. None where the claim is
    about no pooler."""
    if not poolers:
        return []
    counted = [
        c
        for c in row.get("cells", [])
        if bool(c.get("indicative")) == bool(row.get("indicative"))
        and (c["verdict"] in MEASURED or (c["verdict"] == "cannot be evaluated" and c.get("bound")))
    ]
    cores = cell_cores(counted, machine_cores)
    grouped: dict[str, list[dict]] = {}
    for c in counted:
        measured_versions = {
            **(machine_versions or {}).get(c["machine"], {}),
            **((c.get("conditions") or {}).get("poolers") or {}),
        }
        label = " and ".join(
            pooler_label(kind, measured_versions.get(kind) or "(version not recorded)") for kind in poolers
        )
        grouped.setdefault(label, []).append(c)
    return [
        {
            "label": label,
            "machines": named([c["machine"] for c in found], cores),
            "spread": spread(
                [float(c["value"]) for c in found if c["verdict"] in MEASURED and c.get("value") is not None]
            ),
        }
        for label, found in sorted(grouped.items())
    ]
