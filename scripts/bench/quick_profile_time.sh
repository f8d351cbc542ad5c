#!/usr/bin/env bash
# Wall time of the quick profile of an experiment on this machine (default clients-sweep), timed with
# hyperfine. Results go to a temporary folder so the committed results/ stay as they are.
set -euo pipefail
cd "$(dirname "$0")/../.."
experiment=${1:-clients-sweep}
scratch=$(mktemp -d /tmp/connlab-quick-XXXX)
chmod 755 "$scratch"
trap 'rm -rf "$scratch"' EXIT
CONNLAB_RESULTS_DIR="$scratch/results" hyperfine --runs 1 --show-output \
  ".venv/bin/connlab run $experiment --profile quick --machine quick-timing"
