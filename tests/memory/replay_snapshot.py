#!/usr/bin/python3
"""Oracle for Sightline's memory analyses of a PyTorch memory snapshot.

Replays the snapshot's `device_traces` with Python's own pickle, under the rules of
analyses.md §11 (written here from the spec, not from Sightline's code):
  - a block is allocated from `alloc` to `free_completed` (`free_requested` changes nothing);
  - pre-existing blocks: every block freed in the trace before any alloc of its address, and every
    block still allocated in the final `segments` state that the trace never allocated, count
    from the first trace entry on;
  - the context of a block: "(allocated before the trace)" for a pre-existing one without frames,
    else the first frame (innermost first) that is Python code outside
    /torch/, else the first frame whose name does not start with an allocator/framework/CPython
    prefix, else the innermost frame; shown as "name (file:line)".
Then compares peak bytes, allocated-at-end bytes, live-at-end bytes, block count and the top
context at the peak with `sightline report SNAPSHOT --only memory_peak,memory_at_peak --format json`.

usage: replay_snapshot.py SNAPSHOT [SNAPSHOT...]   (SIGHTLINE: the sightline binary)
"""
import json
import os
import pickle
import subprocess
import sys

INTERNAL = ("torch::", "c10::", "at::", "_Py", "Py", "__libc", "_start", "std::")


def frame_text(f):
    return "%s (%s:%d)" % (f.get("name", "?"), f.get("filename", "?"), int(f.get("line", 0)))


def context(frames, pre_existing=False):
    if not frames:
        return "(allocated before the trace)" if pre_existing else "(no enclosing op)"
    for f in frames:
        name = f.get("filename", "?")
        if name.endswith(".py") and "/torch/" not in name:
            return frame_text(f)
    for f in frames:
        if not frame_text(f).startswith(INTERNAL):
            return frame_text(f)
    return frame_text(frames[0])


def replay(snapshot):
    out = {}
    traces = snapshot.get("device_traces", [])
    segments = snapshot.get("segments", [])
    for device, trace in enumerate(traces):
        trace = sorted(trace, key=lambda e: e.get("time_us", 0))  # stable, as the spec's "in time order"
        ever_allocated = {e["addr"] for e in trace if e["action"] == "alloc"}
        allocated_so_far, pre = set(), {}
        for e in trace:
            if e["action"] == "alloc":
                allocated_so_far.add(e["addr"])
            elif e["action"] in ("free_requested", "free_completed", "free") and e["addr"] not in allocated_so_far:
                pre.setdefault(e["addr"], (e["size"], context([], True)))  # its frames are the free's
        for seg in segments:
            if seg.get("device", 0) != device:
                continue
            for b in seg.get("blocks", []):
                if b.get("state") in ("active_allocated", "active_pending_free") and b["address"] not in ever_allocated:
                    pre.setdefault(b["address"], (b["size"], context(b.get("frames", []), True)))
        live = dict(pre)
        allocated = sum(size for size, _ in live.values())
        peak, at_peak = allocated, dict(live)
        blocks = len(pre)
        for e in trace:
            if e["action"] == "alloc":
                live[e["addr"]] = (e["size"], context(e.get("frames", [])))
                allocated += e["size"]
                blocks += 1
            elif e["action"] in ("free_completed", "free"):
                live.pop(e["addr"], None)
                allocated -= e["size"]
            else:
                continue
            if allocated > peak:
                peak, at_peak = allocated, dict(live)
        by_context = {}
        for size, ctx in at_peak.values():
            b, n = by_context.get(ctx, (0, 0))
            by_context[ctx] = (b + size, n + 1)
        top = max(by_context.items(), key=lambda kv: (kv[1][0], kv[1][1])) if by_context else None
        out["cuda:%d" % device] = {
            "peak": peak,
            "allocated_at_end": allocated,
            "live_at_end": sum(size for size, _ in live.values()),
            "blocks": blocks,
            "top_context": top[0] if top else None,
            "top_bytes": top[1][0] if top else None,
        }
    return out


def sightline(path):
    exe = os.environ.get("SIGHTLINE", "sightline")
    r = subprocess.run([exe, "report", path, "--only", "memory_peak,memory_at_peak", "--format", "json"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("sightline failed on %s: %s" % (path, r.stderr))
    report = json.loads(r.stdout)
    got = {}
    for row in report["memory_peak"]:
        got[row["device"]] = {"peak": row["allocated_bytes"], "allocated_at_end": row["allocated_at_end_bytes"],
                              "live_at_end": row["live_at_end_bytes"], "blocks": row["blocks"]}
    for row in report["memory_at_peak"]:
        d = got[row["device"]]
        if "top_context" not in d:
            d["top_context"], d["top_bytes"] = row["context"], row["bytes"]
    return got


def main():
    failures = 0
    for path in sys.argv[1:]:
        with open(path, "rb") as f:
            expected = replay(pickle.load(f))
        got = sightline(path)
        if set(expected) != set(got):
            print("FAIL %s: devices %s, Sightline %s" % (path, sorted(expected), sorted(got)))
            failures += 1
            continue
        for device, e in expected.items():
            for key, want in e.items():
                have = got[device].get(key)
                status = "ok  " if have == want else "FAIL"
                failures += have != want
                print("%s %s %s %s: replay %r, Sightline %r" % (status, os.path.basename(path), device, key, want, have))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
