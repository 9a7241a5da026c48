#!/usr/bin/env python3
"""GUI end-to-end: an Nsight Systems report (the committed SQLite export, gzip) opens in the real
window like a Kineto trace: a kernel selected shows its driver-API launch; a truncated export
named on the command line gives the loader's message and exit status 1, not a crash."""
import json
import os
import subprocess
import sys
import tempfile

from testkit import DATA, SIGHTLINE, check, failures, read_png  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(DATA, "fuser_nsys_h200_electsync.sqlite.gz")
TRUNCATED = os.path.join(HERE, "..", "golden", "inputs", "truncated_nsys.sqlite")


def run(trace, script_lines, size="1280x800"):
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "script.txt")
        shot, state = os.path.join(tmp, "shot.png"), os.path.join(tmp, "state.json")
        with open(script, "w") as f:
            f.write("\n".join(["wait 3"] + script_lines + ["wait 2", f"screenshot {shot}", f"state {state}", "quit"]) + "\n")
        p = subprocess.run([SIGHTLINE, trace, "--script", script, "--size", size], capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            return p.returncode, p.stderr, None, None
        return 0, p.stderr, json.load(open(state)), read_png(shot)


rc, err, state, png = run(REPORT, ["select nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NTT"])
check(rc == 0, f"report run failed: {err}")
if rc == 0:
    check(state["error"] == "", f"load error: {state['error']}")
    sel = state["selected"] or {}
    check(sel.get("gpu") is True, f"the kernel is on a GPU track: {sel}")
    check(sel.get("dur_ns") == 87583, f"exact ns duration: {sel}")
    check(sel.get("launch") == "cuLaunchKernelEx", f"launched by cuLaunchKernelEx: {sel}")
    width, height, rows = png
    check((width, height) == (1280, 800), f"screenshot size {width}x{height}")

# A file named on the command line that cannot be read: exit status 1 with the loader's message.
rc, err, state, png = run(TRUNCATED, [])
check(rc == 1, f"a truncated export exits with 1, not a crash: {rc}")
check("the file is truncated" in err, f"the loader's message: {err!r}")

print("gui nsys:", "FAILED" if failures else "ok")
sys.exit(1 if failures else 0)
