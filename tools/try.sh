#!/usr/bin/env bash
# Installs the dependencies, builds Release and opens Sightline on the bundled sample trace.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake --preset release
cmake --build --preset release
exec build/release/app/sightline assets/sample_bert_h100.json.gz "$@"
