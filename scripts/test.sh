#!/usr/bin/env bash
# Builds Phalanx warning-free (-Werror), checks the format (scripts/format-check.sh), checks the locking annotations with clang's thread-safety analysis
# (scripts/thread-safety.sh), and runs the whole test suite (unit, CLI, simulation and
# end-to-end tests; the e2e tests build kube-apiserver once, see scripts/control-plane.sh),
# then the hostile-input checks: every fuzz target for a short bound (PHALANX_FUZZ_SECONDS, default 20; build-fuzz)
# and unit tests under ASan/UBSan (build-asan).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh -DPHALANX_WERROR=ON  # CI's build is warning-free: any warning fails it
scripts/format-check.sh  # clang-format clean (.clang-format), every tracked C++ source
scripts/thread-safety.sh  # clang -fsyntax-only -Werror=thread-safety over src/ (2 jobs)
cd build
ctest --output-on-failure -j2 --timeout 900
cd ..
scripts/fuzz.sh --seconds "${PHALANX_FUZZ_SECONDS:-20}"
# Every unit test binary (phalanx_<module>_test of every module with tests) under ASan/UBSan.
scripts/sanitize.sh --unit
