#!/usr/bin/env bash
# Installs the dependencies, then builds and runs every test: Release, ASan+UBSan, and a short
# libFuzzer run of the loader. CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
for preset in release asan; do
  cmake --preset "$preset"
  cmake --build --preset "$preset"
  ctest --preset "$preset"
done
cmake --preset fuzz
cmake --build --preset fuzz --target fuzz_loader fuzz_nsys fuzz_nsys_btree fuzz_snapshot
ctest --preset fuzz -R "^fuzz"
