"""The verdict table read across machines: a column per measured machine with its cores, profile and date,
one for the article's own source, other published sets apart."""

from __future__ import annotations

from typing import Any

from connlab.site.render.verdicts import build_table, columns_of, with_machines

COLUMNS = [
    {
        "machine": "full-box",
        "server_cores": 1.0,
        "profile": "full",
        "indicative": False,
        "date": "2026-11-30",
    },
    {
        "machine": "quick-box",
        "server_cores": 8.0,
        "profile": "quick",
        "indicative": True,
        "date": "2026-12-01",
    },
]


def verdict(machine: str, name: str, value: float | None = None) -> dict[str, Any]:
    return {"machine": machine, "verdict": name, "value": value, "low": None, "high": None, "reason": None}


def claims_file(source: str = "published-own") -> dict[str, Any]:
    return {
        "source": source,
        "claims": [
            {
                "id": "peak",
                "claim": "The peak.",
                "summary": "holds on 1 of 1 machine",
                "verdicts": [
                    verdict("full-box", "holds", 4.0),
                    verdict("quick-box", "not measured"),
                    verdict("published-own", "holds", 4.0),
                    verdict("published-other", "does not hold", 8.0),
                ],
            },
            {
                "id": "memory",
                "claim": "The memory.",
                "summary": "holds on 2 of 2 machines",
                "verdicts": [
                    verdict("full-box", "holds", 1.5),
                    verdict("quick-box", "holds", 1.6),
                    verdict("published-own", "holds", 1.9),
                    verdict("published-other", "not measured"),
                ],
            },
        ],
    }


def test_headers_name_cores_profile_and_date() -> None:
    full, quick = columns_of(COLUMNS)
    assert full.heading == "1 server core · full profile · 2026-11-30"
    assert not full.indicative
    assert quick.heading == "8 server cores · quick profile, indicative · 2026-12-01"
    assert quick.indicative


def test_one_column_for_the_source_other_published_sets_apart() -> None:
    table = build_table(claims_file(), COLUMNS, ["published-own", "published-other"])
    assert [c.machine for c in table.columns] == ["full-box", "quick-box"]
    assert table.source == "published-own"
    assert [row["source_cell"]["value"] for row in table.rows] == [4.0, 1.9]
    # The other published set has a verdict for the first claim only, and is listed apart.
    assert table.others == ["published-other"]
    assert [row["claim"]["id"] for row in table.other_rows] == ["peak"]
    assert table.other_rows[0]["cells"]["published-other"]["verdict"] == "does not hold"
    assert table.missing == {"quick-box": 1}


def test_a_source_without_results_gets_no_column() -> None:
    table = build_table(claims_file(source="published-absent"), COLUMNS, ["published-other"])
    assert table.source is None
    assert table.others == ["published-other"]


def test_a_machines_header_takes_the_profile_of_the_articles_own_experiments() -> None:
    """A machine with one quick experiment is not indicative on an article whose claims read only its full
    experiments; it is on an article that reads the quick one."""
    from connlab.site.render.verdicts import article_columns

    columns = [
        {"machine": "m", "profile": "quick", "indicative": True, "server_cores": 1, "date": "2026-12-01"}
    ]
    measured = [
        {"machine": "m", "experiment": "pgbouncer-trade", "profile": "full"},
        {"machine": "m", "experiment": "pooler-churn", "profile": "quick"},
        {"machine": "other", "experiment": "pgbouncer-trade", "profile": "quick"},
    ]
    (trade,) = article_columns(columns, measured, ["pgbouncer-trade", "tls-trade"])
    assert (trade["profile"], trade["indicative"]) == ("full", False)
    (poolers,) = article_columns(columns, measured, ["pooler-churn", "pgbouncer-trade"])
    assert (poolers["profile"], poolers["indicative"]) == ("quick", True)
    assert article_columns(columns, measured, []) == columns  # no claims: the machine's own header


def test_a_machines_table_from_the_table_without_machines_is_the_same_table() -> None:
    """Each machine's page takes its table from the article's (with_machines) instead of building it again."""
    published = ["published-own", "published-other"]
    across = claims_file()
    across["claims"].insert(
        1, {"id": "spread", "claim": "Across.", "scope": "across", "summary": "holds", "verdicts": []}
    )
    by_machine = [{v["machine"]: v for v in claim["verdicts"]} for claim in across["claims"]]
    for source in ("published-own", "published-absent"):
        across["source"] = source
        bare = build_table(across, [], published, by_machine)
        for columns in (COLUMNS, COLUMNS[:1], COLUMNS[1:], []):
            assert with_machines(bare, across, columns, by_machine) == build_table(
                across, columns, published, by_machine
            )
