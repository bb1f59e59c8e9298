#!/usr/bin/env bash
# Mutation check of the conformance suite (src/conformance, phalanx_conformance_test): the
# suite must fail when Phalanx reads or writes a field under a wrong name.
#
# In a temporary copy of the working tree (tracked and untracked files, not build/), it
#   0. builds phalanx_conformance_test and runs it: the unmutated suite must pass;
#   1. renames one field a decoder reads: the scheduling.k8s.io PodGroup decoder
#      (src/gang/dialects.cc) reads spec."schedulingConstraint" instead of
#      spec.schedulingConstraints (the field audit must see the topology dropped in silence);
#   2. renames one field a status writer writes: the PodGroup status conditions of
#      LiveClusterClient (src/client/cluster_client.cc) carry "lastTransitionTim" instead of
#      lastTransitionTime (the write validation must refuse the unknown field);
# rebuilding and running the suite after each (one mutant at a time). Exit status 0 only if
# the unmutated suite passes and every mutant makes it fail; 1 otherwise; 2 on a usage or
# setup error (a mutant whose text is not found, a build error, a suite that skips).
#
# Not part of CI (it builds the suite three times). The copy builds with ccache under
# CCACHE_BASEDIR=<the copy> so its objects hit the cache of a build/ of any checkout under
# base_dir (the same relative paths); only the touched files and the tests recompile.
#
# Usage: scripts/conformance-mutants.sh [--keep] [-- CMAKE_ARGS...]
#   --keep        keep the temporary copy (printed) instead of removing it
#   CMAKE_ARGS    extra configure arguments (default: those of scripts/build.sh,
#                 -DCMAKE_BUILD_TYPE=RelWithDebInfo)
# Environment: PHALANX_UPSTREAM_DIR (default: <repo>/../shared/upstream), the reference data
# the suite reads; NICE (default 10), JOBS (default 2).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
KEEP=false
CMAKE_ARGS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
while (($#)); do
  case "$1" in
    --keep) KEEP=true; shift ;;
    --) shift; CMAKE_ARGS+=("$@"); break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "conformance-mutants: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

log() { echo "conformance-mutants: $*" >&2; }
die() { echo "conformance-mutants: error: $*" >&2; exit 2; }

UPSTREAM="${PHALANX_UPSTREAM_DIR:-$ROOT/../shared/upstream}"
[[ -d "$UPSTREAM/k8s-api-fixtures" ]] ||
  die "$UPSTREAM: no reference data (../shared/upstream): the suite would skip"
UPSTREAM="$(cd "$UPSTREAM" && pwd)"

TMP="$(mktemp -d /tmp/phalanx-mutants.XXXXXX)"
cleanup() {
  if $KEEP; then log "kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
TREE="$TMP/tree"
mkdir -p "$TREE"
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard |
  grep -zv '^build/' | tar --null -T - -cf -) | tar -xf - -C "$TREE"
log "copy of $ROOT in $TREE"

export CCACHE_BASEDIR="$TREE"
export PHALANX_UPSTREAM_DIR="$UPSTREAM"
cmake -S "$TREE" -B "$TREE/build" -G Ninja "${CMAKE_ARGS[@]}" >"$TMP/configure.log" 2>&1 ||
  { tail -20 "$TMP/configure.log" >&2; die "configure failed ($TMP/configure.log)"; }

# run_suite NAME: builds and runs the suite; prints PASS or FAIL (2: build error or skip).
run_suite() {
  local name=$1
  if ! nice -n "${NICE:-10}" ninja -C "$TREE/build" -j "${JOBS:-2}" phalanx_conformance_test \
      >"$TMP/build-$name.log" 2>&1; then
    tail -30 "$TMP/build-$name.log" >&2
    die "$name: build failed ($TMP/build-$name.log)"
  fi
  local bin
  bin="$(find "$TREE/build" -name phalanx_conformance_test -type f -perm -u+x | head -1)"
  [[ -n "$bin" ]] || die "$name: no phalanx_conformance_test binary"
  local rc=0
  (cd "$TREE" && "$bin") >"$TMP/test-$name.log" 2>&1 || rc=$?
  if grep -q '^\[  SKIPPED \]' "$TMP/test-$name.log"; then
    grep '^\[  SKIPPED \]\|Skipped' "$TMP/test-$name.log" >&2 || true
    die "$name: the suite skipped tests (reference data?): $TMP/test-$name.log"
  fi
  if ((rc == 0)); then echo PASS; else echo FAIL; fi
}

# mutate FILE FROM TO: replaces the one occurrence of the fixed text FROM in FILE by TO.
mutate() {
  local file="$TREE/$1" n
  n=$(grep -cF -- "$2" "$file" || true)
  ((n == 1)) || die "$1: expected the text to mutate once, found it $n times: $2"
  cp "$file" "$file.orig"
  FROM="$2" TO="$3" perl -pi -e 's/\Q$ENV{FROM}\E/$ENV{TO}/' "$file"
  ! grep -qF -- "$2" "$file" || die "$1: the mutation did not apply"
}
# The restored file gets a new mtime: mv keeps the copy's, older than the mutant's object,
# and ninja would keep the mutant in the next build.
restore() { mv "$TREE/$1.orig" "$TREE/$1" && touch "$TREE/$1"; }

# Failed test names of a run, for the report.
failed_tests() {
  grep '^\[  FAILED  \] [A-Za-z]' "$TMP/test-$1.log" | sed 's/^\[  FAILED  \] //' |
    sed 's/ (.*//' | sort -u | tr '\n' ' '
}
first_failure() {
  grep -m1 -A4 'Failure$' "$TMP/test-$1.log" | sed 's/^/    /' | cut -c1-260
}

ok=true
base="$(run_suite unmutated)"
if [[ "$base" == PASS ]]; then echo "unmutated: suite passes"; else echo "unmutated: suite FAILS"; fi
if [[ "$base" != PASS ]]; then
  ok=false
  echo "  failed: $(failed_tests unmutated)"
fi

MUTANTS=(
  "decoder|src/gang/dialects.cc|UpstreamTopology(Child(spec, \"schedulingConstraints\"), \"spec.schedulingConstraints\", version, &s,|UpstreamTopology(Child(spec, \"schedulingConstraint\"), \"spec.schedulingConstraints\", version, &s,|PodGroup decoder reads spec.schedulingConstraint (not schedulingConstraints)"
  "status-writer|src/client/cluster_client.cc|\",\\\"lastTransitionTime\\\":\"|\",\\\"lastTransitionTim\\\":\"|PodGroup status condition written as lastTransitionTim (not lastTransitionTime)"
)
for m in "${MUTANTS[@]}"; do
  IFS='|' read -r name file from to what <<<"$m"
  mutate "$file" "$from" "$to"
  r="$(run_suite "$name")"
  restore "$file"
  if [[ "$r" == FAIL ]]; then
    echo "mutant $name ($what): suite FAILS (killed)"
    echo "  failed: $(failed_tests "$name")"
    first_failure "$name"
  else
    echo "mutant $name ($what): suite PASSES (survived)"
    ok=false
  fi
done

if $ok; then
  echo "conformance-mutants: OK (the unmutated suite passes, every mutant is killed)"
  exit 0
fi
echo "conformance-mutants: NOT OK"
exit 1
