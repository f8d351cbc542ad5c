"""A pooler's version as an axis: an experiment's pooler entry may name a staged build (`build:`), which the
adapter resolves to build/<program>-<build>/bin/ (connlab.paths.staged_pooler_bin_dir), or reports plainly as
not available; each row records the version its pooler printed (`pooler_version`); PgBouncer's
max_prepared_statements is written as the entry asks where the version has it and left out where not."""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest

from connlab import paths
from connlab.contract.columns import COLUMN_NAMES, NOT_RUN_COLUMNS, WINDOW_COLUMNS
from connlab.contract.experiment import make_plan
from connlab.contract.spec_parts import PoolerSpec
from connlab.lab.poolers.base import PoolerSetup, PoolerUnavailable
from connlab.lab.poolers.registry import POOLERS
from connlab.poolers.pgbouncer import config as pgbouncer_config


@pytest.fixture
def build_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A build/ of the test's own, where `make poolers` would stage its builds."""
    monkeypatch.setattr(paths, "DEFAULT_BUILD_DIR", tmp_path)
    return tmp_path


def stage(build_root: Path, program: str, version: str, banner: str) -> Path:
    """A stand-in for a staged build: a script that prints the program's version banner."""
    binary = build_root / f"{program}-{version}" / "bin" / program
    binary.parent.mkdir(parents=True)
    binary.write_text(f"#!/bin/sh\necho '{banner}'\n")
    binary.chmod(0o755)
    return binary


def test_a_pooler_entry_names_a_build_and_a_dotted_name() -> None:
    spec = PoolerSpec(kind="pgbouncer", name="pgbouncer-1.25", build="1.25.2")
    assert (spec.instance, spec.build) == ("pgbouncer-1.25", "1.25.2")
    assert PoolerSpec(kind="pgbouncer").build is None


@pytest.mark.parametrize("build", ["latest", "1", "1.25.2; rm -rf /", "../1.25"])
def test_a_build_that_is_not_a_dotted_version_is_refused(build: str) -> None:
    with pytest.raises(pydantic.ValidationError, match="build"):
        PoolerSpec(kind="pgbouncer", build=build)


def test_the_pgbouncer_versions_experiment_measures_the_installed_and_the_staged_build() -> None:
    plan = make_plan("pgbouncer-versions", "tiny")
    builds = {spec.instance: spec.build for spec in plan.spec.poolers}
    assert builds == {
        "pgbouncer-installed": None, "pgbouncer-installed-200": None,
        "pgbouncer-1.25": "1.25.2", "pgbouncer-1.25-200": "1.25.2",
    }  # fmt: skip
    settings = {spec.instance: spec.settings["prepared_statements"] for spec in plan.spec.poolers}
    assert sorted(settings.values()) == [0, 0, 200, 200]
    assert {workload.target for workload in plan.spec.workloads} == set(builds)


def test_the_pgpool_versions_experiment_measures_the_installed_and_the_staged_build() -> None:
    plan = make_plan("pgpool-versions", "tiny")
    builds = {spec.instance: spec.build for spec in plan.spec.poolers}
    assert builds == {"pgpool-installed": None, "pgpool-4.7": "4.7.2"}
    assert {spec.kind for spec in plan.spec.poolers} == {"pgpool"}
    # Both versions run the same way: the same pool, and every workload once through each.
    assert len({spec.pool_size for spec in plan.spec.poolers}) == 1
    targets = [workload.target for workload in plan.spec.workloads]
    assert sorted(targets) == sorted([*builds, *builds])


def test_the_staged_path_is_install_poolers_layout(build_root: Path) -> None:
    assert paths.staged_pooler_bin_dir("pgbouncer", "1.25.2") == build_root / "pgbouncer-1.25.2" / "bin"
    # install_poolers.sh names the same folder: <BUILD_ROOT>/pgbouncer-<version>/bin/pgbouncer.
    script = (paths.REPO_ROOT / "scripts" / "install_poolers.sh").read_text()
    assert '[pgbouncer]="pgbouncer-VERSION"' in script and '[pgpool]="pgpool-VERSION"' in script


