#!/usr/bin/env bash
# A command run beside CPU-bound processes, as on a busy machine: the test suite must not need spare CPU.
#   scripts/bench/under_load.sh [-n BUSY] [-r RUNS] [-- COMMAND...]
# BUSY processes (default 2) spin from before the first run to the end; the command (default `make test`)
# runs RUNS times in a row (default 2). Each run's exit status and wall time are printed; the script exits
# non-zero if any run failed. The spinning processes end with the script, also on Ctrl-C. Each names this
# script's run in its command line (connlab-busy-<pid>, given to the command as CONNLAB_BUSY_TAG), so that a
# count of them finds only this run's, also when the command is itself run under load.
set -euo pipefail
cd "$(dirname "$0")/../.."
busy=2 runs=2
while getopts "n:r:" option; do
  case $option in
    n) busy=$OPTARG ;;
    r) runs=$OPTARG ;;
    *) echo "usage: $0 [-n BUSY] [-r RUNS] [-- COMMAND...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- make --no-print-directory test
tag="connlab-busy-$$"
spinners=()
stop_spinners() { [ ${#spinners[@]} -eq 0 ] || kill "${spinners[@]}" 2>/dev/null || true; }
trap stop_spinners EXIT
trap 'exit 130' INT TERM
for _ in $(seq "$busy"); do
  bash -c ": $tag; while :; do :; done" &
  spinners+=($!)
done
export CONNLAB_BUSY_TAG="$tag"
echo "under load: ${#spinners[@]} CPU-bound processes ($tag) beside: $*"
failed=0
for run in $(seq "$runs"); do
  start=$SECONDS status=0
  "$@" || status=$?
  echo "run $run/$runs: exit $status in $((SECONDS - start)) s"
  [ "$status" -eq 0 ] || failed=1
done
exit $failed
