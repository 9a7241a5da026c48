#!/usr/bin/env python3
"""GUI end-to-end: an Nsight Systems report (the committed SQLite export, gzip) opens in the real
window like a Kineto trace: a kernel selected shows its driver-API launch; a truncated export
named on the command line gives the loader's message and exit status 1, not a crash."""
import gzip
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

# Tabs: the report, its snapshot (`sightline convert`) and a `.nsys-rep` exported by a stand-in
# `nsys` on PATH open side by side, as one tab each, and show the same events; without `nsys` on
# PATH, the `.nsys-rep` gives the export command to run.
with tempfile.TemporaryDirectory() as tmp:
    snapshot, rep = os.path.join(tmp, "electsync.slsnap"), os.path.join(tmp, "run.nsys-rep")
    p = subprocess.run([SIGHTLINE, "convert", REPORT, "-o", snapshot], capture_output=True, text=True)
    check(p.returncode == 0, f"convert failed: {p.stderr}")
    exported = os.path.join(tmp, "exported.sqlite")
    with gzip.open(REPORT) as src, open(exported, "wb") as dst:
        dst.write(src.read())
    os.mkdir(os.path.join(tmp, "bin"))
    nsys = os.path.join(tmp, "bin", "nsys")
    with open(nsys, "w") as f:
        f.write('#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ "$1" = --output ]; then out=$2; fi; shift; done\n'
                f'cp "{exported}" "$out"\n')
    os.chmod(nsys, 0o755)
    with open(rep, "w") as f:
        f.write("a report")
    env = dict(os.environ, PATH=os.path.join(tmp, "bin") + ":" + os.environ["PATH"], XDG_CACHE_HOME=os.path.join(tmp, "cache"))
    states = [os.path.join(tmp, f"state{i}.json") for i in range(3)]
    script = os.path.join(tmp, "tabs.txt")
    with open(script, "w") as f:
        for i, state in enumerate(states):
            f.write(f"tab {i}\nwait 2\nselect nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NTT\nstate {state}\n")
        f.write("quit\n")
    p = subprocess.run([SIGHTLINE, REPORT, snapshot, rep, "--script", script, "--size", "1280x800"], capture_output=True,
                       text=True, env=env, timeout=180)
    check(p.returncode == 0, f"three tabs: exit {p.returncode}: {p.stderr}")
    if p.returncode == 0:
        tabs = [json.load(open(state)) for state in states]
        check(tabs[0]["tab_paths"] == [REPORT, snapshot, rep], f"tab paths: {tabs[0]['tab_paths']}")
        check([t["source"] for t in tabs] == ["trace file", "snapshot file", "trace file"], f"sources: {[t['source'] for t in tabs]}")
        for t in tabs:
            check(t["error"] == "" and t["events"] == tabs[0]["events"] and t["selected"] == tabs[0]["selected"],
                  f"tab {t['path']}: error {t['error']!r}, events {t['events']}, selected {t['selected']}")
        check(tabs[0]["events"] == 1642, f"events: {tabs[0]['events']}")

    env["PATH"] = "/usr/bin:/bin"  # no nsys there
    p = subprocess.run([SIGHTLINE, rep, "--script", script], capture_output=True, text=True, env=env, timeout=120)
    check(p.returncode == 1, f"a .nsys-rep without nsys exits with 1: {p.returncode}")
    check(f"nsys export --type sqlite --output '{rep[:-9]}.sqlite' '{rep}'" in p.stderr, f"the command to run: {p.stderr!r}")

# File > Open's path, from the script: `open PATH` calls what the dialog calls with the chosen file.
# The bundled sample shows first (no file on the command line); the report and a `.nsys-rep`
# (exported by a stand-in nsys) then open in tabs of their own. With the cache off the export is a
# temporary file, gone afterwards; with it on, the export and the snapshots land in the cache folder.
def open_through_script(tmp, rep, cache_on):
    env = dict(os.environ, PATH=os.path.join(tmp, "bin") + ":" + os.environ["PATH"], XDG_CACHE_HOME=os.path.join(tmp, "cache"),
               TMPDIR=os.path.join(tmp, "tmpdir"))
    env.pop("SIGHTLINE_NO_CACHE", None)
    if not cache_on:
        env["SIGHTLINE_NO_CACHE"] = "1"
    os.makedirs(env["TMPDIR"], exist_ok=True)
    states = [os.path.join(tmp, f"open{i}.json") for i in range(2)]
    script = os.path.join(tmp, "open.txt")
    with open(script, "w") as f:
        for path, state in zip([REPORT, rep], states):
            f.write(f"open {path}\nwait 2\nselect nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NTT\nstate {state}\n")
        f.write("quit\n")
    p = subprocess.run([SIGHTLINE, "--script", script, "--size", "1280x800"], capture_output=True, text=True, env=env,
                       timeout=180)
    check(p.returncode == 0, f"open through the script (cache {'on' if cache_on else 'off'}): exit {p.returncode}: {p.stderr}")
    if p.returncode != 0:
        return env
    tabs = [json.load(open(state)) for state in states]
    check(len(tabs[0]["tab_paths"]) == 2 and tabs[0]["tab_paths"][1] == REPORT, f"sample, then the report: {tabs[0]['tab_paths']}")
    check(tabs[1]["tab_paths"][1:] == [REPORT, rep], f"then the .nsys-rep: {tabs[1]['tab_paths']}")
    for t in tabs:
        check(t["path"] in (REPORT, rep) and t["error"] == "" and t["events"] == 1642, f"tab {t['path']}: {t['error']!r}, {t['events']} events")
        sel = t["selected"] or {}
        check(sel.get("dur_ns") == 87583 and sel.get("launch") == "cuLaunchKernelEx", f"tab {t['path']}: selected {sel}")
    return env


with tempfile.TemporaryDirectory() as tmp:
    rep = os.path.join(tmp, "run.nsys-rep")
    exported = os.path.join(tmp, "exported.sqlite")
    with gzip.open(REPORT) as src, open(exported, "wb") as dst:
        dst.write(src.read())
    os.mkdir(os.path.join(tmp, "bin"))
    with open(os.path.join(tmp, "bin", "nsys"), "w") as f:
        f.write('#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ "$1" = --output ]; then out=$2; fi; shift; done\n'
                f'cp "{exported}" "$out"\n')
    os.chmod(os.path.join(tmp, "bin", "nsys"), 0o755)
    with open(rep, "w") as f:
        f.write("a report")
    env = open_through_script(tmp, rep, cache_on=False)
    check(os.listdir(env["TMPDIR"]) == [], f"the temporary export is removed: {os.listdir(env['TMPDIR'])}")
    # (Mesa keeps its shader cache under XDG_CACHE_HOME too: only sightline/ is Sightline's.)
    check(not os.path.exists(os.path.join(tmp, "cache", "sightline")), "nothing goes into the cache with it off")
    env = open_through_script(tmp, rep, cache_on=True)
    folder = os.path.join(tmp, "cache", "sightline")
    exports = sorted(os.path.splitext(n)[1] for n in os.listdir(os.path.join(folder, "nsys"))) if os.path.isdir(folder) else []
    check(exports == [".key", ".sqlite"], f"the export and its key in the cache: {exports}")
    snapshots = [n for n in os.listdir(folder) if n.endswith(".slsnap")] if os.path.isdir(folder) else []
    check(len(snapshots) >= 2, f"the report's and the .nsys-rep's snapshots in the cache: {snapshots}")

print("gui nsys:", "FAILED" if failures else "ok")
sys.exit(1 if failures else 0)
