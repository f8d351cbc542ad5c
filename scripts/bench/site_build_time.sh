#!/usr/bin/env bash
# `make site` wall time, cold (after `make clean`) and with nothing changed, timed with hyperfine, in a build
# folder of its own (CONNLAB_BUILD_DIR; a temporary one unless given), so that the repository's build/ is
# left as it was. RUNS=1 times one run of each (the test suite's run of this script).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${CONNLAB_BUILD_DIR:-}" ]; then
    scratch="$(mktemp -d /tmp/connlab-site-time.XXXXXX)"
    trap 'rm -rf "$scratch"' EXIT
    export CONNLAB_BUILD_DIR="$scratch/build"
fi
hyperfine --runs "${RUNS:-5}" --prepare 'make clean >/dev/null' 'make site'
hyperfine --runs "$(( ${RUNS:-5} * 2 ))" --warmup 1 'make site'
