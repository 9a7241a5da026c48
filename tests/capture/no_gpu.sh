#!/usr/bin/env bash
# `sightline capture` where CUDA cannot run: a clear error, exit 1, no output file.
# Also: the injection library exports only InitializeInjection and, loaded without a driver,
# returns without crashing or hanging the program.
set -u
: "${SIGHTLINE:?set SIGHTLINE to the sightline binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# Sanitizer builds have no injection library (an instrumented one cannot be injected): the
# checks below do not need the real one, so a stand-in path lets `capture` run its logic.
lib="$(dirname "$SIGHTLINE")/libsightline_cupti.so"
if [ ! -f "$lib" ] && [ -z "${SIGHTLINE_CUPTI_LIB:-}" ]; then
  export SIGHTLINE_CUPTI_LIB="$tmp/stand-in.so"
  : >"$SIGHTLINE_CUPTI_LIB"
fi

"$SIGHTLINE" capture -o "$tmp/out.json.gz" -- /bin/true >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
cat "$tmp/stderr"
[ "$rc" -eq 1 ] || fail "exit code $rc, expected 1"
grep -Eq "no NVIDIA driver/GPU found: nothing was captured|nothing was captured: /bin/true never initialised CUDA" "$tmp/stderr" \
  || fail "no clear message"
[ ! -e "$tmp/out.json.gz" ] && [ ! -e "$tmp/out.json.gz.partial" ] || fail "an output file was left behind"

"$SIGHTLINE" capture --live --socket "$tmp/nobody.sock" -- /bin/true 2>"$tmp/stderr"
rc=$?
[ "$rc" -eq 1 ] || fail "--live without a viewer: exit code $rc"
grep -q "no Sightline viewer is listening" "$tmp/stderr" || fail "--live: no clear message"

"$SIGHTLINE" capture -o "$tmp/out.json.gz" -- /definitely/not/a/program 2>"$tmp/stderr"
[ $? -eq 1 ] && grep -q "cannot run" "$tmp/stderr" || fail "missing program not reported"

# The conversion path end to end, with a fake program writing what the library would.
if [ -n "${FAKE_PROGRAM:-}" ]; then
  "$SIGHTLINE" capture -o "$tmp/fake.json.gz" -- "$FAKE_PROGRAM" >"$tmp/stdout" 2>"$tmp/stderr" || fail "fake capture: $(cat "$tmp/stderr")"
  cat "$tmp/stdout"
  grep -q "3 kernels, 1 memcpy, 1 memset on 2 streams" "$tmp/stdout" || fail "fake capture summary"
  grep -q "dropped records: 3 (Sightline queue) + 2 (CUPTI)" "$tmp/stdout" || fail "dropped records not reported"
  "$SIGHTLINE" info "$tmp/fake.json.gz" >"$tmp/info" || fail "info on the fake capture"
  "$SIGHTLINE" report "$tmp/fake.json.gz" >/dev/null || fail "report on the fake capture"
  # -o X.slsnap writes a snapshot of the store instead: it opens like any trace, same numbers.
  "$SIGHTLINE" capture -o "$tmp/fake.slsnap" -- "$FAKE_PROGRAM" >/dev/null 2>"$tmp/stderr" || fail "capture to a snapshot: $(cat "$tmp/stderr")"
  "$SIGHTLINE" info "$tmp/fake.slsnap" >"$tmp/info_snap" || fail "info on the capture snapshot"
  numbers() { grep -v -e '^file ' -e '^format ' -e '^loaded in ' "$1"; }
  [ "$(numbers "$tmp/info")" = "$(numbers "$tmp/info_snap")" ] || fail "the capture snapshot's info differs: $(diff "$tmp/info" "$tmp/info_snap")"
  grep -q "3 kernels, 7 linked" "$tmp/info_snap" || fail "capture snapshot: kernels"
  # A program that dies mid-write: what arrived is saved, with a warning.
  "$SIGHTLINE" capture -o "$tmp/crash.json.gz" -- "$FAKE_PROGRAM" --crash >"$tmp/stdout" 2>"$tmp/stderr"
  rc=$?
  cat "$tmp/stderr"
  [ "$rc" -eq 0 ] || fail "crashed program: exit $rc"
  grep -q "killed by signal 6" "$tmp/stderr" && grep -q "saving the 12 records received" "$tmp/stderr" \
    || fail "crash not reported"
  "$SIGHTLINE" info "$tmp/crash.json.gz" >/dev/null || fail "the partial capture does not load"
fi

if [ -f "$lib" ]; then
  exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" {print $3}' | grep -v '^_' | sort -u)
  [ "$exported" = "InitializeInjection" ] || fail "exported symbols: $exported"
  if [ -n "${INJECT_PROBE:-}" ] && ! nvidia-smi >/dev/null 2>&1; then
    SIGHTLINE_CAPTURE_OUT="$tmp/frames" timeout 30 "$INJECT_PROBE" "$lib" >"$tmp/probe" 2>&1
    rc=$?
    cat "$tmp/probe"
    [ "$rc" -eq 0 ] || fail "the probe program exited with $rc (crash or hang)"
    grep -q "InitializeInjection returned 1" "$tmp/probe" || fail "InitializeInjection did not return 1"
  fi
else
  echo "note: $lib absent (built without CUPTI): library checks skipped"
fi
echo "ok"
