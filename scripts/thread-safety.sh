#!/usr/bin/env bash
# Clang's thread-safety analysis over the core: every non-test source of src/ is parsed by
# clang++ (-fsyntax-only, no code generated) with the flags of build/compile_commands.json
# and -Wthread-safety -Werror=thread-safety, so that an access to an ABSL_GUARDED_BY member
# without its mutex, a missing ABSL_EXCLUSIVE_LOCKS_REQUIRED, a lock not released, etc. are
# errors. The project itself is built with g++, which ignores the annotations. CI runs the
# same analysis inside the clang sanitizer build (-DPHALANX_THREAD_SAFETY=ON, scripts/sanitize.sh);
# this script checks a g++ build's sources without building them.
#
#   scripts/thread-safety.sh [--build DIR] [--jobs N]   check src/ (default build/, 2 jobs)
#   scripts/thread-safety.sh [--build DIR] --file F [-DNAME...]
#                                                       check one extra source F with the
#                                                       same flags (test/thread_safety)
#
# Needs a configured build directory (compile_commands.json; scripts/build.sh makes one),
# clang++ and jq (scripts/install-deps.sh installs both).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=build
jobs=2
file=
defines=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --file) file=$2; shift 2 ;;
    -D*) defines+=("$1"); shift ;;
    *) echo "usage: $0 [--build DIR] [--jobs N] [--file SOURCE [-DNAME...]]" >&2; exit 2 ;;
  esac
done
db="$build/compile_commands.json"
if [[ ! -f "$db" ]]; then
  echo "thread-safety: $db not found (configure first: scripts/build.sh)" >&2
  exit 2
fi
CLANGXX=${CLANGXX:-clang++}
command -v "$CLANGXX" >/dev/null || { echo "thread-safety: $CLANGXX not found" >&2; exit 2; }

# The analysis flags, in one place (the scratch test of test/thread_safety uses them too).
TSA_FLAGS="-fsyntax-only -Wthread-safety -Werror=thread-safety"

# One shell command per non-test source of src/: the compiler replaced by clang++, the
# output (-o), -c and g++'s warning set dropped (clang's differs; only the analysis counts).
commands() {
  jq -r --arg root "$root/src/" --arg cxx "$CLANGXX" --arg flags "$TSA_FLAGS" '
    .[] | select((.file | startswith($root)) and (.file | test("_(test|bench)\\.cc$") | not))
        | .file + "\t" + "cd \(.directory) && " + (.command
            | sub("^\\S+"; $cxx)
            | gsub(" -o \\S+"; "")
            | gsub(" -c "; " ")
            | gsub(" -W(all|extra|no-unused-parameter)(?= )"; "")) + " " + $flags' "$db"
}

if [[ -n "$file" ]]; then
  # The flags of the first core source, applied to `file`.
  src=$(cd "$(dirname "$file")" && pwd)/$(basename "$file")
  cmd=$(commands | sed -n 1p | cut -f 2-)
  orig=$(jq -r --arg root "$root/src/" \
    '[.[] | select((.file | startswith($root)) and (.file | test("_(test|bench)\\.cc$") | not))][0].file' "$db")
  cmd=${cmd/"$orig"/"$src"}
  eval "$cmd ${defines[*]}"
  exit
fi

start=$(date +%s)
list=$(mktemp)
trap 'rm -f "$list"' EXIT
commands >"$list"
n=$(wc -l <"$list")
# Each line is "source<TAB>command"; xargs exits non-zero when any command failed, after
# every file's diagnostics have been printed.
check_one() {
  eval "${1#*$'\t'}" || { echo "thread-safety: FAILED: ${1%%$'\t'*}" >&2; return 1; }
}
export -f check_one
if xargs -d '\n' -P "$jobs" -n 1 bash -c 'check_one "$1"' _ <"$list"; then
  echo "thread-safety: $n sources clean ($(( $(date +%s) - start ))s, $jobs jobs)"
else
  echo "thread-safety: analysis failed (see the errors above; $n sources, $(( $(date +%s) - start ))s)" >&2
  exit 1
fi
