"""The pooler registry: each folder of connlab/poolers/ and its declaration (`CONFIG` in its config.py),
found by scanning that package, so that adding a pooler is adding a folder and no list is kept by hand.

What reads it: the experiment's kinds (through the harness's adapters, connlab.lab.poolers.registry), the
machine schema's `<kind>_version` fields, the harness's version collection, the Machines page's pooler
columns, the aggregation's pooler versions and the check-it-yourself blocks.
"""

from __future__ import annotations

import connlab.poolers
from connlab.contract.plugin_folders import declarations, folder_module
from connlab.contract.poolers.setup import PoolerConfig
from connlab.errors import LabError


def package_of(kind: str) -> str:
    """The module of a kind's folder (pgbouncer-pair's is pgbouncer_pair)."""
    return folder_module(connlab.poolers, kind)


def discover() -> dict[str, PoolerConfig]:
    """Every folder's declaration by kind, in the kinds' order. A folder whose config.py lacks a
    `PoolerConfig` named CONFIG, declares a kind its folder is not named after, or declares fields that do
    not fit together, is refused in one line."""
    configs: dict[str, PoolerConfig] = {}
    for found in declarations(connlab.poolers, "config", "CONFIG", PoolerConfig, "kind"):
        config: PoolerConfig = found.declaration
        if config.version_field is not None and not config.version_field.isidentifier():
            raise LabError(f"{found.file}: kind {config.kind!r}: one with a version has no '-'")
        if config.facts and (config.version_field is None or "version" in config.facts):
            raise LabError(f"{found.file}: kind {config.kind!r}: facts need a version, and are not it")
        if not all(fact.isidentifier() for fact in config.facts):
            raise LabError(f"{found.file}: kind {config.kind!r}: a fact's name is a field's: no '-'")
        configs[config.kind] = config
    return dict(sorted(configs.items()))


CONFIGS: dict[str, PoolerConfig] = discover()
# The kinds that record a version of their own: machine.yaml's `<kind>_version`, a Machines page column each
# (and `<kind>_<fact>` for the facts they declare).
VERSIONED: dict[str, PoolerConfig] = {kind: c for kind, c in CONFIGS.items() if c.version_field is not None}

# What an instance's name adds to its kind's (an experiment's `name:` for a second setup of a kind), in words.
INSTANCE_WORDS = {"prepared": "prepared-statement support on"}


def pooler_label(name: str, version: str | None = None) -> str:
    """How the pages name a pooler the rows name (a kind, or an instance named after its kind, such as
    pgbouncer-prepared), with the version measured where one is given: "PgBouncer 1.18.0", "PgBouncer 1.18.0,
    prepared-statement support on". A name of no kind (direct) is given as it is."""
    kind = max((k for k in CONFIGS if name == k or name.startswith(f"{k}-")), key=len, default=None)
    label, rest = (name, "") if kind is None else (CONFIGS[kind].label, name[len(kind) :].lstrip("-"))
    text = f"{label} {version}" if version else label
    return f"{text}, {INSTANCE_WORDS.get(rest, rest)}" if rest else text
