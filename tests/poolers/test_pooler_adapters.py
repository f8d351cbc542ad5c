"""The PgPool-II, Odyssey and pgcat adapters without starting them: the configs each writes from one fixed
PoolerSetup (golden files under tests/golden/poolers/<name>/; Odyssey's, one per version family, in
tests/poolers/test_odyssey_adapter.py), their refusals, and "not available on this machine" when a binary is
absent.

Regenerate the golden files after a deliberate change with CONNLAB_UPDATE_GOLDEN=1, then read the diff.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from connlab.contract.poolers import features
from connlab.errors import LabError
from connlab.lab.poolers.base import PoolerProcess, PoolerSetup, PoolerUnavailable, PoolerUser
from connlab.poolers.odyssey.adapter import Odyssey
from connlab.poolers.pgcat.adapter import PgCat
from connlab.poolers.pgpool.adapter import PgPool, children_counts
from support.pooler_golden import BENCH, TRUST, VERIFIER, assert_matches_golden, golden_setup

ADAPTERS: dict[str, PoolerProcess] = {
    "pgpool": PgPool(golden_setup("pgpool", [TRUST, BENCH])),
    "pgcat": PgCat(golden_setup("pgcat", [BENCH], admin_password="golden-admin-password")),
    "pgcat-prepared": PgCat(
        golden_setup("pgcat", [BENCH], admin_password="golden-admin-password", prepared_statements=True)
    ),
}


@pytest.mark.parametrize("case", sorted(ADAPTERS))
def test_config_files_match_golden(golden_dir: Path, case: str) -> None:
    assert_matches_golden(ADAPTERS[case].config_files(), golden_dir.parent / "poolers" / case)


def test_config_files_are_pure() -> None:
    for adapter in ADAPTERS.values():
        assert adapter.config_files() == adapter.config_files()


def test_pgpool_holds_the_same_number_of_server_connections_as_the_pool() -> None:
    settings = ADAPTERS["pgpool"].settings()  # type: ignore[attr-defined]
    assert (settings["num_init_children"], settings["max_pool"]) == (8, 1)
    # Absolute: pg_enc would resolve a relative path against its own working folder.
    assert settings["pool_passwd"] == "/tmp/connlab-golden/pgpool/pool_passwd"


def test_pgpool_has_nothing_to_turn_on_for_prepared_statements() -> None:
    plain = PgPool(golden_setup("pgpool", [TRUST, BENCH])).config_files()
    prepared = PgPool(golden_setup("pgpool", [TRUST, BENCH], prepared_statements=True)).config_files()
    assert plain == prepared


def test_pgpool_scram_needs_the_password_not_the_verifier() -> None:
    adapter = PgPool(golden_setup("pgpool", [PoolerUser("bench", verifier=VERIFIER)]))
    with pytest.raises(LabError, match="needs the password itself"):
        adapter.password_users()


def test_pgpool_hba_defaults_to_scram_for_password_users() -> None:
    lines = ADAPTERS["pgpool"].config_files()["pool_hba.conf"].splitlines()
    assert "host all bench 127.0.0.1/32 scram-sha-256" in lines
    assert "host all postgres 127.0.0.1/32 trust" in lines


def test_pgcat_refuses_a_setup_without_a_password_user() -> None:
    with pytest.raises(LabError, match="MD5"):
        PgCat(golden_setup("pgcat", [TRUST])).config_files()


def test_pgcat_listens_on_tcp_only() -> None:
    adapter = ADAPTERS["pgcat"]
    assert adapter.client_args("tcp", "bench") == ["-h", "127.0.0.1", "-p", "6500", "-U", "bench"]
    with pytest.raises(LabError, match="TCP only"):
        adapter.client_args("unix", "bench")


def test_pgcat_admin_password_is_generated_per_adapter() -> None:
    first, second = (PgCat(golden_setup("pgcat", [BENCH])) for _ in range(2))
    assert first.admin_password != second.admin_password and len(first.admin_password) >= 24


@pytest.mark.parametrize(("adapter", "env_var"), [(Odyssey, "ODYSSEY_BIN"), (PgCat, "PGCAT_BIN")])
def test_absent_pooler_is_not_available_on_this_machine(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, adapter: type[PoolerProcess], env_var: str
) -> None:
    monkeypatch.delenv(env_var, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(adapter, "known_paths", (str(tmp_path / "nowhere" / adapter.name),))
    with pytest.raises(PoolerUnavailable, match=f"^{adapter.name}: not available on this machine"):
        adapter.binary()
    with pytest.raises(PoolerUnavailable):
        adapter(golden_setup(adapter.name, [BENCH])).__enter__()


@pytest.mark.process
@pytest.mark.parametrize(("adapter", "env_var"), [(Odyssey, "ODYSSEY_BIN"), (PgCat, "PGCAT_BIN")])
def test_env_var_names_the_binary(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, adapter: type[PoolerProcess], env_var: str
) -> None:
    binary = tmp_path / adapter.name
    binary.write_text("#!/bin/sh\necho 'pooler 9.9.9'\n")
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv(env_var, str(binary))
    assert adapter.binary() == str(binary)
    assert adapter.version() == "pooler 9.9.9"
    assert adapter(golden_setup(adapter.name, [BENCH])).support(features.PREPARED_IN_TRANSACTION_MODE) == "ok"
    monkeypatch.setenv(env_var, str(tmp_path / "missing"))
    with pytest.raises(PoolerUnavailable, match="is not an executable file"):
        adapter.binary()


def test_pgpool_support_answers() -> None:
    adapter = ADAPTERS["pgpool"]
    assert adapter.support(features.PREPARED_IN_TRANSACTION_MODE) == "ok"
    assert adapter.support(features.TRANSACTION_POOLING).startswith("not supported")
    assert adapter.support(features.SERVER_CONNECTION_RESET).startswith("not supported")
    assert adapter.support("time travel").startswith("unknown feature")


def test_pgcat_says_its_clients_do_not_use_scram() -> None:
    assert "MD5" in ADAPTERS["pgcat"].support(features.SCRAM_CLIENT_AUTH)


def test_pgpool_children_counts_from_real_titles(golden_dir: Path) -> None:
    """Titles of PgPool-II 4.3.5 with four children, one serving a client (the parent, PCP, worker and
    health check are not children that serve clients)."""
    titles = (golden_dir.parent / "poolers" / "pgpool-titles" / "titles.txt").read_text().splitlines()
    assert children_counts(titles) == {"children": 4, "children_free": 3, "clients_served": 1}


@pytest.mark.parametrize("case", sorted(ADAPTERS))
def test_adapters_write_exactly_their_pure_config_modules_files(case: str) -> None:
    """The harness writes what the site's check-it-yourself block prints: one module, connlab.contract."""
    from connlab.contract.poolers.registry import CONFIGS

    adapter = ADAPTERS[case]
    assert adapter.config_files() == CONFIGS[adapter.name].config_files(adapter.setup)
    assert CONFIGS[adapter.name].label == adapter.label


