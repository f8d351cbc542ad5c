"""The experiment spec: loading with one-line errors, client expansion, pass order and the spec hash."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from connlab.contract.experiment import (
    ServerSpec,
    Workload,
    expand_clients,
    experiment_names,
    load_experiment,
    make_plan,
    pass_order,
    window_options,
)
from connlab.contract.provenance import CALIBRATION_S, HELD_PROFILES
from connlab.errors import LabError
from connlab.paths import ARTICLES_SRC_DIR, EXPERIMENTS_DIR

REAL_SPEC = (EXPERIMENTS_DIR / "clients-sweep" / "experiment.yaml").read_text()
PROBLEM_LINE = re.compile(r"^(?P<path>/[^:]+):(?P<line>[0-9]+): (?P<field>[^:]+): (?P<message>.+)$")


def write_experiment(directory: Path, name: str, text: str) -> Path:
    path = directory / name / "experiment.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return path


def line_of(text: str, needle: str) -> int:
    """1-based line number of the only line containing needle."""
    matches = [number for number, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(matches) == 1, (needle, matches)
    return matches[0]


def problems(error: LabError) -> list[re.Match[str]]:
    lines = str(error).splitlines()
    parsed = [PROBLEM_LINE.match(line) for line in lines]
    assert all(parsed), f"every line must read path:line: field: message, got {lines}"
    return [match for match in parsed if match]


# -- client counts ----------------------------------------------------------------------------------------
def test_multiples_of_cores_follow_the_server_budget() -> None:
    assert expand_clients(["4x"], server_cores=1, max_clients=400) == [4]
    assert expand_clients(["4x"], server_cores=8, max_clients=400) == [32]
    assert expand_clients(["0.5x"], server_cores=1, max_clients=400) == [1]  # at least one client
    assert expand_clients(["1.5x"], server_cores=3, max_clients=400) == [5]  # rounded up


def test_client_counts_are_capped_deduplicated_and_sorted() -> None:
    entries: list[int | str] = [400, 1, "1x", "2x", 100, "32x", 2, 500]
    assert expand_clients(entries, server_cores=1, max_clients=400) == [1, 2, 32, 100, 400]
    assert expand_clients(entries, server_cores=16, max_clients=400) == [1, 2, 16, 32, 100, 400]
    assert expand_clients(["64x", 8], server_cores=8, max_clients=100) == [8]


def test_half_budget_scales_with_the_machine() -> None:
    assert ServerSpec(cpu_budget="half").cores(online=2) == 1
    assert ServerSpec(cpu_budget="half").cores(online=64) == 32
    assert ServerSpec(cpu_budget="half").cores(online=1) == 1
    assert ServerSpec(cpu_budget=0.5).cores(online=2) == 0.5
    with pytest.raises(LabError, match="positive"):
        ServerSpec(cpu_budget=0).cores(online=2)


def test_plans_expand_the_spec_for_the_server_cores() -> None:
    assert make_plan("clients-sweep", "tiny", server_cores=1).client_counts == [1, 4]
    assert make_plan("clients-sweep", "tiny", server_cores=8).client_counts == [1, 4]
    for cores in (1, 8):
        full = make_plan("clients-sweep", "full", server_cores=cores)
        assert full.client_counts == expand_clients(full.spec.clients, cores, full.spec.max_clients)
        assert full.client_counts == sorted(set(full.client_counts))
        assert max(full.client_counts) <= full.spec.max_clients
        # "4x" is in the spec: on 8 server cores it is 32 clients.
        assert 4 * cores in full.client_counts


# -- passes and windows -----------------------------------------------------------------------------------
def test_passes_alternate_ascending_and_descending() -> None:
    assert [pass_order(n) for n in (1, 2, 3, 4)] == ["asc", "desc", "asc", "desc"]


def test_windows_reverse_the_client_order_on_the_second_pass() -> None:
    plan = make_plan("clients-sweep", "full", server_cores=1)
    workloads = [workload.id for workload in plan.spec.workloads]
    windows = plan.windows()
    assert len(windows) == plan.profile.passes * len(plan.client_counts) * len(workloads)
    assert len({window.key for window in windows}) == len(windows)

    by_pass = {n: [w for w in windows if w.pass_no == n] for n in (1, 2, 3)}
    assert [w.order for w in by_pass[1]] == ["asc"] * len(by_pass[1])
    assert {w.order for w in by_pass[2]} == {"desc"}
    assert {w.order for w in by_pass[3]} == {"asc"}

    first = [(w.clients, w.workload.id) for w in by_pass[1]]
    second = [(w.clients, w.workload.id) for w in by_pass[2]]
    # Pass 2 visits the client counts exactly in reverse...
    first_counts = list(dict.fromkeys(c for c, _ in first))
    assert first_counts == plan.client_counts
    assert list(dict.fromkeys(c for c, _ in second)) == list(reversed(first_counts))
    # ...while at every client count the workloads still interleave in the spec's order.
    for clients in plan.client_counts:
        assert [wl for c, wl in first if c == clients] == workloads
        assert [wl for c, wl in second if c == clients] == workloads
    assert [w.key[1:] for w in by_pass[3]] == [w.key[1:] for w in by_pass[1]]


def test_spec_hash_identifies_what_is_measured() -> None:
    tiny = make_plan("clients-sweep", "tiny", server_cores=1)
    assert tiny.spec_hash == make_plan("clients-sweep", "tiny", server_cores=1).spec_hash
    assert re.fullmatch(r"[0-9a-f]{12}", tiny.spec_hash)
    assert tiny.spec_hash != make_plan("clients-sweep", "quick", server_cores=1).spec_hash
    assert tiny.spec_hash != make_plan("clients-sweep", "tiny", server_cores=2).spec_hash


def test_profile_scale_overrides_the_database_scale() -> None:
    assert make_plan("clients-sweep", "tiny", server_cores=1).scale == 1
    full = make_plan("clients-sweep", "full", server_cores=1)
    assert full.scale == full.spec.database.scale == 50


def test_window_options_use_the_profile_and_spec() -> None:
    plan = make_plan("clients-sweep", "tiny", server_cores=1)
    mixed = plan.spec.workloads[0]
    options = window_options(plan, mixed, clients=4, jobs=1)
    assert options.builtins == tuple(mixed.builtins)
    assert options.duration_s == plan.profile.duration_s
    assert options.protocol == plan.spec.protocol
    assert (options.clients, options.jobs) == (4, 1)


# -- loading ----------------------------------------------------------------------------------------------
def test_the_repository_experiments_load() -> None:
    assert "clients-sweep" in experiment_names()
    for name in experiment_names():
        assert load_experiment(name).profiles


def test_every_held_profile_calibrates_alike() -> None:
    """A quick run's calibration is held to a folder a full run made, and the other way round: both take it
    the same way (connlab.contract.provenance.CALIBRATION_S)."""
    for name in experiment_names():
        spec = load_experiment(name)
        assert {spec.profiles[p].calibration_s for p in HELD_PROFILES if p in spec.profiles} == {
            CALIBRATION_S
        }


def test_a_held_profile_that_shortens_its_calibration_is_refused(tmp_path: Path) -> None:
    text = REAL_SPEC.replace("  quick:\n", "  quick:\n    calibration_s: 3\n", 1)
    assert text != REAL_SPEC
    write_experiment(tmp_path, "short", text)
    refusal = r"profiles\.quick\.calibration_s: every quick and full run calibrates"
    with pytest.raises(LabError, match=refusal):
        load_experiment("short", directory=tmp_path)


def test_unknown_key_is_one_line_with_its_line_number(tmp_path: Path) -> None:
    text = REAL_SPEC.replace("max_clients: 400\n", "max_clients: 400\nmax_client: 3\n")
    path = write_experiment(tmp_path, "typo", text)
    with pytest.raises(LabError) as caught:
        load_experiment("typo", directory=tmp_path)
    [problem] = problems(caught.value)
    assert problem["path"] == str(path)
    assert int(problem["line"]) == line_of(text, "max_client: 3")
    assert problem["field"] == "max_client"
    assert "unknown key" in problem["message"]


def test_a_key_given_twice_is_refused_naming_both_lines(tmp_path: Path) -> None:
    """YAML loaders keep the second value silently; a spec must not change meaning that way."""
    text = REAL_SPEC.replace("max_clients: 400\n", "max_clients: 400\nmax_clients: 8\n")
    path = write_experiment(tmp_path, "twice", text)
    with pytest.raises(LabError) as caught:
        load_experiment("twice", directory=tmp_path)
    [problem] = problems(caught.value)
    assert problem["path"] == str(path)
    assert int(problem["line"]) == line_of(text, "max_clients: 8")
    assert problem["field"].endswith("max_clients")
    assert f"given twice (first on line {line_of(text, 'max_clients: 400')})" in problem["message"]


def test_wrong_type_is_one_line_with_its_line_number(tmp_path: Path) -> None:
    text = REAL_SPEC.replace("  scale: 50\n", "  scale: fifty\n")
    path = write_experiment(tmp_path, "wrong-type", text)
    with pytest.raises(LabError) as caught:
        load_experiment("wrong-type", directory=tmp_path)
    [problem] = problems(caught.value)
    assert problem["path"] == str(path)
    assert int(problem["line"]) == line_of(text, "scale: fifty")
    assert problem["field"] == "database.scale"
    assert "'fifty'" in problem["message"]


def test_wrong_type_in_a_nested_list(tmp_path: Path) -> None:
    text = REAL_SPEC.replace("  - id: select-only\n", "  - id: Select Only!\n")
    write_experiment(tmp_path, "bad-id", text)
    with pytest.raises(LabError) as caught:
        load_experiment("bad-id", directory=tmp_path)
    [problem] = problems(caught.value)
    assert int(problem["line"]) == line_of(text, "id: Select Only!")
    assert problem["field"] == "workloads.1.id"


def test_several_problems_give_one_line_each(tmp_path: Path) -> None:
    text = (
        REAL_SPEC.replace("  scale: 50\n", "  scale: fifty\n")
        .replace("max_clients: 400\n", "max_clients: 400\nmax_client: 3\n")
        .replace("    duration_s: 15\n", "    duration_s: -1\n")
    )
    write_experiment(tmp_path, "many", text)
    with pytest.raises(LabError) as caught:
        load_experiment("many", directory=tmp_path)
    found = {(p["field"], int(p["line"])) for p in problems(caught.value)}
    assert found == {
        ("database.scale", line_of(text, "scale: fifty")),
        ("max_client", line_of(text, "max_client: 3")),
        ("profiles.full.duration_s", line_of(text, "duration_s: -1")),
    }


def test_wrong_type_of_a_union_field_is_one_problem(tmp_path: Path) -> None:
    """server.cpu_budget is a number or 'half': a wrong value is one problem on one line, named by its
    YAML path (not by pydantic's union branches such as `server.cpu_budget.float`)."""
    text = REAL_SPEC.replace("  cpu_budget: half\n", "  cpu_budget: quarter\n")
    write_experiment(tmp_path, "union", text)
    with pytest.raises(LabError) as caught:
        load_experiment("union", directory=tmp_path)
    found = problems(caught.value)
    assert [(p["field"], int(p["line"])) for p in found] == [
        ("server.cpu_budget", line_of(text, "cpu_budget: quarter"))
    ]


def test_broken_yaml_names_the_line(tmp_path: Path) -> None:
    text = "title: [unclosed\nsummary: x\n"
    path = write_experiment(tmp_path, "broken", text)
    with pytest.raises(LabError) as caught:
        load_experiment("broken", directory=tmp_path)
    [problem] = problems(caught.value)
    assert problem["path"] == str(path)
    assert problem["line"] == "2"
    assert problem["field"] == "(yaml)"


def test_missing_experiment_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(LabError, match=r"no experiment named 'nope'.*clients-sweep"):
        load_experiment("nope", directory=tmp_path)


def test_unknown_profile_names_the_profiles() -> None:
    with pytest.raises(LabError) as caught:
        make_plan("clients-sweep", "huge")
    message = str(caught.value)
    assert "'huge'" in message
    for profile in ("quick", "full", "tiny"):
        assert profile in message
    assert len(message.splitlines()) == 1


def test_profile_client_entries_are_checked_like_the_spec_ones(tmp_path: Path) -> None:
    """A profile's own client list gets the same check as the top-level one: a typo is a one-line
    LabError at load time, not a ValueError traceback once the run expands the counts."""
    text = REAL_SPEC.replace("    clients: [1, 4]\n", "    clients: [1, lots]\n")
    write_experiment(tmp_path, "profile-clients", text)
    with pytest.raises(LabError) as caught:
        load_experiment("profile-clients", directory=tmp_path)
    [problem] = problems(caught.value)
    assert int(problem["line"]) == line_of(text, "clients: [1, lots]")
    assert problem["field"].startswith("profiles.tiny.clients")


def test_budgets_interleave_at_every_point() -> None:
    plan = make_plan("core-budget", "tiny", server_cores=2)
    assert plan.budgets == [1.0, 2.0]
    windows = plan.windows()
    assert len(windows) == plan.profile.passes * len(plan.client_counts) * 2 * len(plan.spec.workloads)
    first = [w for w in windows if w.pass_no == 1 and w.clients == plan.client_counts[0]]
    assert [w.budget for w in first] == [1.0, 1.0, 2.0, 2.0]  # both workloads at one budget, then the next
    assert len({w.key for w in windows}) == len(windows)


def test_a_single_budget_is_the_server_budget() -> None:
    plan = make_plan("clients-sweep", "tiny", server_cores=1)
    assert plan.budgets == [1.0]
    assert {w.budget for w in plan.windows()} == {1.0}


def test_pool_sizes_given_as_multiples_follow_the_server_cores() -> None:
    for cores, expected in ((1, [1, 4, 16]), (4, [4, 16, 64])):
        plan = make_plan("queue-depth", "full", server_cores=cores)
        assert [w.pool_size for w in plan.spec.workloads] == expected


def test_a_workload_needs_builtins_or_a_script_not_both(tmp_path: Path) -> None:
    base = {"id": "w", "label": "w"}
    with pytest.raises(ValueError, match="either builtins or a script"):
        Workload.model_validate(base)
    with pytest.raises(ValueError, match="either builtins or a script"):
        Workload.model_validate({**base, "builtins": ["select-only"], "script": "SELECT 1;"})
    script = Workload.model_validate({**base, "script": "SELECT 1;\n\\sleep :window_s s\n"})
    plan = make_plan("idle-memory", "tiny", server_cores=1)
    options = window_options(plan, script, clients=3, jobs=1, script_dir="/tmp/x")
    flags = options.flags()
    assert flags[flags.index("-f") + 1] == "/tmp/x/w.sql"
    assert f"window_s={plan.profile.duration_s}" in flags and "-b" not in flags


def test_workload_client_counts_in_multiples_of_cores_follow_the_machine() -> None:
    """The seed's 16 and 64 clients on 8 cores become 2 and 8 per server core on any machine."""
    plan = make_plan("pgbouncer-trade", "full", server_cores=4)
    churn = {w.clients for w in plan.windows() if w.workload.id == "churn-direct"}
    assert churn == {8, 16, 32, 64}
    pooled = {w.workload.pool_size for w in plan.windows() if w.workload.id == "churn-pgbouncer"}
    assert pooled == {8}


def test_tls_needs_tcp(tmp_path: Path) -> None:
    """libpq never negotiates TLS on a unix socket: a TLS workload there would measure plain connections."""
    text = (EXPERIMENTS_DIR / "tls-trade" / "experiment.yaml").read_text()
    write_experiment(tmp_path, "tls-unix", text.replace("transport: tcp", "transport: unix"))
    with pytest.raises(LabError, match="churn-direct-tls: tls needs transport tcp"):
        load_experiment("tls-unix", tmp_path)


def test_tls_trade_pairs_every_tls_workload_with_a_plain_one() -> None:
    spec = load_experiment("tls-trade")
    assert spec.uses_tls and not load_experiment("pgbouncer-trade").uses_tls
    tls_ids = {w.id for w in spec.workloads if w.tls}
    plain_ids = {w.id for w in spec.workloads if not w.tls}
    assert len(tls_ids) == 4
    assert {i.removesuffix("-tls") for i in tls_ids} == {i.removesuffix("-plain") for i in plain_ids}


def test_the_same_pooler_kind_twice_needs_a_name_for_each() -> None:
    from pydantic import ValidationError

    from connlab.contract.experiment import Experiment

    spec = make_plan("prepared-statements", "quick").spec
    assert spec.pooler("pgbouncer-prepared") is not None
    assert spec.pooler("pgbouncer-prepared").kind == "pgbouncer"  # type: ignore[union-attr]
    assert spec.pooler("pgbouncer").instance == "pgbouncer"  # type: ignore[union-attr]
    data = spec.model_dump(mode="json")
    data["poolers"] = [
        {"kind": "pgbouncer"},
        {"kind": "pgbouncer", "settings": {"prepared_statements": True}},
    ]
    data["workloads"] = [w for w in data["workloads"] if w["target"] == "pgbouncer"]
    with pytest.raises(ValidationError, match="each kind at most once unless each has its own name"):
        Experiment.model_validate(data)
    data["poolers"][1]["name"] = "pgbouncer-prepared"
    assert Experiment.model_validate(data).pooler("pgbouncer-prepared") is not None


def test_a_workload_may_set_its_own_protocol_and_connect_bound() -> None:
    plan = make_plan("prepared-statements", "quick")
    protocols = {}
    for workload in plan.spec.workloads:
        flags = window_options(plan, workload, 50, jobs=1).flags()
        protocols[workload.id] = flags[flags.index("-M") + 1]
        assert workload.connect_timeout_s == 5
    assert protocols["pgbouncer-simple"] == "simple" and protocols["pgpool-prepared"] == "prepared"
    assert protocols["odyssey-prepared-extended"] == "extended"


def test_a_profile_may_run_some_workloads_only() -> None:
    """pgbouncer-trade's quick profile keeps three of its pool sizes for 200 clients; the full profile runs
    every workload."""
    quick = make_plan("pgbouncer-trade", "quick", server_cores=1)
    full = make_plan("pgbouncer-trade", "full", server_cores=1)
    chosen = {w.id for w in quick.spec.workloads}
    assert chosen < {w.id for w in full.spec.workloads}
    assert {w for w in chosen if "-pool" in w} == {
        f"pooled-{builtin}-pool{size}" for builtin in ("select-only", "tpcb-like") for size in (8, 100)
    }
    assert {window.workload.id for window in quick.windows()} == chosen


def test_a_profile_naming_an_unknown_workload_is_one_line_with_its_place(tmp_path: Path) -> None:
    text = REAL_SPEC.replace("  tiny:\n", "  tiny:\n    workloads: [mixed, nope]\n")
    assert text != REAL_SPEC
    write_experiment(tmp_path, "unknown-workload", text)
    with pytest.raises(LabError) as caught:
        load_experiment("unknown-workload", directory=tmp_path)
    [problem] = problems(caught.value)
    assert "nope" in problem["message"] and "mixed" not in problem["message"]


# -- repeated readings ------------------------------------------------------------------------------------
def experiments_claims_read() -> set[str]:
    """The experiments whose aggregated tables a claim's query reads (`<experiment_schema>.<table>`)."""
    queries = " ".join(
        str(claim.get("query", ""))
        for path in ARTICLES_SRC_DIR.glob("*.claims.yaml")
        for claim in yaml.safe_load(path.read_text())["claims"]
    )
    return {name for name in experiment_names() if re.search(rf"\b{name.replace('-', '_')}\.", queries)}


def test_every_measurement_a_claim_rests_on_is_repeated_in_the_full_profile() -> None:
    read = experiments_claims_read()
    # The claims read the sustained load and the poolers' start readings, among many others.
    assert {"pooler-sustained", "pooler-memory", "clients-sweep"} <= read, read
    for name in sorted(read):
        plan = make_plan(name, "full", server_cores=1)
        assert plan.profile.passes >= 2, f"{name}: full profile has {plan.profile.passes} pass(es)"
        orders = {window.pass_no: window.order for window in plan.windows()}
        assert [orders[number] for number in sorted(orders)][:3] == ["asc", "desc", "asc"][: len(orders)]


def test_a_reading_taken_when_the_poolers_start_is_taken_at_every_pass() -> None:
    # The tree before the first query (pooler_start_* columns) is read once per pooler start: an
    # experiment whose aggregation reads it starts its poolers afresh at every pass.
    starting = [
        name for name in experiment_names()
        if "pooler_start_" in (EXPERIMENTS_DIR / name / "aggregate.sql").read_text()
    ]  # fmt: skip
    assert "pooler-memory" in starting
    for name in starting:
        assert load_experiment(name).pooler_start == "per-pass", name


def test_poolers_started_per_pass_need_poolers(tmp_path: Path) -> None:
    write_experiment(tmp_path, "x", REAL_SPEC + "pooler_start: per-pass\n")
    with pytest.raises(LabError, match="pooler_start: per-pass needs poolers"):
        load_experiment("x", tmp_path)
