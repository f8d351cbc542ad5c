"""Version parsing and the feature-support rules (connlab.contract.poolers.features)."""

from __future__ import annotations

from pathlib import Path

import pytest

from connlab.contract.poolers import features

BANNERS = [
    ("PgBouncer 1.18.0\nlibevent 2.1.12-stable\ntls: OpenSSL 3.0.19 27 Jan 2026", (1, 18, 0)),
    ("pgpool-II version 4.3.5 (tamahomeboshi)", (4, 3, 5)),
    ("PgBouncer 1.25.2", (1, 25, 2)),
    ("pgcat 1.2", (1, 2, 0)),
    ("odyssey (git: ac95c5f 1.4.0)", (1, 4, 0)),
]


@pytest.mark.parametrize(("banner", "version"), BANNERS)
def test_parse_version(banner: str, version: tuple[int, int, int]) -> None:
    assert features.parse_version(banner) == version


def test_no_version_in_text() -> None:
    assert features.parse_version("odyssey: unknown option") is None


def test_pgbouncer_118_has_no_transaction_mode_prepared_statements() -> None:
    answer = features.pgbouncer_support(features.PREPARED_IN_TRANSACTION_MODE, "PgBouncer 1.18.0")
    assert answer == "not supported by this version (1.18.0); needs 1.21+"


@pytest.mark.parametrize("banner", ["PgBouncer 1.21.0", "PgBouncer 1.25.2", "PgBouncer 2.0.0"])
def test_pgbouncer_121_and_later_have_them(banner: str) -> None:
    assert features.pgbouncer_support(features.PREPARED_IN_TRANSACTION_MODE, banner) == features.SUPPORTED
    assert features.pgbouncer_prepared_settings(banner) == {"max_prepared_statements": 200}


def test_pgbouncer_118_gets_no_unknown_setting() -> None:
    assert features.pgbouncer_prepared_settings("PgBouncer 1.18.0") == {}


def test_unparsable_version_is_not_supported() -> None:
    answer = features.pgbouncer_support(features.PREPARED_IN_TRANSACTION_MODE, "")
    assert answer == "version unknown (no version printed)"


def test_unknown_feature_names_the_known_ones() -> None:
    answer = features.pgbouncer_support("telepathy", "PgBouncer 1.18.0")
    assert answer.startswith("unknown feature 'telepathy'")
    assert features.PREPARED_IN_TRANSACTION_MODE in answer


def test_base_and_features_agree_on_the_word_for_supported() -> None:
    from connlab.lab.poolers.base import SUPPORTED

    assert features.SUPPORTED == SUPPORTED


def test_pgbouncer_prepared_setting_is_its_max_prepared_statements_or_not_supported(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Asked for prepared-statement support, 1.21+ gets max_prepared_statements; 1.18 is reported as not
    supported by this version (like a missing pooler), never started with a key it does not know."""
    from connlab.lab.poolers.base import PoolerSetup, PoolerUnavailable
    from connlab.poolers.pgbouncer import config
    from connlab.poolers.pgbouncer.adapter import PgBouncer

    setup = PoolerSetup(root=tmp_path, port=6400, server_host="/tmp", server_port=5400, databases=["bench"],
                        settings={"prepared_statements": True})  # fmt: skip
    ini = config.config_files(setup)["pgbouncer.ini"]
    assert "max_prepared_statements = 200" in ini and "prepared_statements = True" not in ini
    monkeypatch.setattr(PgBouncer, "version", classmethod(lambda cls: "PgBouncer 1.18.0"))
    with pytest.raises(PoolerUnavailable, match=r"not supported by this version \(1\.18\.0\)"):
        PgBouncer(setup).prepare()
    monkeypatch.setattr(PgBouncer, "version", classmethod(lambda cls: "PgBouncer 1.21.0"))
    PgBouncer(setup).prepare()
