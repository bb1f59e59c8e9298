#!/usr/bin/env bash
# Builds Phalanx and runs the whole test suite (unit, CLI and simulation tests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
cd build
ctest --output-on-failure -j2 --timeout 900
