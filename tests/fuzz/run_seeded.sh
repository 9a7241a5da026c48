#!/usr/bin/env bash
# Runs a binary-format fuzzer (Nsight SQLite, snapshots) for a while, seeded only with its own
# seed folder: seeds_nsys/ is a tiny export with 512-byte pages, so mutations reach the tables
# rather than only the header; seeds_snapshot/ is a snapshot of a tiny trace, prefixed with the
# byte that asks the target to reseal mutated inputs (see fuzz_snapshot.cpp).
# Usage: run_seeded.sh FUZZER SECONDS SEED_DIR
set -euo pipefail
fuzzer=$1 seconds=${2:-30} seeds=$3
here=$(cd "$(dirname "$0")" && pwd)
artifacts=$PWD  # crash-* inputs stay here (the build dir under ctest), not in the temp dir
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
cp "$here/$seeds"/* "$work/corpus/"
cd "$work"
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -print_final_stats=1 -artifact_prefix="$artifacts/" corpus
