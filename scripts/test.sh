#!/usr/bin/env bash
# Builds Phalanx and runs the whole test suite (unit, CLI, simulation and end-to-end tests;
# the e2e tests build kube-apiserver once, see scripts/control-plane.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
cd build
ctest --output-on-failure -j2 --timeout 900