@pytest.mark.process  # the staged stand-in prints its version
def test_a_build_resolves_to_its_staged_binary_and_records_its_version(build_root: Path) -> None:
    binary = stage(build_root, "pgbouncer", "1.25.2", "PgBouncer 1.25.2")
    built = POOLERS["pgbouncer"].of_build("1.25.2")
    assert built.build == "1.25.2" and built.name == "pgbouncer"
    assert built.binary() == str(binary)
    assert built.measured_version() == "1.25.2"
    # The class itself still runs the machine's own program: a build is a subclass, not a setting.
    assert POOLERS["pgbouncer"].build is None
    assert POOLERS["pgbouncer"].of_build(None) is POOLERS["pgbouncer"]


@pytest.mark.process  # the staged stand-in prints its version
def test_pgpool_build_runs_its_own_pg_enc(build_root: Path) -> None:
    stage(build_root, "pgpool", "4.7.2", "pgpool-II version 4.7.2 (tasukiboshi)")
    pg_enc = build_root / "pgpool-4.7.2" / "bin" / "pg_enc"
    pg_enc.write_text("#!/bin/sh\n")
    pg_enc.chmod(0o755)
    built = POOLERS["pgpool"].of_build("4.7.2")
    assert built.pg_enc() == str(pg_enc)  # type: ignore[attr-defined]
    assert built.measured_version() == "4.7.2"


def test_a_missing_build_is_reported_plainly(build_root: Path) -> None:
    built = POOLERS["pgbouncer"].of_build("1.25.2")
    with pytest.raises(PoolerUnavailable) as raised:
        built.binary()
    assert str(raised.value) == (
        "pgbouncer 1.25.2: not available on this machine (make poolers installs it from a tools folder)"
    )
    # No version to record, and no other binary is measured in its place.
    assert built.measured_version() is None


def test_rows_have_a_pooler_version_column_that_older_files_lack() -> None:
    [column] = [column for column in WINDOW_COLUMNS if column.name == "pooler_version"]
    assert column.added_later and not column.required
    assert COLUMN_NAMES.index("pooler_version") == COLUMN_NAMES.index("target") + 1
    # A window that ran nothing (its version lacks a feature) still says which version that was.
    assert "pooler_version" in NOT_RUN_COLUMNS


def pgbouncer_ini(settings: dict[str, object], *, knows_prepared_setting: bool = True) -> str:
    setup = PoolerSetup(root=Path("/tmp/x"), port=6432, server_host="/tmp/x", server_port=5432,
                        databases=["bench"], settings=settings)  # fmt: skip
    files = pgbouncer_config.config_files(setup, knows_prepared_setting=knows_prepared_setting)
    return files[pgbouncer_config.INI]


@pytest.mark.parametrize(
    ("setting", "written"),
    [(0, "max_prepared_statements = 0"), (200, "max_prepared_statements = 200"),
     (True, "max_prepared_statements = 200"), (False, None), (None, None)],
)  # fmt: skip
def test_pgbouncer_writes_the_count_the_entry_asks_for(setting: object, written: str | None) -> None:
    settings = {} if setting is None else {"prepared_statements": setting}
    ini = pgbouncer_ini(settings)
    if written is None:
        assert "max_prepared_statements" not in ini
    else:
        assert written in ini.splitlines()
    assert "prepared_statements =" not in ini.replace("max_prepared_statements =", "")


def test_a_version_without_the_setting_gets_no_key_it_would_refuse() -> None:
    # PgBouncer before 1.21 stops at start on an unknown key; 0 is what it does anyway.
    assert "max_prepared_statements" not in pgbouncer_ini(
        {"prepared_statements": 0}, knows_prepared_setting=False
    )
