#!/usr/bin/env bash
# Checks that the runtime stage of deploy/Dockerfile installs every shared library a binary
# loads: each library that `ldd BINARY` resolves must belong to a Debian package that the
# stage's `apt-get install` list brings in (the list and its Depends / Pre-Depends, through
# apt-cache) or that the base image has (its Essential packages and apt's dependencies).
# Fails naming the library and its package. Needs a Debian host (dpkg, apt-cache).
# Usage: scripts/image-libraries.sh BINARY [DOCKERFILE]   (default deploy/Dockerfile)
set -euo pipefail
bin=${1:?usage: image-libraries.sh BINARY [DOCKERFILE]}
dockerfile=${2:-"$(dirname "$0")/../deploy/Dockerfile"}
# The install list of the last stage: the words after "install" up to "&&", options dropped.
listed=$(python3 - "$dockerfile" <<'PY'
import re, sys
text = open(sys.argv[1]).read().replace("\\\n", " ")
stages = re.split(r"^FROM\s", text, flags=re.M)
m = re.findall(r"apt-get install ([^&]*)&&", stages[-1])
if not m:
    sys.exit(f"{sys.argv[1]}: the last stage has no 'apt-get install ... &&'")
print(" ".join(w for w in m[-1].split() if not w.startswith("-")))
PY
)
essential=$(dpkg-query -W -f='${Package} ${Essential}\n' | awk '$2 == "yes" {print $1}')
closure=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
            --no-replaces --no-enhances $listed apt $essential 2>/dev/null |
          grep -v '^ ' | sed 's/:.*//' | sort -u)
missing=0
while read -r lib; do
  real=$(readlink -f "$lib")
  owner=$(dpkg -S "$real" 2>/dev/null || dpkg -S "/usr$real" 2>/dev/null || dpkg -S "${real#/usr}" 2>/dev/null || true)
  owner=${owner%%:*}
  if [[ -z $owner ]]; then
    echo "image-libraries: $lib ($real) belongs to no Debian package" >&2
    missing=1
  elif ! grep -qx "$owner" <<<"$closure"; then
    echo "image-libraries: $dockerfile: $lib comes from package $owner, which the runtime stage does not install" >&2
    missing=1
  fi
done < <(ldd "$bin" | awk '/=> \// {print $3}')
[[ $missing == 0 ]] || exit 1
echo "image-libraries: every library of $(basename "$bin") is in the image ($(wc -w <<<"$listed") packages listed)"
