#!/usr/bin/env bash
# The poolers Debian packages none of (Odyssey, pgcat), installed for the harness from a tools folder, and
# newer PgBouncer and PgPool-II builds staged beside Debian's (`make poolers`, `make odyssey`).
#
# A tools folder holds one folder per pooler: <pooler>/bin/<binary>, <pooler>/SHA256SUMS listing it, and the
# source it was built from (../shared/tools, where a machine has one, is such a folder). Each binary is
# checked against its SHA256SUMS (a mismatch stops the script), run once as the postgres user (the harness
# runs the poolers as that user), and copied (mode 755) into BUILD_ROOT:
#   odyssey    <BUILD_ROOT>/odyssey/bin/odyssey   the harness's Odyssey where ODYSSEY_BIN and PATH name none
#   pgcat      <BUILD_ROOT>/pgcat/bin/pgcat       the harness's pgcat where PGCAT_BIN and PATH name none
#   pgbouncer  <BUILD_ROOT>/pgbouncer-<version>/bin/pgbouncer     staged only: Debian's stays the harness's;
#   pgpool     <BUILD_ROOT>/pgpool-<version>/bin/{pgpool,pg_enc}  CONNLAB_PGBOUNCER, PGPOOL_BIN and PG_ENC_BIN
#                                                                 name these to measure them instead
# and the first line the binary prints of its version is written to VERSION beside bin/.
#
# An Odyssey binary that does not run here is built from the tarball beside it instead (cmake, its recipe
# below). Where there is no tools folder (or it lacks the pooler), the pooler's upstream repository is cloned
# at the tag scripts/pooler_upstreams.tsv pins, the clone's commit is checked against the pin, and it is
# built with the recipe its tools README gives (Odyssey: cmake; PgBouncer: autogen, configure, make
# pgbouncer; PgPool-II: autoreconf, configure, make). pgcat's build needs the tools folder's kit (Debian's
# crates, three patches, the lock file), so a clone alone is not built. Offline, or where a build's Debian
# packages are missing, each pooler gets one line saying it is not available on this machine and why, the
# status stays 0, and the runs measure the rest (Debian's PgBouncer and PgPool-II stay the harness's).
# POOLER_UPSTREAMS names another pin file (the tests' local repositories).
#
# Usage: install_poolers.sh BUILD_ROOT TOOLS [POOLER...]         every pooler (or those named) from TOOLS
#        install_poolers.sh BUILD_ROOT TOOLS odyssey --binary FILE   that built binary, checked against a
#                                                                  SHA256SUMS one folder up where there is one
#        install_poolers.sh BUILD_ROOT TOOLS odyssey --source FILE   that source tarball, built here
set -euo pipefail

usage="usage: install_poolers.sh BUILD_ROOT TOOLS [POOLER...] [--binary FILE | --source FILE]"
root="${1:?$usage}"; tools="${2-}"; shift 2 || { echo "$usage" >&2; exit 2; }
fail() { echo "make poolers: $*" >&2; exit 1; }

# What each pooler is: its binaries (the first prints the version), and its folder under BUILD_ROOT
# (VERSION in it is replaced by the version the binary prints).
declare -A BINARIES=([odyssey]="odyssey" [pgcat]="pgcat" [pgbouncer]="pgbouncer" [pgpool]="pgpool pg_enc")
declare -A FOLDER=([odyssey]="odyssey" [pgcat]="pgcat" [pgbouncer]="pgbouncer-VERSION"
                   [pgpool]="pgpool-VERSION")
# Those without a Debian package: one line each where none can be installed. The others are staged only.
NEEDED=(odyssey pgcat)

poolers=(); binary_file=""; source_file=""
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary_file="${2:?$usage}"; shift 2 ;;
    --source) source_file="${2:?$usage}"; shift 2 ;;
    *) [ -n "${BINARIES[$1]+x}" ] || fail "unknown pooler $1 (known: ${!BINARIES[*]})"
       poolers+=("$1"); shift ;;
  esac
