#!/usr/bin/env bash
# Runs the Nsight SQLite fuzzer for a while, seeded with seeds_nsys/ (a tiny export with 512-byte
# pages, made by make_seed.py, so that mutations reach the tables rather than only the header).
set -euo pipefail
fuzzer=$1 seconds=${2:-30}
here=$(cd "$(dirname "$0")" && pwd)
artifacts=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
cp "$here"/seeds_nsys/* "$work/corpus/"
cd "$work"
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -print_final_stats=1 -artifact_prefix="$artifacts/" corpus
