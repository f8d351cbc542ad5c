#!/usr/bin/env bash
# Odyssey for the harness, in build/odyssey/bin/odyssey (mode 755: the postgres user runs it). Debian packages
# no Odyssey, so `make odyssey` takes one of:
#   ODYSSEY_SRC=<tarball>  an upstream source tarball: its sha256 printed and, where a SHA256SUMS lies beside
#                          it, checked against that; built with the recipe below (about 30 s on 2 cores)
#   ODYSSEY_BIN=<binary>   a binary already built: checked against a SHA256SUMS one folder up (a tools
#                          folder's bin/odyssey) where there is one, and copied
# Either way the version the binary prints is recorded in build/odyssey/VERSION.
# Usage: build_odyssey.sh SRC BIN OUT_DIR (SRC or BIN may be empty).
set -euo pipefail

src="${1:-}"; bin="${2:-}"; out="${3:?usage: build_odyssey.sh SRC BIN OUT_DIR}"
fail() { echo "make odyssey: $*" >&2; exit 1; }

# check_sum FILE SUMS_FILE NAME: print FILE's sha256; where SUMS_FILE exists, it must list NAME with that sum.
check_sum() {
  local file="$1" sums="$2" name="$3" actual expected
  actual="$(sha256sum "$file" | cut -d' ' -f1)"
  echo "odyssey: $file sha256 $actual"
  [ -f "$sums" ] || { echo "odyssey: no $sums beside it: the checksum above is not checked"; return 0; }
  expected="$(awk -v n="$name" '$2 == n || $2 == "*" n { print $1 }' "$sums")"
  [ -n "$expected" ] || fail "$sums does not list $name"
  [ "$expected" = "$actual" ] || fail "$file: sha256 $actual, but $sums says $expected"
  echo "odyssey: sha256 matches $sums"
}

mkdir -p "$out/bin"
if [ -n "$src" ]; then
  [ -f "$src" ] || fail "ODYSSEY_SRC=$src is not a file"
  check_sum "$src" "$(dirname "$src")/SHA256SUMS" "$(basename "$src")"
  for tool in cmake make cc; do
    command -v "$tool" >/dev/null || fail "$tool is missing (apt-get install build-essential cmake libssl-dev)"
  done
  work="$out/src"
  rm -rf "$work" && mkdir -p "$work"
  tar xzf "$src" -C "$work" --strip-components=1
  # PAM, LDAP and systemd off: where their development packages are installed the binary would link them,
  # and the binary should run on a fresh machine. SCRAM is always built in since 1.5.
  cmake -S "$work" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_DISABLE_FIND_PACKAGE_PAM=ON -DCMAKE_DISABLE_FIND_PACKAGE_LDAP=ON \
        -DSYSTEMD_LIBRARY=SYSTEMD_LIBRARY-NOTFOUND >"$out/build.log" 2>&1 \
    || fail "cmake failed; see $out/build.log"
  make -C "$work/build" -j"$(nproc)" odyssey >>"$out/build.log" 2>&1 || fail "the build failed; see $out/build.log"
  install -s -m 755 "$work/build/sources/odyssey" "$out/bin/odyssey"
  rm -rf "$work"
elif [ -n "$bin" ]; then
  [ -f "$bin" ] && [ -x "$bin" ] || fail "ODYSSEY_BIN=$bin is not an executable file"
  check_sum "$bin" "$(dirname "$(dirname "$bin")")/SHA256SUMS" "$(basename "$(dirname "$bin")")/$(basename "$bin")"
  install -m 755 "$bin" "$out/bin/odyssey"
else
  fail "name a source tarball (ODYSSEY_SRC=odyssey-1.5.1.tar.gz) or a built binary (ODYSSEY_BIN=...)"
fi

"$out/bin/odyssey" --version | head -n 1 >"$out/VERSION" || fail "$out/bin/odyssey --version failed"
echo "odyssey: $out/bin/odyssey: $(cat "$out/VERSION")"
# The servers and poolers run as postgres: every folder above the binary must be searchable by it.
if [ "$(id -u)" -eq 0 ] && id postgres >/dev/null 2>&1; then
  runuser -u postgres -- "$out/bin/odyssey" --version >/dev/null 2>&1 \
    || fail "the postgres user cannot run $out/bin/odyssey (are the folders above it searchable by it?)"
fi
