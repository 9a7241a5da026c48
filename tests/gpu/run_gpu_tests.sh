#!/usr/bin/env bash
# GPU checks of `sightline capture`, one command: builds capture_demo.cu with nvcc, captures it
# and (when PyTorch is installed) capture_torch.py, checks kernels, streams, flows and NVTX, runs
# `sightline report` on each result, and times the demo with and without capture.
# Exits 0 with "skipped: no GPU" where nvidia-smi is absent or fails.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${SIGHTLINE:=$here/../../build/release/app/sightline}"
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
if ! nvidia-smi >/dev/null 2>&1; then
  echo "skipped: no GPU (nvidia-smi absent or failing)"
  exit 0
fi
[ -x "$SIGHTLINE" ] || { echo "FAIL: $SIGHTLINE not built"; exit 1; }
out=${GPU_TEST_OUT:-$(mktemp -d)}
mkdir -p "$out"
status=0
fail() { echo "FAIL: $*"; status=1; }

"$NVCC" -O2 -lineinfo -o "$out/capture_demo" "$here/capture_demo.cu" || { echo "FAIL: nvcc"; exit 1; }
"$out/capture_demo" || fail "capture_demo itself failed"

"$SIGHTLINE" capture -o "$out/demo.json.gz" -- "$out/capture_demo" || fail "capture of the demo"
if [ -f "$out/demo.json.gz" ]; then
  python3 "$here/check_capture.py" "$out/demo.json.gz" demo 5 2 || fail "demo trace"
  "$SIGHTLINE" info "$out/demo.json.gz" || fail "info on the demo trace"
  "$SIGHTLINE" report "$out/demo.json.gz" >"$out/demo_report.txt" || fail "report on the demo trace"
fi

if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  "$SIGHTLINE" capture -o "$out/torch.json.gz" -- python3 "$here/capture_torch.py" || fail "capture of PyTorch"
  if [ -f "$out/torch.json.gz" ]; then
    python3 "$here/check_capture.py" "$out/torch.json.gz" torch || fail "torch trace"
    "$SIGHTLINE" report "$out/torch.json.gz" >"$out/torch_report.txt" || fail "report on the torch trace"
  fi
else
  echo "note: PyTorch with CUDA not installed: torch capture skipped"
fi

# Overhead: wall time of the demo, 5 runs each, with and without capture (median).
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
time_runs() {
  for i in 1 2 3 4 5; do
    s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N)
    echo "$e - $s" | bc
  done | median
}
plain=$(time_runs "$out/capture_demo")
captured=$(time_runs "$SIGHTLINE" capture -o "$out/bench.json.gz" -- "$out/capture_demo")
echo "overhead: capture_demo median wall time ${plain}s plain, ${captured}s under capture (incl. conversion)"
echo "outputs in $out"
exit $status
