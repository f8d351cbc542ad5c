"""Four poolers compared with Odyssey measured: the committed full-profile results of a machine that ran
Odyssey 1.5.1 (intel-xeon-2c-24g-2, pinned in tests/fixtures/odyssey_results beside the pinned results)
aggregate to a verdict on every Odyssey claim there, each stating the version measured beside the seed's and,
for memory, the logging buffer the config writer chose; a churn figure that pgbench's saturated core decides
says so; the article and the machine's page state Odyssey's figures, and the first screen counts Odyssey as
measured while pgcat stays not available.

The pinned copy is the results folder as committed; regenerate it by copying results/<machine>/ again when
that machine's results are measured anew on purpose.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from connlab.contract.facts_files import read_facts
from connlab.contract.poolers.features import parse_version
from connlab.data.aggregate import aggregate_all
from connlab.poolers.odyssey import config
from connlab.site.render.renderer import PageRenderer
from support.paths import FIXTURES_DIR, PINNED_RESULTS

# Each test aggregates a results folder whole: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

ODYSSEY_RESULTS = FIXTURES_DIR / "odyssey_results"
MACHINE = "intel-xeon-2c-24g-2"
SEED = "published-four-poolers"
ARTICLE = "four-poolers"
# The seed's statements about Odyssey, each judged here (the project's own readings are the others).
SEED_CLAIMS = {
    "odyssey-memory-at-start",
    "odyssey-memory-doubles-under-load",
    "odyssey-memory-doubles-over-half-an-hour",
    "odyssey-serves-past-its-pool",
    "odyssey-footprint-grows-with-clients",
    "odyssey-rises-with-churn",
    "odyssey-churn-rises-as-much-as-seed",
    "odyssey-behind-pgbouncer-at-low-churn",
    "odyssey-ahead-of-pgbouncer-at-high-churn",
    "odyssey-default-config-breaks-prepared",
    "odyssey-prepared-fails-without-tracking",
    "odyssey-prepared-works-with-support",
    "odyssey-prepared-support-doubles-memory",
    "odyssey-slow-to-connect-100",
    "odyssey-ahead-of-pgbouncer-at-10",
    "pgpool-ahead-of-odyssey-at-10",
}
# Claims on a memory figure: their verdicts name the logging buffer too.
MEMORY_CLAIMS = {
    "odyssey-memory-at-start",
    "odyssey-as-small-as-pgbouncer-at-start",
    "odyssey-memory-doubles-under-load",
    "odyssey-memory-doubles-over-half-an-hour",
    "odyssey-footprint-grows-with-clients",
    "odyssey-prepared-support-doubles-memory",
}


def odyssey_version(machine: str, results: Path) -> str:
    return str(yaml.safe_load((results / machine / "machine.yaml").read_text())["odyssey_version"])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pinned results with the Odyssey machine beside them, aggregated once for the module."""
    root = tmp_path_factory.mktemp("odyssey")
    results = root / "results"
    shutil.copytree(PINNED_RESULTS, results)
    shutil.copytree(ODYSSEY_RESULTS / MACHINE, results / MACHINE)
    aggregate_all(results_dir=results, out_dir=root / "data")
    return root


def odyssey_claims(built: Path) -> dict[str, dict]:
    claims = json.loads((built / "data" / "claims" / f"{ARTICLE}.json").read_text())["claims"]
    return {c["id"]: c for c in claims if "odyssey" in c["id"]}


def verdict(claim: dict, machine: str) -> dict:
    return next(v for v in claim["verdicts"] if v["machine"] == machine)


def test_every_odyssey_claim_has_a_verdict_with_the_versions_beside_it(built: Path) -> None:
    results = built / "results"
    here, seed = odyssey_version(MACHINE, results), odyssey_version(SEED, results)
    assert here != seed  # the difference the notes must state
    claims = odyssey_claims(built)
    assert set(claims) >= SEED_CLAIMS
    assert {c["reading"] for i, c in claims.items() if i in SEED_CLAIMS} == {"seed"}
    buffer = config.log_buffer_note(parse_version(here))  # type: ignore[arg-type]
    for claim_id, claim in claims.items():
        found = verdict(claim, MACHINE)
        assert found["verdict"] != "not measured", claim_id
        assert f"Odyssey {here} here, {seed} in the seed" in found["note"], claim_id
        if claim_id in MEMORY_CLAIMS:
            assert buffer in found["note"], claim_id
    # The machines without Odyssey have no verdict on it: nothing is judged from another pooler's rows.
    for claim in claims.values():
        others = [v for v in claim["verdicts"] if v["machine"] not in (MACHINE, SEED)]
        assert others and {v["verdict"] for v in others} == {"not measured"}, claim["id"]


