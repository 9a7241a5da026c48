#!/usr/bin/env bash
# Runs the snapshot fuzzer for a while, seeded with seeds_snapshot/ (a snapshot of a tiny trace,
# prefixed with the byte that asks the target to reseal mutated inputs: see fuzz_snapshot.cpp).
set -euo pipefail
fuzzer=$1 seconds=${2:-30}
here=$(cd "$(dirname "$0")" && pwd)
artifacts=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
cp "$here"/seeds_snapshot/* "$work/corpus/"
cd "$work"
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -print_final_stats=1 -artifact_prefix="$artifacts/" corpus