done
[ ${#poolers[@]} -gt 0 ] || poolers=(odyssey pgcat pgbouncer pgpool)
if [ -n "$binary_file$source_file" ] && [ ${#poolers[@]} -ne 1 ]; then
  fail "--binary and --source name one pooler's file: name that pooler alone"
fi

# check_sum POOLER FILE SUMS_FILE NAME REQUIRED: FILE's sha256 must be the one SUMS_FILE lists for NAME. A
# missing SUMS_FILE is an error where REQUIRED is yes (a tools folder), else the sum is printed unchecked.
check_sum() {
  local pooler="$1" file="$2" sums="$3" name="$4" required="$5" actual expected
  actual="$(sha256sum "$file" | cut -d' ' -f1)"
  if [ ! -f "$sums" ]; then
    [ "$required" = yes ] && fail "$pooler: $sums is missing: $file cannot be checked"
    echo "$pooler: $file sha256 $actual (no $sums beside it: not checked)"
    return 0
  fi
  expected="$(awk -v n="$name" '$2 == n || $2 == "*" n { print $1 }' "$sums")"
  [ -n "$expected" ] || fail "$pooler: $sums does not list $name"
  [ "$expected" = "$actual" ] || fail "$pooler: $file: sha256 $actual, but $sums says $expected"
  echo "$pooler: $file: sha256 matches $sums"
}

# as_server_user COMMAND...: as the postgres user where we are root and it exists (the harness runs the
# poolers as that user: every folder above a binary must be searchable by it), else as ourselves.
as_server_user() {
  if [ "$(id -u)" -eq 0 ] && id postgres >/dev/null 2>&1; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# version_of BINARY: the first line it prints of its version (PgPool-II prints it on stderr); fails where it
# does not run here (another architecture, a missing library).
version_of() {
  local output
  output="$(timeout 10 "$1" --version 2>&1)" || return 1
  [ -n "$output" ] || return 1
  echo "${output%%$'\n'*}"
}

# put FILE DEST: FILE copied to DEST (mode 755) by a rename, so that a pooler running from DEST keeps its
# file (writing over a running binary fails).
put() {
  local file="$1" dest="$2"
  mkdir -p "$(dirname "$dest")"
  if ! cmp -s "$file" "$dest" 2>/dev/null; then
    install -m 755 "$file" "$dest.new" && mv -f "$dest.new" "$dest"
  fi
}

# finish POOLER STAGE_DIR: the staged binaries (in STAGE_DIR/bin) moved into their folder under BUILD_ROOT,
# with the VERSION they print.
finish() {
  local pooler="$1" stage="$2" first version number folder binary
  first="${BINARIES[$pooler]%% *}"
  version="$(version_of "$stage/bin/$first")" || fail "$pooler: $stage/bin/$first --version failed"
  number="$(grep -oE '[0-9]+(\.[0-9]+)+' <<<"$version" | head -n 1 || true)"
  [ -n "$number" ] || fail "$pooler: no version number in '$version'"
  folder="$root/${FOLDER[$pooler]/VERSION/$number}"
  for binary in ${BINARIES[$pooler]}; do
    [ -f "$stage/bin/$binary" ] && put "$stage/bin/$binary" "$folder/bin/$binary"
  done
  echo "$version" >"$folder/VERSION"
  as_server_user "$folder/bin/$first" --version >/dev/null 2>&1 \
    || fail "$pooler: the postgres user cannot run $folder/bin/$first (can it search the folders above it?)"
  echo "$pooler: $folder/bin/$first: $version"
}

# build_odyssey TARBALL STAGE_DIR: Odyssey built from its source tarball into STAGE_DIR/bin (its log in its
# folder under BUILD_ROOT).
build_odyssey() {
  local src="$1" stage="$2" work log="$root/${FOLDER[odyssey]}/build.log" tool
  for tool in cmake make cc; do
    command -v "$tool" >/dev/null \
      || fail "odyssey: $tool is missing (apt-get install build-essential cmake libssl-dev)"
  done
  work="$stage/src"
  mkdir -p "$work" "$stage/bin" "$(dirname "$log")"
  tar xzf "$src" -C "$work" --strip-components=1
  echo "odyssey: building $src (log: $log)"
  # PAM, LDAP and systemd off: where their development packages are installed the binary would link them,
  # and the binary should run on a fresh machine. SCRAM is always built in since 1.5.
  cmake -S "$work" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_DISABLE_FIND_PACKAGE_PAM=ON -DCMAKE_DISABLE_FIND_PACKAGE_LDAP=ON \
        -DSYSTEMD_LIBRARY=SYSTEMD_LIBRARY-NOTFOUND >"$log" 2>&1 || fail "odyssey: cmake failed; see $log"
  make -C "$work/build" -j"$(nproc)" odyssey >>"$log" 2>&1 || fail "odyssey: the build failed; see $log"
  install -s -m 755 "$work/build/sources/odyssey" "$stage/bin/odyssey"
}

# The pins: pooler -> "repository tag commit" (POOLER_UPSTREAMS, else the repository's file).
upstreams="${POOLER_UPSTREAMS:-$(dirname "$0")/pooler_upstreams.tsv}"
pin_of() {
  [ -f "$upstreams" ] && awk -F'\t' -v p="$1" '$1 == p { print $2, $3, $4 }' "$upstreams"
  return 0
}

# build_blocker POOLER: why this machine cannot build the pooler from a clone (nothing where it can): a
# missing tool of its recipe, or pgcat's kit.
build_blocker() {
  local tools tool
  case "$1" in
    odyssey) tools="cmake make cc" ;;
    pgbouncer) tools="autoconf automake libtool make cc pkg-config" ;;
    pgpool) tools="autoconf automake libtool make cc bison flex pg_config" ;;
    *) echo "its build needs the tools folder's kit (Debian's crates, patches, lock file)"; return 0 ;;
  esac
  for tool in $tools; do
    command -v "$tool" >/dev/null || { echo "$tool is missing to build it (its tools README lists the packages)"; return 0; }
  done
}

# build_from_clone POOLER SRC STAGE_DIR: the recipe of the pooler's tools README, in the clone, into
# STAGE_DIR/bin; prints why not and returns 1 where a step fails (its log under BUILD_ROOT).
build_from_clone() {
  local pooler="$1" src="$2" stage="$3" log="$root/.upstream-$1.log"
  mkdir -p "$stage/bin"
  case "$pooler" in
    odyssey)
      ( cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_DISABLE_FIND_PACKAGE_PAM=ON \
          -DCMAKE_DISABLE_FIND_PACKAGE_LDAP=ON -DSYSTEMD_LIBRARY=SYSTEMD_LIBRARY-NOTFOUND \
        && make -C "$src/build" -j"$(nproc)" odyssey ) >"$log" 2>&1 \
        && install -s -m 755 "$src/build/sources/odyssey" "$stage/bin/odyssey" ;;
    pgbouncer)
      ( cd "$src" && ./autogen.sh && ./configure --with-openssl --without-cares --without-pam --without-ldap \
          --without-systemd && make -j"$(nproc)" pgbouncer ) >"$log" 2>&1 \
        && install -s -m 755 "$src/pgbouncer" "$stage/bin/pgbouncer" ;;
    pgpool)
      ( cd "$src" && autoreconf -fi && ./configure --with-openssl --disable-rpath LDFLAGS=-Wl,--as-needed \
          && make -j"$(nproc)" ) >"$log" 2>&1 \
        && install -s -m 755 "$src/src/pgpool" "$stage/bin/pgpool" \
        && install -s -m 755 "$src/src/tools/pgenc/pg_enc" "$stage/bin/pg_enc" ;;
  esac || { echo "its build failed (log: $log)"; return 1; }
}

