#!/usr/bin/env bash
# Runs the loader fuzzer for a while, seeded with the repo's small traces (and the shared
# corpus's small ones when ../shared is beside the repo). Longer runs: see tests/fuzz/README.md.
set -euo pipefail
fuzzer=$1 seconds=${2:-30}
here=$(cd "$(dirname "$0")" && pwd)
artifacts=$PWD  # crash-* inputs stay here (the build dir under ctest), not in the temp dir
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
cp "$here"/seeds/* "$work/corpus/"
for f in "$here"/../data/*.json.gz "$here"/../../../shared/corpus/*.json.gz; do
  [ -f "$f" ] || continue
  [ "$(stat -c %s "$f")" -lt 40000 ] || continue
  (gzip -dc "$f" | head -c 65536 >"$work/corpus/$(basename "$f" .gz)") || true  # head may close the pipe early
done
cd "$work"
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -print_final_stats=1 -dict="$here/json.dict" -artifact_prefix="$artifacts/" corpus
