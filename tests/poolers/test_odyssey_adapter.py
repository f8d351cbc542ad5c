"""Odyssey's config, per version family: golden files for 1.4 (the seed's) and 1.5 (measured here) under
tests/golden/poolers/odyssey-<family>[-prepared]/, what each version's defaults mean for the two
prepared-statement variants and the logging buffer, and, with the real binary, `odyssey --test` on every
config the harness writes (each family's and each experiment's).

Regenerate the golden files after a deliberate change with CONNLAB_UPDATE_GOLDEN=1, then read the diff.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from connlab.contract.experiment import experiment_names, make_plan
from connlab.contract.poolers.from_plan import plan_setup
from connlab.contract.poolers.registry import CONFIGS
from connlab.contract.poolers.setup import PoolerSetup, PoolerUser
from connlab.errors import LabError
from connlab.lab.poolers.base import PoolerUnavailable
from connlab.poolers.odyssey import config
from connlab.poolers.odyssey.adapter import Odyssey, parsed_version
from support.odyssey_binary import SKIP_REASON, find_odyssey
from support.pooler_golden import BENCH, PASSWORD, TRUST, VERIFIER, assert_matches_golden, golden_setup

FAMILIES = {"1.4": (1, 4, 0), "1.5": (1, 5, 1)}


def odyssey_setup(prepared: bool = False, users: list[PoolerUser] | None = None) -> PoolerSetup:
    settings = {"prepared_statements": True} if prepared else {}
    return golden_setup("odyssey", users or [TRUST, BENCH], **settings)


def conf(version: tuple[int, int, int], prepared: bool = False) -> str:
    return Odyssey(odyssey_setup(prepared), version).config_files()[config.CONF]


def lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()]


@pytest.mark.parametrize("prepared", [False, True], ids=["default", "prepared"])
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_config_matches_its_family_golden(golden_dir: Path, family: str, prepared: bool) -> None:
    folder = golden_dir.parent / "poolers" / f"odyssey-{family}{'-prepared' if prepared else ''}"
    assert_matches_golden(Odyssey(odyssey_setup(prepared), FAMILIES[family]).config_files(), folder)


def test_the_default_config_is_each_versions_default_for_prepared_statements() -> None:
    # 1.4's default is off, written; from 1.5.0 the default is on, and the default config leaves it be.
    assert lines(conf((1, 4, 0))).count("pool_reserve_prepared_statement no") == 4
    for version in ((1, 5, 0), (1, 5, 1), (1, 6, 0)):
        assert "pool_reserve_prepared_statement" not in conf(version)
    # "With support" switches it on explicitly in every version, with pool_discard off beside it.
    for version in FAMILIES.values():
        text = lines(conf(version, prepared=True))
        assert text.count("pool_reserve_prepared_statement yes") == 4 and text.count("pool_discard no") == 4


def test_the_logging_buffer_is_bounded_where_the_version_has_one() -> None:
    for version in ((1, 5, 1), (1, 6, 0)):
        assert "log_queue_depth 1000" in lines(conf(version))
        assert "log_queue_depth 1000" in config.log_buffer_note(version)
    # Unknown keys stop these versions at start: neither is written.
    for version in ((1, 4, 0), (1, 5, 0)):
        assert "log_queue_depth" not in conf(version) and "log_async" not in conf(version)
        assert config.log_buffer_note(version) == "no logging buffer in this version"


def test_the_snippet_writes_for_the_newest_known_version() -> None:
    assert CONFIGS["odyssey"].config_files(odyssey_setup()) == {config.CONF: conf(config.NEWEST_KNOWN)}
    assert Odyssey(odyssey_setup()).config_files() == {config.CONF: conf(config.NEWEST_KNOWN)}


def test_clients_are_checked_with_the_verifier_and_the_server_login_uses_the_password() -> None:
    text = lines(conf(FAMILIES["1.5"]))
    assert f'password "{VERIFIER}"' in text and f'storage_password "{PASSWORD}"' in text
    assert f'password "{PASSWORD}"' not in text  # the client check uses the verifier


def test_a_quote_in_a_value_is_refused() -> None:
    user = PoolerUser("bench", verifier=VERIFIER, password='pass"word')
    with pytest.raises(LabError, match="quote"):
        Odyssey(odyssey_setup(users=[user])).config_files()


def test_a_version_banner_without_a_version_is_a_row_that_says_so() -> None:
    assert parsed_version("odyssey 1.5.1 (git a2d276a0) release -pam -ldap -systemd -prom") == (1, 5, 1)
    assert parsed_version("odyssey (git: ac95c5f 1.4.0)") == (1, 4, 0)
    with pytest.raises(PoolerUnavailable, match=r"^odyssey: cannot tell its version"):
        parsed_version("odyssey: unknown option")


def odyssey_setups(root: Path) -> list[tuple[str, PoolerSetup]]:
    """Every Odyssey of every experiment, as the harness sets it up (a verifier and a password per role)."""
    setups = []
    for name in experiment_names():
        plan = make_plan(name, "quick", server_cores=1)
        for pooler in plan.spec.poolers:
            if pooler.kind == "odyssey":
                setup = plan_setup(
                    plan, pooler.instance, root=root / pooler.instance, port=6500, server_host="127.0.0.1",
                    server_port=5500, secret=lambda role: VERIFIER, password=lambda role: PASSWORD,
                )  # fmt: skip
                setups.append((f"{plan.experiment}/{pooler.instance}", setup))
    return setups


@pytest.mark.e2e
def test_every_written_config_passes_odyssey_test(tmp_path: Path) -> None:
    binary = find_odyssey()
    if binary is None:
        pytest.skip(SKIP_REASON)
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout
    setups = [(f"{family}{'-prepared' if prepared else ''}", odyssey_setup(prepared), FAMILIES[family])
              for family in FAMILIES for prepared in (False, True)]  # fmt: skip
    setups += [(name, setup, parsed_version(version)) for name, setup in odyssey_setups(tmp_path)]
    assert len(setups) > 4, "no experiment lists Odyssey"
    for name, setup, written_for in setups:
        path = tmp_path / f"{name.replace('/', '-')}.conf"
        path.write_text(config.config_text(setup, written_for))
        result = subprocess.run([binary, "--test", path], capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, f"{name}: {result.stdout}{result.stderr}"
        assert "config is valid" in result.stdout + result.stderr
    # And a key this version does not know is refused: the check can fail.
    path.write_text(path.read_text().replace("workers 1\n", "workers 1\nno_such_key 1\n"))
    result = subprocess.run([binary, "--test", path], capture_output=True, text=True, timeout=30)
    assert result.returncode != 0
