#!/usr/bin/env bash
# Installs the Debian packages Phalanx builds and tests with (only when missing).
# Usage: scripts/install-deps.sh [--control-plane]
#   --control-plane  also what the end-to-end tests need (etcd, Go toolchain to build
#                    kube-apiserver from Debian's kubernetes source package).
set -euo pipefail
pkgs=(cmake ninja-build g++ ccache pkg-config
      libyaml-cpp-dev libsimdjson-dev libcli11-dev libspdlog-dev libfmt-dev libtbb-dev
      nlohmann-json3-dev libcurl4-openssl-dev libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev
      libmimalloc-dev  # the allocator of build/phalanx (CMakeLists.txt PHALANX_MALLOC)
      libssl-dev  # OpenSSL: the HTTPS metrics endpoint (src/metrics/http_server.cc)
      chromium  # chromium: the HTML report test renders the report headless
      clang-format  # scripts/format-check.sh (scripts/test.sh)
      clang libclang-rt-14-dev llvm  # libFuzzer, sanitizer runtimes, symbolizer (scripts/fuzz.sh)
      jq  # test/perf: scripts/scheduler-perf.sh reads benchmark JSON
      python3-yaml)  # fuzz/seed_corpus.sh, scripts/reliability.sh
if [[ "${1:-}" == "--control-plane" ]]; then
  pkgs+=(etcd-server golang-go golang-github-modern-go-reflect2-dev rsync jq dpkg-dev openssl curl
        python3)  # python3: the differential test harness (test/diff)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}"
fi