def test_a_churn_figure_set_by_pgbenchs_core_says_so(built: Path) -> None:
    """On this machine pgbench saturated its one core under churn: each churn verdict that rests on such a
    point is 'cannot be evaluated' with pgbench's figure, never a verdict on the poolers."""
    churn = [c for i, c in odyssey_claims(built).items() if "churn" in i]
    assert len(churn) >= 5
    for claim in churn:
        found = verdict(claim, MACHINE)
        assert found["client_saturated"] is True, claim["id"]
        assert found["verdict"] == "cannot be evaluated", claim["id"]
        assert found["reason"].startswith("pgbench used "), claim["id"]


def test_a_version_default_that_changed_is_a_reason_not_a_failure(built: Path) -> None:
    """1.5 reserves prepared statements by default: the claim about Odyssey without the reservation cannot be
    judged here, the one about its default config is judged on this version's default."""
    claims = odyssey_claims(built)
    without = verdict(claims["odyssey-prepared-fails-without-tracking"], MACHINE)
    assert without["verdict"] == "cannot be evaluated" and "reserves prepared statements" in without["reason"]
    default = verdict(claims["odyssey-default-config-breaks-prepared"], MACHINE)
    assert default["verdict"] == "does not hold" and default["value"] == 1
    assert verdict(claims["odyssey-prepared-works-with-support"], MACHINE)["verdict"] == "holds"


def test_the_facts_state_odysseys_figures_and_the_first_screen_counts_it(built: Path) -> None:
    data = built / "data"
    facts = read_facts(data / "facts", ARTICLE)
    version = odyssey_version(MACHINE, built / "results")
    (summary,) = [r for r in facts["odyssey_summary"] if r["machine"] == MACHINE]
    assert summary["log_buffer"] == config.log_buffer_note(parse_version(version))  # type: ignore[arg-type]
    assert summary["version"] == version and summary["connect_clients"] == 100
    assert summary["served_high"] == summary["clients_high"] and summary["rss_start_mib"] > 0
    assert {r["other"] for r in facts["odyssey_churn"] if r["machine"] == MACHINE} == {"pgbouncer", "pgpool"}
    coverage = json.loads((data / "answers" / f"{ARTICLE}.json").read_text())["coverage"]
    poolers = {p["pooler"]: p for p in coverage["poolers"]}
    assert MACHINE in poolers["odyssey"]["available"]
    assert poolers["pgcat"]["available"] == [] and MACHINE in poolers["pgcat"]["missing"]


def test_the_machine_page_and_the_article_state_them(built: Path) -> None:
    data, docs = built / "data", built / "docs"
    version = odyssey_version(MACHINE, built / "results")
    renderer = PageRenderer(data, docs)
    page = renderer.render_machine_page(MACHINE, [ARTICLE])
    section = page[page.index("### Odyssey on this machine") :]
    assert f"Odyssey {version} ran here" in section
    # The logging buffer in the config writer's own words (the page escapes Markdown's characters).
    assert config.log_buffer_note(parse_version(version)) in section.replace("\\", "")  # type: ignore[arg-type]
    headings = ("**Memory**", "**Clients served**", "**Time to connect**", "**Prepared statements**")
    churn = ("**A new connection per transaction**", "PgPool-II's throughput", "pgbench used")
    for words in (*headings, *churn):
        assert words in section, words
    article = renderer.render(f"{ARTICLE}.md.j2", f"articles/{ARTICLE}.md", ARTICLE)
    measured = article[article.index("### Odyssey, measured") :]
    assert "time to connect" in measured and "pgbench -M prepared" in measured
    assert "{{" not in article and "{%" not in article
