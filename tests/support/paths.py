"""The tests' own folders. Imports nothing of connlab: conftest reads these before it points connlab at the
tests' results and build folders."""

from __future__ import annotations

from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = TESTS_DIR.parent
FIXTURES_DIR = TESTS_DIR / "fixtures"
# The pinned results every test reads (a copy per test process, made by conftest), never the working tree's.
PINNED_RESULTS = FIXTURES_DIR / "results"
# What aggregation wrote from the committed results before the code was reshaped, and every page rendered.
FACTS_BEFORE = FIXTURES_DIR / "facts_before"
# Real captured text the parsers and the config writers are held to (tests/golden/README.md).
GOLDEN_DIR = TESTS_DIR / "golden"
TEST_BUILD_DIR = REPO_ROOT / "build" / "test"
