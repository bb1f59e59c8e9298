#!/usr/bin/env bash
# A real Kubernetes control plane (etcd + kube-apiserver v1.20.2) on loopback, for the
# end-to-end tests and for trying `phalanx run` by hand. See ../shared/docs/control-plane.md.
#
# Usage:
#   scripts/control-plane.sh build          Build kube-apiserver, kube-scheduler and
#                                           kube-controller-manager v1.20.2 from Debian's
#                                           `kubernetes` source package, once;
#                                           cached in ~/.cache/phalanx-k8s/<version>/
#                                           ($PHALANX_K8S_CACHE overrides ~/.cache/phalanx-k8s).
#                                           Prints the cache dir. Exit 0 when the binaries
#                                           are there.
#   scripts/control-plane.sh start DIR      Start etcd + kube-apiserver on free loopback
#                                           ports with TLS and token auth; state in DIR
#                                           (created). Writes DIR/env (shell variables),
#                                           DIR/admin.kubeconfig, DIR/phalanx.kubeconfig
#                                           (the `phalanx` user, bound to deploy/rbac.yaml's
#                                           ClusterRole), DIR/ca.crt, and waits for /readyz.
#   scripts/control-plane.sh controllers DIR [LIST]
#                                           Start kube-controller-manager against the
#                                           control plane of `start DIR` (admin credentials,
#                                           no leader election, no serving ports) running
#                                           the controllers in LIST (comma-separated; default
#                                           persistentvolume-binder, pv-protection,
#                                           pvc-protection, statefulset, namespace,
#                                           garbagecollector), and wait until it has synced.
#   scripts/control-plane.sh stop DIR       Stop the processes started by `start DIR` and
#                                           `controllers DIR` (by the PIDs they recorded)
#                                           and remove DIR.
#   scripts/control-plane.sh fetch-source DIR
#                                           Fetch Debian's kubernetes source package into DIR
#                                           (vendored reflect2 replaced by Debian's 1.0.2) and
#                                           print the unpacked source dir.
#   scripts/control-plane.sh kubectl DIR ARGS...
#                                           curl-based helper: `get|post|put|delete PATH
#                                           [FILE]` with the admin token (no kubectl here).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
K8S_VERSION="1.20.2"
DEB_VERSION_GLOB="1.20.5+really1.20.2"
CACHE_ROOT="${PHALANX_K8S_CACHE:-$HOME/.cache/phalanx-k8s}"
CACHE="$CACHE_ROOT/$K8S_VERSION"

log() { echo "control-plane: $*" >&2; }
die() { echo "control-plane: error: $*" >&2; exit 1; }

# BUILD-INFO records how the cached binaries were built; binaries without it (built with
# the vendored reflect2 1.0.1, whose JSON decoding panics under Go >= 1.18) are rebuilt.
BUILD_INFO="reflect2 1.0.2 (Debian golang-github-modern-go-reflect2-dev)"
have_binaries() {
  [[ -x "$CACHE/kube-apiserver" && -x "$CACHE/kube-scheduler" &&
     -x "$CACHE/kube-controller-manager" ]] &&
    [[ "$(cat "$CACHE/BUILD-INFO" 2>/dev/null)" == "$BUILD_INFO" ]]
}

enable_deb_src() {
  if grep -rqs "^Types:.*deb-src" /etc/apt/sources.list.d/ 2>/dev/null ||
     grep -qs "^deb-src" /etc/apt/sources.list 2>/dev/null; then
    return
  fi
  local sudo=""
  [[ $(id -u) -ne 0 ]] && sudo=sudo
  log "enabling Debian source packages (/etc/apt/sources.list.d/phalanx-deb-src.sources)"
  $sudo tee /etc/apt/sources.list.d/phalanx-deb-src.sources >/dev/null <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  $sudo apt-get update -qq
}