# from_upstream POOLER STAGE_DIR WHY: the pinned tag cloned, checked and built, or one line saying why not
# (WHY: why the tools folder did not have it). A clone whose commit is not the pin's stops the script.
from_upstream() {
  local pooler="$1" stage="$2" why="$3" pin repository tag commit src found reason
  pin="$(pin_of "$pooler")"
  if [ -z "$pin" ]; then
    not_available "$pooler" "$why and no upstream pin for it in $upstreams"
    return 0
  fi
  read -r repository tag commit <<<"$pin"
  reason="$(build_blocker "$pooler")"
  if [ -n "$reason" ]; then
    not_available "$pooler" "$why, and from $repository $reason"
    return 0
  fi
  if ! command -v git >/dev/null || ! timeout 15 git ls-remote --exit-code "$repository" "refs/tags/$tag" \
      >/dev/null 2>&1; then
    not_available "$pooler" "$why and no network to fetch $tag from $repository"
    return 0
  fi
  src="$stage/src"
  echo "$pooler: cloning $repository at $tag"
  git -c advice.detachedHead=false clone --quiet --depth 1 --branch "$tag" "$repository" "$src" \
    || fail "$pooler: cloning $tag from $repository failed"
  found="$(git -C "$src" rev-parse 'HEAD^{commit}')"
  [ "$found" = "$commit" ] \
    || fail "$pooler: $tag of $repository is commit $found, but the pin says $commit ($upstreams): not built"
  if ! reason="$(build_from_clone "$pooler" "$src" "$stage")"; then
    not_available "$pooler" "$why; $tag of $repository cloned, but $reason"
    return 0
  fi
  finish "$pooler" "$stage"
}

