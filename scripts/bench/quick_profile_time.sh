#!/usr/bin/env bash
# Wall time of the quick profile of one or more experiments on this machine, run one after the other and
# timed together with hyperfine (default: clients-sweep). Results go to a temporary folder so the
# committed results/ stay as they are. The experiments of the first article:
#   scripts/bench/quick_profile_time.sh clients-sweep core-budget wait-events idle-memory connect-cost pgbouncer
# PROFILE=tiny times the tiny profile instead (the test suite's run of this script).
set -euo pipefail
cd "$(dirname "$0")/../.."
experiments=("${@:-clients-sweep}")
scratch=$(mktemp -d /tmp/connlab-quick-XXXX)
chmod 755 "$scratch"
trap 'rm -rf "$scratch"' EXIT
runs=()
for experiment in "${experiments[@]}"; do
  runs+=(".venv/bin/connlab run $experiment --profile ${PROFILE:-quick} --machine quick-timing")
done
command=$(IFS='&'; echo "${runs[*]}" | sed 's/&/ \&\& /g')
CONNLAB_RESULTS_DIR="$scratch/results" hyperfine --runs 1 --show-output "$command"
