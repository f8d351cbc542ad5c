#!/usr/bin/env bash
# `make site` wall time, cold (after `make clean`) and with nothing changed, timed with hyperfine.
# RUNS=1 times one run of each (the test suite's run of this script); it leaves the site built.
set -euo pipefail
cd "$(dirname "$0")/../.."
make site >/dev/null
hyperfine --runs "${RUNS:-5}" --prepare 'make clean >/dev/null' 'make site'
hyperfine --runs "$(( ${RUNS:-5} * 2 ))" --warmup 1 'make site'