# Fetches Debian's kubernetes source package into WORK (an existing directory), swaps the
# vendored reflect2 for Debian's, and prints the unpacked source dir. Shared with
# scripts/scheduler-perf.sh (through `fetch-source DIR`).
fetch_source() {  # WORK
  local work=$1
  "$ROOT/scripts/install-deps.sh" --control-plane >&2
  enable_deb_src >&2
  log "fetching Debian's kubernetes source package into $work"
  (cd "$work" && apt-get source -qq kubernetes >&2) ||
    die "apt-get source kubernetes failed (are deb-src entries enabled?)"
  local src
  src="$(find "$work" -maxdepth 1 -type d -name "kubernetes-$DEB_VERSION_GLOB*" | head -1)"
  [[ -n "$src" ]] || src="$(find "$work" -maxdepth 1 -type d -name 'kubernetes-*' | head -1)"
  [[ -f "$src/Makefile" ]] || die "unexpected source layout in $src"
  # Kubernetes 1.20 vendors modern-go/reflect2 1.0.1, which crashes under Go >= 1.18
  # (every JSON request body and response panics in json-iterator: "nil pointer
  # dereference in reflect2.(*frozenConfig).Type2"). Debian ships 1.0.2, the fixed
  # release with the same API: use it.
  local r2=/usr/share/gocode/src/github.com/modern-go/reflect2
  [[ -f "$r2/reflect2.go" ]] || die "$r2 missing: install golang-github-modern-go-reflect2-dev"
  rm -rf "$src/vendor/github.com/modern-go/reflect2"
  cp -r "$r2" "$src/vendor/github.com/modern-go/reflect2"
  echo "$src"
}

cmd_build() {
  if have_binaries; then echo "$CACHE"; return 0; fi
  mkdir -p "$CACHE_ROOT"
  # One build at a time (ctest may start several fixtures; other shells may too).
  exec 9>"$CACHE_ROOT/.build.lock"
  flock 9
  if have_binaries; then echo "$CACHE"; return 0; fi
  BUILD_WORK="$(mktemp -d "$CACHE_ROOT/build.XXXXXX")"
  trap 'rm -rf "${BUILD_WORK:-}"' EXIT
  local work="$BUILD_WORK" src
  src="$(fetch_source "$work")"
  log "building kube-apiserver, kube-scheduler and kube-controller-manager v$K8S_VERSION (GOPATH mode, ~10 min on 2 cores)"
  local start=$SECONDS
  (
    cd "$src"
    export GOPATH="$src/.go" CGO_ENABLED=0 GO111MODULE=off GOFLAGS="" GOCACHE="$work/gocache"
    mkdir -p .go/src/k8s.io
    ln -sfn ../../.. .go/src/k8s.io/kubernetes
    cd .go/src/k8s.io/kubernetes
    make WHAT="cmd/kube-apiserver cmd/kube-scheduler cmd/kube-controller-manager" GOFLAGS="" \
      KUBE_VERBOSE=0 >&2
  ) || die "kube-apiserver build failed (see the output above)"
  local out="$src/_output/local/bin/linux/amd64"
  [[ -x "$out/kube-apiserver" ]] || out="$(dirname "$(find "$src/_output" -name kube-apiserver -type f | head -1)")"
  [[ -x "$out/kube-apiserver" && -x "$out/kube-scheduler" && -x "$out/kube-controller-manager" ]] ||
    die "binaries not found under $src/_output"
  mkdir -p "$CACHE.tmp"
  cp "$out/kube-apiserver" "$out/kube-scheduler" "$out/kube-controller-manager" "$CACHE.tmp/"
  echo "$BUILD_INFO" >"$CACHE.tmp/BUILD-INFO"
  rm -rf "$CACHE" && mv "$CACHE.tmp" "$CACHE"
  log "built in $((SECONDS - start)) s; cached in $CACHE"
  echo "$CACHE"
}

free_port() {
  # The kernel picks a free ephemeral port; another process could take it before we bind,
  # which `start` detects (the server fails to start) and reports.
  python3 - <<'EOF' 2>/dev/null || shuf -i 20000-60000 -n 1
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()
EOF
}

