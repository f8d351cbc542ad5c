"""The site `make site` builds from a results folder, as the tests build it: the built_site and
built_site_with_url fixtures (conftest) and the tests that build a site of their own call build_site."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from support.paths import REPO_ROOT, TEST_BUILD_DIR

# make, taking the set-up as done: the tests run inside the virtualenv it would rebuild. make, not the
# stages alone, so that a change to the code is never missed (its stamps follow the code each stage runs).
SETUP_STAMPS = [".venv/.installed", "node_modules/.installed"]
MAKE_WITHOUT_SETUP = ["make", "--no-print-directory", *(f"-o{stamp}" for stamp in SETUP_STAMPS)]

# The site built from the pinned results, shared by every worker and kept between test runs: a worker that
# comes second finds it built.
SHARED_SITE_BUILD = TEST_BUILD_DIR / "site"

# The site built from the pinned results at an address, as it is for publication: its pages name it, and
# Material's instant navigation is on. Any address serves: the tests' server rewrites the sitemap's entries
# to where it serves the site (support.browser).
TEST_SITE_URL = "https://connlab.example/lab/"
# The repository that site links to, given as the scp-like remote a clone over ssh has: the pages give it as
# TEST_REPO_PAGE.
TEST_REPO_URL = "git@git.connlab.example:lab/connection-lab.git"
TEST_REPO_PAGE = "https://git.connlab.example/lab/connection-lab"
SHARED_SITE_WITH_URL_BUILD = TEST_BUILD_DIR / "site-with-url"


def build_site(results: Path, build: Path, site_url: str = "", repo_url: str | None = None) -> Path:
    """`make site` (validation, aggregation, render, MkDocs) from a results folder into a build folder, at
    an address when one is given (SITE_URL), linking to a repository when one is given (REPO_URL; None: the
    clone's origin remote, as `make site` does); the built site's folder. A second call rebuilds only what
    changed."""
    env = {
        **{k: v for k, v in os.environ.items() if k != "CONNLAB_REPO_URL"},
        "CONNLAB_RESULTS_DIR": str(results),
        "CONNLAB_BUILD_DIR": str(build),
        "COLUMNS": "200",
    }
    repository = [] if repo_url is None else [f"REPO_URL={repo_url}"]
    result = subprocess.run(
        [*MAKE_WITHOUT_SETUP, "site", f"SITE_URL={site_url}", *repository],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, f"make site from {results}: {result.stdout}{result.stderr}"
    return build / "site"
