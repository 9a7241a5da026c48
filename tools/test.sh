#!/usr/bin/env bash
# Installs the dependencies, then builds and runs every test: Release, ASan+UBSan, and a short
# libFuzzer run of every reader of outside bytes. CI runs exactly this (.ci/run).
# The test presets (CMakePresets.json) run independent tests on both cores; the ASan tree builds
# at -O1 -g1, half the compile time of -O2 -g, and line tables are all its stack traces need.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
for preset in release asan; do
  cmake --preset "$preset"
  cmake --build --preset "$preset"
  ctest --preset "$preset"
done
cmake --preset fuzz
cmake --build --preset fuzz --target fuzzers
ctest --preset fuzz -R "^fuzz"