write_kubeconfig() {  # FILE SERVER CA TOKEN USER
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: $2
    certificate-authority: $3
users:
- name: $5
  user:
    token: $4
contexts:
- name: $5@local
  context:
    cluster: local
    user: $5
current-context: $5@local
EOF
}

api() {  # METHOD URL TOKEN CA [BODY-FILE] ; prints body, returns 0 on 2xx
  local method=$1 url=$2 token=$3 ca=$4 body=${5:-}
  local args=(-sS --cacert "$ca" -H "Authorization: Bearer $token" -X "$method" -o /dev/stdout -w '\n%{http_code}')
  if [[ -n "$body" ]]; then
    local ct="application/json"
    [[ "$method" == PATCH ]] && ct="application/merge-patch+json"
    [[ "$body" == *.yaml || "$body" == *.yml ]] && ct="application/yaml"
    args+=(-H "Content-Type: $ct" --data-binary "@$body")
  fi
  local out code
  out="$(curl "${args[@]}" "$url")" || return 1
  code="${out##*$'\n'}"
  printf '%s\n' "${out%$'\n'*}"
  [[ "$code" =~ ^2 ]]
}

cmd_start() {
  local dir=${1:?start needs a state directory}
  have_binaries || die "no kube-apiserver in $CACHE: run '$0 build' first"
  command -v etcd >/dev/null || die "etcd not found: run scripts/install-deps.sh --control-plane"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  local etcd_port etcd_peer api_port
  etcd_port=$(free_port); etcd_peer=$(free_port); api_port=$(free_port)
  while [[ $etcd_peer == "$etcd_port" ]]; do etcd_peer=$(free_port); done
  while [[ $api_port == "$etcd_port" || $api_port == "$etcd_peer" ]]; do api_port=$(free_port); done

  local admin_token phalanx_token
  admin_token="admin-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  phalanx_token="phalanx-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  cat >"$dir/tokens.csv" <<EOF
$admin_token,admin,admin-uid,"system:masters"
$phalanx_token,phalanx,phalanx-uid,"system:authenticated"
EOF
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/sa.key" -out "$dir/sa.crt" \
    -days 2 -subj "/CN=service-accounts" >/dev/null 2>&1 || die "openssl failed"

  mkdir -p "$dir/etcd" "$dir/certs"
  etcd --data-dir "$dir/etcd" --name phalanx-e2e \
    --listen-client-urls "http://127.0.0.1:$etcd_port" \
    --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer" \
    --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
    --initial-cluster "phalanx-e2e=http://127.0.0.1:$etcd_peer" \
    >"$dir/etcd.log" 2>&1 &
  echo $! >"$dir/etcd.pid"

  # PHALANX_E2E_AUDIT=1: an audit log of the phalanx user's writes with their request bodies
  # ($dir/audit.log, JSON lines; PHALANX_E2E_AUDIT_LOG in env), for cases that check what
  # the server kept of each write.
  local audit=()
  if [[ "${PHALANX_E2E_AUDIT:-}" == 1 ]]; then
    printf '%s\n' 'apiVersion: audit.k8s.io/v1' 'kind: Policy' 'omitStages: [RequestReceived]' \
      'rules:' '- level: Request' '  users: [phalanx]' '  verbs: [create, update, patch]' \
      '- level: None' >"$dir/audit-policy.yaml"
    audit=(--audit-policy-file="$dir/audit-policy.yaml" --audit-log-path="$dir/audit.log"
           --audit-log-format=json)
  fi
  "$CACHE/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$etcd_port" \
    --secure-port="$api_port" --bind-address=127.0.0.1 --insecure-port=0 \
    --advertise-address=127.0.0.1 \
    --cert-dir="$dir/certs" --token-auth-file="$dir/tokens.csv" \
    --authorization-mode=RBAC \
    --service-account-key-file="$dir/sa.crt" \
    --service-account-signing-key-file="$dir/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc \
    --service-cluster-ip-range=10.0.0.0/24 \
    --disable-admission-plugins=ServiceAccount,TaintNodesByCondition \
    "${audit[@]}" \
    >"$dir/apiserver.log" 2>&1 &
  echo $! >"$dir/apiserver.pid"

  local server="https://127.0.0.1:$api_port"
  local ca="$dir/certs/apiserver.crt"
  local deadline=$((SECONDS + 120))
  until [[ -f "$ca" ]] && curl -sf --cacert "$ca" -H "Authorization: Bearer $admin_token" \
      "$server/readyz" >/dev/null 2>&1; do
    if ! kill -0 "$(cat "$dir/apiserver.pid")" 2>/dev/null; then
      tail -20 "$dir/apiserver.log" >&2
      die "kube-apiserver exited (log: $dir/apiserver.log)"
    fi
    if ! kill -0 "$(cat "$dir/etcd.pid")" 2>/dev/null; then
      tail -20 "$dir/etcd.log" >&2
      die "etcd exited (log: $dir/etcd.log)"
    fi
    ((SECONDS < deadline)) || die "kube-apiserver not ready after 120 s (log: $dir/apiserver.log)"
    sleep 0.5
  done
  cp "$ca" "$dir/ca.crt"
  write_kubeconfig "$dir/admin.kubeconfig" "$server" "$dir/ca.crt" "$admin_token" admin
  write_kubeconfig "$dir/phalanx.kubeconfig" "$server" "$dir/ca.crt" "$phalanx_token" phalanx
  cat >"$dir/env" <<EOF
SERVER=$server
CA=$dir/ca.crt
ADMIN_TOKEN=$admin_token
PHALANX_TOKEN=$phalanx_token
ETCD_PORT=$etcd_port
API_PORT=$api_port
EOF
  if [[ "${PHALANX_E2E_AUDIT:-}" == 1 ]]; then echo "PHALANX_E2E_AUDIT_LOG=$dir/audit.log" >>"$dir/env"; fi
  # The phalanx user gets exactly deploy/rbac.yaml's ClusterRole.
  local rbac_json="$dir/rbac-phalanx.json"
  cat >"$rbac_json" <<'EOF'
{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding",
 "metadata":{"name":"phalanx-e2e-user"},
 "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"phalanx"},
 "subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"phalanx"}]}
EOF
  apply_rbac "$server" "$admin_token" "$dir/ca.crt" "$dir" >/dev/null ||
    die "could not create the phalanx ClusterRole"
  api POST "$server/apis/rbac.authorization.k8s.io/v1/clusterrolebindings" "$admin_token" \
    "$dir/ca.crt" "$rbac_json" >/dev/null || die "could not bind the phalanx user"
  log "kube-apiserver ready at $server (state in $dir)"
}

# Creates deploy/rbac.yaml's ClusterRole (only the ClusterRole: the ServiceAccount binding
# is for in-cluster use).
apply_rbac() {  # SERVER TOKEN CA DIR
  local f="$4/clusterrole.yaml"
  awk '/^---/ { if (keep) printf "%s", doc; doc = ""; keep = 0; next }
       { doc = doc $0 "\n" } /^kind: ClusterRole$/ { keep = 1 }
       END { if (keep) printf "%s", doc }' "$ROOT/deploy/rbac.yaml" >"$f"
  [[ -s "$f" ]] || { log "no ClusterRole in deploy/rbac.yaml"; return 1; }
  api POST "$1/apis/rbac.authorization.k8s.io/v1/clusterroles" "$2" "$3" "$f"
}

# kube-controller-manager v1.20 with the controllers that live tests need: the PV binder
# (completes the bindings VolumeBinding's PreBind starts), PV/PVC protection, StatefulSets
# (pods and claims from volumeClaimTemplates), namespace deletion and garbage collection.
# The controller names are v1.20's (cmd/kube-controller-manager/app/controllermanager.go,
# NewControllerInitializers).
DEFAULT_CONTROLLERS="persistentvolume-binder,pv-protection,pvc-protection,statefulset,namespace,garbagecollector"

cmd_controllers() {
  local dir=${1:?controllers needs the state directory of 'start'} list=${2:-$DEFAULT_CONTROLLERS}
  [[ -f "$dir/env" ]] || die "$dir/env missing: run '$0 start $dir' first"
  [[ -x "$CACHE/kube-controller-manager" ]] ||
    die "no kube-controller-manager in $CACHE: run '$0 build' first"
  dir="$(cd "$dir" && pwd)"
  # --port=0 / --secure-port=0: no serving ports (nothing here scrapes them, and fixed
  # ports would collide between parallel tests). --kube-api-qps/burst: the default 20/30
  # makes the PV controller take minutes over the differential test's ~1000 PVs
  # (test/diff --volumes); the API server is on loopback.
  "$CACHE/kube-controller-manager" \
    --kubeconfig="$dir/admin.kubeconfig" \
    --kube-api-qps=1000 --kube-api-burst=2000 \
    --controllers="$list" \
    --leader-elect=false --use-service-account-credentials=false \
    --port=0 --secure-port=0 \
    --service-account-private-key-file="$dir/sa.key" \
    --root-ca-file="$dir/ca.crt" \
    >"$dir/controller-manager.log" 2>&1 &
  echo $! >"$dir/controller-manager.pid"
  # Ready when every informer has synced ("Caches are synced" for the last controller
  # started); a process that exits is reported with its log.
  local deadline=$((SECONDS + 90))
  until grep -q "Caches are synced for" "$dir/controller-manager.log" 2>/dev/null; do
    if ! kill -0 "$(cat "$dir/controller-manager.pid")" 2>/dev/null; then
      tail -20 "$dir/controller-manager.log" >&2
      die "kube-controller-manager exited (log: $dir/controller-manager.log)"
    fi
    ((SECONDS < deadline)) || die "kube-controller-manager not synced after 90 s (log: $dir/controller-manager.log)"
    sleep 0.5
  done
  log "kube-controller-manager running ($list; log $dir/controller-manager.log)"
}

cmd_stop() {
  local dir=${1:?stop needs the state directory}
  [[ -d "$dir" ]] || return 0
  local f pid
  for f in controller-manager apiserver etcd; do
    [[ -f "$dir/$f.pid" ]] || continue
    pid=$(cat "$dir/$f.pid")
    if kill "$pid" 2>/dev/null; then
      for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
  done
  rm -rf "$dir"
}

cmd_kubectl() {
  local dir=${1:?kubectl needs the state directory}; shift
  # shellcheck disable=SC1091
  source "$dir/env"
  local verb=${1:?verb} path=${2:?path} body=${3:-}
  case "$verb" in
    get) api GET "$SERVER$path" "$ADMIN_TOKEN" "$CA" ;;
    post) api POST "$SERVER$path" "$ADMIN_TOKEN" "$CA" "$body" ;;
    put) api PUT "$SERVER$path" "$ADMIN_TOKEN" "$CA" "$body" ;;
    patch) api PATCH "$SERVER$path" "$ADMIN_TOKEN" "$CA" "$body" ;;
    delete) api DELETE "$SERVER$path" "$ADMIN_TOKEN" "$CA" ;;
    *) die "unknown verb $verb" ;;
  esac
}

case "${1:-}" in
  build) cmd_build ;;
  start) shift; cmd_start "$@" ;;
  controllers) shift; cmd_controllers "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  kubectl) shift; cmd_kubectl "$@" ;;
  cache-dir) echo "$CACHE" ;;
  fetch-source) shift; mkdir -p "${1:?fetch-source needs a directory}"; fetch_source "$(cd "$1" && pwd)" ;;
  *) sed -n '2,37p' "$0"; exit 2 ;;
esac
