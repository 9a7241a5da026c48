#!/usr/bin/env python3
"""Snapshot files from the CLI (issue 15: "every command accepts snapshot files directly",
`sightline convert`), with awkward inputs:

- info (text, JSON), report (both modes, text and JSON), diff and render give the same output on a
  snapshot as on its trace (a Kineto trace and an Nsight report); a snapshot renamed `.json` opens;
- convert refuses to write over its own trace (it would replace the user's only copy), names the
  output otherwise, and leaves no temporary file when the output is a folder;
- an empty, a cut and a foreign-version `.slsnap`: exit status 1 with one error line, never a crash;
- a snapshot of a cut-off trace gives the trace's warning line;
- neither XDG_CACHE_HOME nor HOME set: the cache is off, the command works."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SIGHTLINE = os.path.abspath(os.environ["SIGHTLINE"])
DATA = os.path.join(HERE, "..", "data")
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def run(args, cwd, env=None):
    env = dict(os.environ, SIGHTLINE_NO_CACHE="1") if env is None else env
    return subprocess.run([SIGHTLINE] + args, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def masked(text, *names):
    """Output without timings, with the file names (which differ by design) replaced."""
    text = re.sub(r'"load_seconds":[0-9.e+-]+', "", text)
    text = "\n".join(line for line in text.splitlines() if not line.startswith(("loaded in", "source ")))
    for name in names:
        text = text.replace(name, "FILE")
    return text


tmp = tempfile.mkdtemp()
try:
    # The trace and its snapshot under the same name in two folders, so figures (titled by file
    # name) can be compared byte for byte too.
    traces = {"hta_cp_simple_add_input.json.gz": "kineto", "fuser_nsys_h200_electsync.sqlite.gz": "nsys"}
    os.mkdir(os.path.join(tmp, "json"))
    os.mkdir(os.path.join(tmp, "snap"))
    for name in traces:
        shutil.copy(os.path.join(DATA, name), os.path.join(tmp, "json", name))
        p = run(["convert", name, "-o", os.path.join(tmp, "snap", name)], os.path.join(tmp, "json"))
        check(p.returncode == 0 and p.stdout.strip() == os.path.join(tmp, "snap", name), f"convert {name}: {p.stderr}")
        for args in (["info"], ["info", "--format", "json"], ["report"], ["report", "--format", "json"],
                     ["report", "--mode", "hta"], ["report", "--mode", "hta", "--format", "json"]):
            a = run(args + [name], os.path.join(tmp, "json"))
            b = run(args + [name], os.path.join(tmp, "snap"))
            check(a.returncode == 0 and b.returncode == 0, f"{args} {name}: {a.returncode} {b.returncode}")
            check(masked(a.stdout) == masked(b.stdout), f"{args} {name}: the snapshot's output differs")
            check(a.stderr == b.stderr, f"{args} {name}: stderr {a.stderr!r} != {b.stderr!r}")
        for view in ("timeline", "breakdown", "idle"):
            figures = []
            for folder in ("json", "snap"):
                out = os.path.join(tmp, f"{folder}_{view}.svg")
                p = run(["render", name, "--view", view, "-o", out], os.path.join(tmp, folder))
                check(p.returncode == 0, f"render {view} {name} ({folder}): {p.stderr}")
                figures.append(open(out, "rb").read() if os.path.exists(out) else b"")
            check(figures[0] == figures[1] and figures[0], f"render {view} {name}: the snapshot's figure differs")

    pair = ["hta_trace_compare_base.json.gz", "hta_trace_compare_test.json.gz"]
    for name in pair:
        shutil.copy(os.path.join(DATA, name), os.path.join(tmp, "json", name))
        run(["convert", name, "-o", os.path.join(tmp, "snap", name)], os.path.join(tmp, "json"))
    for args in (["diff"] + pair, ["diff"] + pair + ["--format", "json"], ["diff", pair[0], os.path.join(tmp, "json", pair[1])]):
        a, b = run(args, os.path.join(tmp, "json")), run(args, os.path.join(tmp, "snap"))
        check(a.returncode == 0 and b.returncode == 0, f"{args}: {b.stderr}")
        check(masked(a.stdout, os.path.join(tmp, "json")) == masked(b.stdout, os.path.join(tmp, "json")),
              f"{args}: the snapshots' diff differs")

    # A snapshot renamed as a JSON trace is recognised by its magic bytes.
    snap = os.path.join(tmp, "snap", "hta_cp_simple_add_input.json.gz")
    renamed = os.path.join(tmp, "renamed.json")
    shutil.copy(snap, renamed)
    p = run(["info", "-v", renamed], tmp)
    check(p.returncode == 0 and f"snapshot file ({renamed})" in p.stdout, f"renamed snapshot: {p.returncode} {p.stdout}")

    # A snapshot of a cut-off trace warns as the trace does (one line, naming the file given).
    cut = os.path.join(HERE, "..", "golden", "inputs", "truncated.json")
    cut_snap = os.path.join(tmp, "truncated.slsnap")
    p = run(["convert", cut, "-o", cut_snap], tmp)
    check(p.returncode == 0 and "this trace ends at byte 84" in p.stderr, f"convert a cut-off trace: {p.stderr!r}")
    a, b = run(["info", cut], tmp), run(["info", cut_snap], tmp)
    check(b.returncode == 0 and masked(a.stdout) == masked(b.stdout), f"info of a cut-off trace's snapshot: {b.stdout}")
    check(b.stderr == a.stderr.replace(cut, cut_snap) and b.stderr.count("\n") == 1,
          f"the cut-off warning on the snapshot: {b.stderr!r} vs {a.stderr!r}")

    # convert never writes over its own trace, whatever path names it.
    trace = os.path.join(tmp, "json", "hta_cp_simple_add_input.json.gz")
    before = open(trace, "rb").read()
    for out in (trace, "./hta_cp_simple_add_input.json.gz", "../json/hta_cp_simple_add_input.json.gz"):
        p = run(["convert", "hta_cp_simple_add_input.json.gz", "-o", out], os.path.join(tmp, "json"))
        check(p.returncode == 1 and "the output is the trace itself" in p.stderr and p.stdout == "",
              f"convert -o {out}: {p.returncode} {p.stderr!r}")
    check(open(trace, "rb").read() == before, "convert -o TRACE changed the trace")
    # A snapshot converted again: the default output is beside it (X.slsnap.slsnap), not itself.
    own = os.path.join(tmp, "own.slsnap")
    shutil.copy(snap, own)
    p = run(["convert", own], tmp)
    check(p.returncode == 0 and p.stdout.strip() == own + ".slsnap", f"convert a snapshot: {p.stdout} {p.stderr}")
    check(open(own, "rb").read() == open(own + ".slsnap", "rb").read(), "a snapshot converted again differs")
    # The output is a folder: an error, and no temporary file beside it.
    os.mkdir(os.path.join(tmp, "out_folder"))
    p = run(["convert", trace, "-o", os.path.join(tmp, "out_folder")], tmp)
    check(p.returncode == 1 and p.stderr.count("\n") == 1, f"convert -o FOLDER: {p.returncode} {p.stderr!r}")
    check(not [f for f in os.listdir(tmp) if ".tmp." in f], f"convert -o FOLDER left {os.listdir(tmp)}")
    # A folder as the trace.
    p = run(["convert", os.path.join(tmp, "out_folder")], tmp)
    check(p.returncode == 1 and "is a directory" in p.stderr, f"convert FOLDER: {p.returncode} {p.stderr!r}")

    # Broken snapshot files: one error line, exit status 1 (a crash is a negative status).
    good = open(snap, "rb").read()
    version = bytearray(good)
    version[8] = 99
    for label, content in (("empty", b""), ("magic only", good[:8]), ("header only", good[:32]),
                           ("half", good[: len(good) // 2]), ("one byte short", good[:-1]),
                           ("another version", bytes(version))):
        path = os.path.join(tmp, "broken.slsnap")
        open(path, "wb").write(content)
        for args in (["info"], ["report", "--format", "json"], ["convert", "-o", os.path.join(tmp, "x.slsnap")]):
            p = run(args[:1] + [path] + args[1:], tmp)
            check(p.returncode == 1 and p.stderr.count("\n") == 1 and p.stderr.startswith(f"sightline: {path}: "),
                  f"{label} {args[0]}: {p.returncode} {p.stderr!r}")
    check("snapshot format version 99, this build reads version" in p.stderr, f"another version: {p.stderr!r}")

    # Neither XDG_CACHE_HOME nor HOME: the cache is off; the command works and writes nothing.
    env = {k: v for k, v in os.environ.items() if k not in ("HOME", "XDG_CACHE_HOME", "SIGHTLINE_NO_CACHE")}
    p = run(["info", "-v", trace], tmp, env)
    check(p.returncode == 0 and f"source          trace file ({trace})" in p.stdout, f"no HOME: {p.returncode} {p.stderr}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print("cli snapshot files:", "FAIL" if failures else "ok", f"({len(failures)} failures)")
sys.exit(1 if failures else 0)