# not_available POOLER REASON: its one line. For a pooler Debian packages none of, it is not available on
# this machine; for the others Debian's stays the harness's, and the line says the newer build is not staged.
not_available() {
  if [[ " ${NEEDED[*]} " == *" $1 "* ]]; then
    echo "$1: not available on this machine: $2"
  else
    echo "$1: no newer build staged (Debian's stays the harness's): $2"
  fi
  return 0
}

# install_one POOLER: from --binary, --source or the tools folder, or one line saying why not.
install_one() {
  local pooler="$1" first dir stage="$staging/$1" tarball binary
  first="${BINARIES[$pooler]%% *}"
  mkdir -p "$stage/bin"
  if [ -n "$binary_file" ]; then
    [ -f "$binary_file" ] && [ -x "$binary_file" ] || fail "$pooler: $binary_file is not an executable file"
    check_sum "$pooler" "$binary_file" "$(dirname "$(dirname "$binary_file")")/SHA256SUMS" \
      "$(basename "$(dirname "$binary_file")")/$(basename "$binary_file")" no
    cp "$binary_file" "$stage/bin/$first"
    finish "$pooler" "$stage"
    return 0
  fi
  if [ -n "$source_file" ]; then
    [ "$pooler" = odyssey ] || fail "$pooler: --source builds Odyssey only (the others: their README.md)"
    [ -f "$source_file" ] || fail "odyssey: $source_file is not a file"
    check_sum odyssey "$source_file" "$(dirname "$source_file")/SHA256SUMS" "$(basename "$source_file")" no
    build_odyssey "$source_file" "$stage"
    finish odyssey "$stage"
    return 0
  fi
  dir="$tools/$pooler"
  if [ -z "$tools" ] || [ ! -d "$tools" ]; then
    from_upstream "$pooler" "$stage" "no tools folder (POOLER_TOOLS)"
    return 0
  fi
  if [ ! -d "$dir" ]; then
    from_upstream "$pooler" "$stage" "no $pooler/ in the tools folder $tools"
    return 0
  fi
  for binary in ${BINARIES[$pooler]}; do
    [ -f "$dir/bin/$binary" ] || continue
    check_sum "$pooler" "$dir/bin/$binary" "$dir/SHA256SUMS" "bin/$binary" yes
    cp "$dir/bin/$binary" "$stage/bin/$binary"
  done
  if [ -f "$stage/bin/$first" ] && version_of "$stage/bin/$first" >/dev/null; then
    finish "$pooler" "$stage"
    return 0
  fi
  tarball="$(find "$dir" -maxdepth 1 -name 'odyssey-*.tar.gz' 2>/dev/null | sort | tail -n 1)"
  if [ "$pooler" = odyssey ] && [ -n "$tarball" ]; then
    echo "odyssey: $dir/bin/odyssey is missing or does not run here: building its source instead"
    check_sum odyssey "$tarball" "$dir/SHA256SUMS" "$(basename "$tarball")" yes
    build_odyssey "$tarball" "$stage"
    finish odyssey "$stage"
    return 0
  fi
  not_available "$pooler" \
    "$dir/bin/$first is missing or does not run here; build it from the source beside it (its README.md)"
}

mkdir -p "$root"
staging="$(mktemp -d "$root/.poolers-XXXXXX")"
trap 'rm -rf "$staging"' EXIT
for pooler in "${poolers[@]}"; do
  install_one "$pooler"
done
