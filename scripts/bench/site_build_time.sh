#!/usr/bin/env bash
# `make site` wall time, cold (after `make clean`) and with nothing changed, timed with hyperfine.
set -euo pipefail
cd "$(dirname "$0")/../.."
make site >/dev/null
hyperfine --runs 5 --prepare 'make clean >/dev/null' 'make site'
hyperfine --runs 10 --warmup 1 'make site'
