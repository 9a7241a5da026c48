#!/usr/bin/env python3
"""GUI end-to-end test of snapshots (issue 15): one scripted session (select, find, zoom, three
analysis views) gives the same state JSON on a JSON trace, on the same trace read back from the
snapshot cache, and on its snapshot file from `sightline convert`; a damaged cache entry shows
its notice and the session still matches, and so does a cache that cannot be written (its warning
joins the notice once the background write fails). Each run uses a cache folder of its own."""
import collections
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from testkit import DATA, SIGHTLINE, check, failures  # noqa: E402

# What may differ between the runs: where the store came from, and the path it was opened by.
ORIGIN_KEYS = {"source", "notice", "path", "tab_paths", "window_title"}
VIEWS = ("timeline", "idle", "breakdown", "patterns")  # a state after each


def session_script(trace_json, tmp):
    """select the most frequent kernel's first instance, find it, zoom around it, three views."""
    events = json.load(gzip.open(trace_json))["traceEvents"]
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    name, _ = collections.Counter(e["name"] for e in kernels).most_common(1)[0]
    origin = min(e["ts"] for e in events if "ts" in e and e.get("ph") != "M")
    first = min(e["ts"] for e in kernels if e["name"] == name) - origin
    lines = [f'find {name[:12]}', f'select "{name}" 0', f"zoom {max(0, first - 500)}us {first + 2000}us", "wait 2",
             f"state {os.path.join(tmp, 'state_timeline.json')}"]
    for view in ("idle", "breakdown", "patterns"):
        lines += [f"view {view}", "wait 2", f"state {os.path.join(tmp, 'state_' + view + '.json')}"]
    return "\n".join(lines + ["quit"]) + "\n", name


def run_session(trace, script, tmp, env, extra=()):
    path = os.path.join(tmp, "script.txt")
    with open(path, "w") as f:
        f.write(script)
    for view in VIEWS:
        state = os.path.join(tmp, f"state_{view}.json")
        if os.path.exists(state):
            os.remove(state)
    p = subprocess.run([SIGHTLINE, *extra, trace, "--script", path, "--size", "1280x800"], capture_output=True,
                       text=True, env=env, timeout=240)
    states = {}
    for view in VIEWS:
        state = os.path.join(tmp, f"state_{view}.json")
        states[view] = json.load(open(state)) if os.path.exists(state) else None
    return p, states


def differences(a, b, where=""):
    """Where two states differ (for the failure message)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) for d in differences(a.get(k), b.get(k), f"{where}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {str(a)[:80]} != {str(b)[:80]}"]


def same_session(states, reference, what, keys=None):
    """The whole states but their origin, or only `keys` of them."""
    def part(st):
        st = without_origin(st)
        return {v: {k: x for k, x in s.items() if k in keys} if s and keys else s for v, s in st.items()}
    diff = differences(part(states), part(reference))
    check(not diff, f"the session {what} differs: " + "; ".join(diff[:8]))


# What must agree when a notice line moves the timeline down a line (the layout differs, not what is shown).
SHOWN_KEYS = {"events", "truncated", "selected", "highlights", "highlighted", "view", "view_start_ns", "view_end_ns",
              "gaps_per_track"}


def check_noticed_session(p, states, reference, what, view, notice_text):
    """A session that fell back to the trace file with `notice_text` in its notice, printed once."""
    s = states[view] or {}
    check(p.returncode == 0 and s.get("source") == "trace file", f"{what}: {p.returncode} {s.get('source')!r}")
    check(notice_text in s.get("notice", ""), f"{what} notice: {s.get('notice')!r}")
    lines = [line for line in p.stderr.splitlines() if notice_text in line]
    check(len(lines) == 1, f"{what}: {len(lines)} stderr lines: {p.stderr!r}")
    same_session(states, reference, what, keys=SHOWN_KEYS)


def without_origin(states):
    return {view: {k: v for k, v in s.items() if k not in ORIGIN_KEYS} if s else None for view, s in states.items()}


tmp = tempfile.mkdtemp()
try:
    trace = os.path.join(tmp, "session.json.gz")
    shutil.copy(os.path.join(DATA, "hta_cp_simple_add_input.json.gz"), trace)
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"))
    env.pop("SIGHTLINE_NO_CACHE", None)
    script, kernel = session_script(trace, tmp)

    p, json_states = run_session(trace, script, tmp, env)
    check(p.returncode == 0 and all(json_states.values()), f"the JSON session failed ({p.returncode}): {p.stderr}")
    s = json_states["timeline"] or {}
    check(s.get("source") == "trace file" and s.get("notice") == "", f"first open: source {s.get('source')!r}")
    check((s.get("selected") or {}).get("name") == kernel, f"selected {s.get('selected')}, wanted {kernel}")
    check(s.get("highlights", 0) > 0, "find highlighted nothing")
    folder = os.path.join(tmp, "cache", "sightline")
    cached = [f for f in os.listdir(folder) if f.endswith(".slsnap")] if os.path.isdir(folder) else []
    check(len(cached) == 1, f"the GUI cached {cached}")

    p, cache_states = run_session(trace, script, tmp, env)
    s = cache_states["idle"] or {}
    check(p.returncode == 0 and s.get("source") == "cache", f"second open: {p.returncode} source {s.get('source')!r}")
    same_session(cache_states, json_states, "from the cache")

    snapshot = os.path.join(tmp, "session.slsnap")
    check(subprocess.run([SIGHTLINE, "convert", trace, "-o", snapshot], env=env).returncode == 0, "convert failed")
    p, snap_states = run_session(snapshot, script, tmp, env, ["--no-cache"])
    s = snap_states["idle"] or {}
    check(p.returncode == 0 and s.get("source") == "snapshot file", f"snapshot: {p.returncode} {s.get('source')!r}")
    same_session(snap_states, json_states, "on the snapshot file")

    # --no-cache in the GUI: the trace is parsed again and nothing is written.
    fresh_env = dict(env, XDG_CACHE_HOME=os.path.join(tmp, "unused_cache"))
    p, off_states = run_session(trace, script, tmp, fresh_env, ["--no-cache"])
    s = off_states["timeline"] or {}
    check(p.returncode == 0 and s.get("source") == "trace file", f"--no-cache: {p.returncode} {s.get('source')!r}")
    # (Mesa may keep its shader cache there: only sightline/ must not exist.)
    check(not os.path.exists(os.path.join(fresh_env["XDG_CACHE_HOME"], "sightline")),
          "--no-cache: the GUI created the snapshot cache folder")
    same_session(off_states, json_states, "with --no-cache")

    # A cache that cannot be written: the trace is shown at once (the write runs beside it), and
    # the write's warning joins the tab's notice when it is known, printed once.
    blocked = os.path.join(tmp, "not_a_folder")
    open(blocked, "w").close()
    p, blocked_states = run_session(trace, script, tmp, dict(env, XDG_CACHE_HOME=blocked))
    check_noticed_session(p, blocked_states, json_states, "with an unwritable cache", "patterns", "nothing cached")

    if cached:
        entry = os.path.join(folder, cached[0])
        os.truncate(entry, os.path.getsize(entry) // 2)
        p, damaged_states = run_session(trace, script, tmp, env)
        check_noticed_session(p, damaged_states, json_states, "after a damaged entry", "idle",
                              "discarded the cached snapshot")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print("gui snapshot:", "FAIL" if failures else "ok", f"({len(failures)} failures)")
sys.exit(1 if failures else 0)
