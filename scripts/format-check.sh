#!/usr/bin/env bash
# Checks that C++ sources are formatted as .clang-format says (clang-format 14, Debian's
# clang-format package; scripts/install-deps.sh installs it).
# Usage: scripts/format-check.sh [FILE...]
#   Without files: every *.cc and *.h tracked by git. Prints each misformatted file with
#   clang-format's first complaint and exits 1 when there is one; `clang-format -i FILE`
#   fixes it.
set -uo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
command -v "$CLANG_FORMAT" >/dev/null || { echo "format-check: $CLANG_FORMAT not found" >&2; exit 2; }
if (($#)); then
  files=("$@")
else
  mapfile -t files < <(git ls-files '*.cc' '*.h')
fi
bad=0
for f in "${files[@]}"; do
  if ! out=$("$CLANG_FORMAT" --style=file --dry-run -Werror "$f" 2>&1); then
    echo "format-check: $f is not clang-format clean (clang-format -i $f):"
    head -3 <<<"$out" | sed 's/^/  /'
    bad=$((bad + 1))
  fi
done
if ((bad)); then
  echo "format-check: $bad of ${#files[@]} files misformatted"
  exit 1
fi
echo "format-check: ${#files[@]} files clean"