def test_pgcat_leaves_out_a_user_without_a_password() -> None:
    text = PgCat(golden_setup("pgcat", [TRUST, BENCH], admin_password="x")).config_files()["pgcat.toml"]
    assert 'username = "bench"' in text and 'username = "postgres"' not in text


def test_snippet_configs_keep_shell_variables_as_numbers() -> None:
    """In the block, ports are shell variables: bare, so the heredoc makes them numbers."""
    from connlab.poolers.pgcat import config as pgcat
    from connlab.poolers.pgpool import config as pgpool

    bench = PoolerUser("bench", "$PASSWORD", "$PASSWORD")
    setup = PoolerSetup(root=Path("$DIR/pgpool"), port="$POOLER_PORT", server_host="$DIR",
                        server_port="$PORT", databases=["bench"], users=[TRUST, bench])  # fmt: skip
    conf = pgpool.config_files(setup)["pgpool.conf"]
    assert "port = $POOLER_PORT\n" in conf and "pcp_port = $(($POOLER_PORT + 1))\n" in conf
    assert "backend_port0 = $PORT\n" in conf and "socket_dir = '$DIR/pgpool'\n" in conf
    assert "backend_hostname0 = '$DIR'\n" in conf
    assert any(
        "pg_enc -m" in line and "-u bench" in line for line in pgpool.snippet_prepare("$DIR/pgpool", setup)
    )
    toml = pgcat.config_files(setup)["pgcat.toml"]
    assert "port = $POOLER_PORT\n" in toml and 'servers = [["127.0.0.1", $PORT, "primary"]]' in toml


def test_only_poolers_that_can_close_their_server_connections_say_so() -> None:
    from connlab.poolers.pgbouncer.adapter import PgBouncer

    assert PgBouncer(golden_setup("pgbouncer", [TRUST])).closes_server_connections()
    assert not any(ADAPTERS[case].closes_server_connections() for case in ("pgpool", "pgcat"))
    assert not Odyssey(golden_setup("odyssey", [TRUST])).closes_server_connections()
