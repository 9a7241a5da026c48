#!/usr/bin/env python3
"""GUI end-to-end (issue 36): what a script and a new user see.

- Scripted screenshots show no tooltip unless the script hovers (`hover X Y`): the real pointer,
  wherever xvfb left it, is ignored; `state` reports the mouse and the hovered slice.
- `view NAME` takes every view name the GUI has (`critical`, `counters`, ...; a job tab's
  `ranks` and `insights`), and its error lists them all.
- The bundled sample's pid-0 Python thread is grouped with the host's threads, not under the
  GPU's header; its raw pid/tid stay in the ids.
- An Nsight report opens framed on its GPU activity."""
import os
import subprocess
import sys
import tempfile
import json

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testkit import DATA, SAMPLE, SIGHTLINE, check, failures, run_app  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "..", "golden", "inputs", "job_small")
NSYS = os.path.join(DATA, "fuser_nsys_h200_electsync.sqlite.gz")
VIEW_NAMES = ["timeline", "latency", "patterns", "idle", "breakdown", "insights", "counters", "critical-path", "critical",
              "diff", "ranks"]


def script(trace, lines, timeout=180):
    """Runs `lines` (with {state} and {state2} paths) and returns (rc, stderr, [states])."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = {n: os.path.join(tmp, n + ".json") for n in ("state", "state2", "state3")}
        path = os.path.join(tmp, "s.txt")
        with open(path, "w") as f:
            f.write("\n".join(line.format(**paths) for line in lines) + "\n")
        p = subprocess.run([SIGHTLINE, trace, "--script", path, "--size", "1600x1000"], capture_output=True, text=True,
                           timeout=timeout)
        return p.returncode, p.stderr, [json.load(open(paths[n])) if os.path.exists(paths[n]) else None for n in paths]


# 1. No hover unless the script hovers; then the slice under the mouse is hovered (its tooltip).
rc, err, (plain, hovered, after, ) = script(SAMPLE, ["wait 3", "state {state}", "quit"])
check(rc == 0, f"sample script failed: {err}")
if rc == 0:
    check(plain["mouse"] is None, f"the script's mouse is off the window: {plain['mouse']}")
    check(plain["hovered"] == "", f"nothing hovered without `hover`: {plain['hovered']!r}")
    rows = plain["layout"]["rows_rect"]
    stream = plain["layout"]["gpu_rows"][0]["y"]
    x = rows[0] + 0.5 * (rows[2] - rows[0])
    rc, err, (first, hovered, after) = script(SAMPLE, ["wait 3", "state {state}", f"hover {x:.0f} {stream + 6:.0f}", "wait 2",
                                                       "state {state2}", "hover off", "wait 2", "state {state3}", "quit"])
    check(rc == 0, f"hover script failed: {err}")
    if rc == 0:
        check(hovered["mouse"] is not None and abs(hovered["mouse"][0] - x) < 1, f"hover put the mouse at {hovered['mouse']}")
        check(hovered["hovered"] != "", "hovering the GPU stream's row hovers a slice")
        check(after["mouse"] is None and after["hovered"] == "", f"hover off: {after['mouse']}, {after['hovered']!r}")
rc, err, _ = script(SAMPLE, ["hover 12", "quit"])
check(rc == 2 and "hover wants X Y" in err, f"a bad hover: exit {rc}, {err.strip()}")

# 2. Every view name the GUI has; the error lists them all.
rc, err, (st, _, _) = script(SAMPLE, ["wait 3", "view critical", "wait 2", "state {state}", "view counters", "wait 2",
                                      "state {state2}", "quit"])
check(rc == 0, f"view critical / counters failed: {err}")
if rc == 0:
    check(st["view"]["active"] == "critical-path", f"view critical shows {st['view']['active']}")
rc, err, _ = script(SAMPLE, ["wait 3", "view nonsense", "quit"])
check(rc == 2, f"an unknown view exits 2, got {rc}")
missing = [n for n in VIEW_NAMES if n not in err]
check(not missing, f"the error leaves out {missing}: {err.strip()}")
rc, err, (st, st2, _) = script(JOB, ["view insights", "wait 2", "state {state}", "view ranks", "wait 2", "state {state2}", "quit"],
                               timeout=300)
check(rc == 0, f"view in a job tab failed: {err}")
if rc == 0:
    check(st["job"]["view"] == "insights" and st2["job"]["view"] == "ranks", f"job views: {st['job']['view']}, {st2['job']['view']}")
rc, err, _ = script(JOB, ["view critical", "quit"], timeout=300)
check(rc == 2 and "ranks" in err and "critical-path" in err, f"a panel view in a job tab: exit {rc}, {err.strip()}")

# 3. Groups by what a track holds: the pid-0 Python thread sits with python3 19392's threads.
state, _ = run_app(SAMPLE, [])
if state:
    groups = {g["header"]: g["rows"] for g in state["layout"]["row_groups"]}
    gpu = [h for h in groups if h.startswith("GPU 0")]
    check(gpu and not any(r["ids"].startswith("pid 0 · tid 0") for h in gpu for r in groups[h]),
          f"the GPU's header holds the pid-0 CPU thread: {[(h, groups[h]) for h in gpu]}")
    host = groups.get("python3 19392", [])
    moved = [r for r in host if r["ids"].startswith("pid 0 · tid 0")]
    check(len(moved) == 1, f"the pid-0 Python thread is not with the host's threads: {host}")

# 4. An Nsight report opens on its GPU work, not seconds of idle time around it.
state, _ = run_app(NSYS, [])
if state:
    span = state["view_end_ns"] - state["view_start_ns"]
    data = state["layout"]["data_end_ns"] - state["layout"]["data_start_ns"]
    check(span < 0.9 * data, f"the Nsight report opens on {span / 1e6:.1f} ms of its {data / 1e6:.1f} ms")

print("FAILED" if failures else "ok")
sys.exit(1 if failures else 0)
