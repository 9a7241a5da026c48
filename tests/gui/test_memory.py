#!/usr/bin/env python3
"""GUI end-to-end test of the Memory view (views/memory_view.*): the real app under Xvfb on the
bundled sample (Kineto [memory] events) and a tiny PyTorch memory snapshot, checked against
`sightline report --format json` (memory_peak, memory_at_peak) and the app's state dump."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testkit import SAMPLE, SHARED, SIGHTLINE, check, check_script_errors, failures, run_app  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SNAPSHOT = os.path.join(HERE, "..", "golden", "inputs", "tiny_memory_snapshot.pickle")
NO_MEMORY = os.path.join(HERE, "..", "data", "hta_cp_simple_add_input.json.gz")


def report(trace):
    out = subprocess.run([SIGHTLINE, "report", trace, "--format", "json"], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def first_gpu_peak(rep):
    rows = [r for r in rep["memory_peak"] if r["device"] != "cpu"]
    return rows[0] if rows else rep["memory_peak"][0]


traces = [SAMPLE, SNAPSHOT]
corpus_snapshot = os.path.join(SHARED, "memory", "cs336_lm_memory_snapshot.pickle")
if os.path.exists(corpus_snapshot):
    traces.append(corpus_snapshot)
else:
    print("skipped the corpus snapshot: ../shared is absent")

for trace in traces:
    name = os.path.basename(trace)
    rep = report(trace)
    peak = first_gpu_peak(rep)
    at_peak = [r for r in rep["memory_at_peak"] if r["device"] == peak["device"]]
    # 1. The view opens on the first GPU with the report's peak; its plot is not blank.
    state, png = run_app(trace, ["view memory"])
    if state:
        mem = state["view"]["memory"]
        check(state["view"]["active"] == "memory", f"{name}: view memory shows {state['view']['active']}")
        check(mem["device"] == peak["device"], f"{name}: device {mem['device']} != {peak['device']}")
        check(mem["peak_allocated"] == peak["allocated_bytes"], f"{name}: peak {mem['peak_allocated']} != report {peak['allocated_bytes']}")
        check(mem["at_peak_rows"] == len(at_peak), f"{name}: {mem['at_peak_rows']} at-peak rows, report has {len(at_peak)}")
        check(mem["columns"] > 500, f"{name}: the plot has {mem['columns']} columns")
        check(0 < mem["max_column_bytes"] <= peak["allocated_bytes"], f"{name}: bands reach {mem['max_column_bytes']}")
        width, height, rows = png
        plot = [px for row in rows[int(height * 0.6):int(height * 0.75)] for px in row[int(width * 0.3):]]
        coloured = sum(1 for px in plot if max(px) - min(px) > 40)
        check(coloured > len(plot) * 0.01, f"{name}: the memory plot has no coloured bands")
    # 2. A context of the at-peak table with blocks lists them; a block puts its lifetime on the timeline.
    row = next((i for i, r in enumerate(at_peak) if r["blocks"] > 0), None)
    if row is None:
        continue
    state, _ = run_app(trace, ["view memory", f"memory context {row}", "memory block 0"])
    if state:
        mem = state["view"]["memory"]
        check(mem.get("context") == at_peak[row]["context"], f"{name}: context {mem.get('context')} != {at_peak[row]['context']}")
        check(mem.get("context_blocks", 0) >= at_peak[row]["blocks"], f"{name}: {mem.get('context_blocks')} blocks listed")
        block = mem.get("block", {})
        check(block.get("size", 0) > 0, f"{name}: no block selected")
        vs, ve = state["view_start_ns"], state["view_end_ns"]
        check(vs <= block.get("alloc_ns", -1) <= ve, f"{name}: the block's allocation is not on screen")

# 3. A memory snapshot opens on the Memory tab; a trace without memory events says so; bad commands fail clearly.
state, _ = run_app(SNAPSHOT, [])
if state:
    check(state["view"]["active"] == "memory", f"snapshot opens on {state['view']['active']}")
    # Its timeline holds the memory row group: allocated and reserved under "Memory · cuda:0".
    groups = [g["header"] for g in state["layout"]["row_groups"]]
    check("Memory · cuda:0" in groups, f"snapshot's row groups: {groups}")
    check(state["rows_drawn"] >= 3, f"snapshot's timeline draws {state['rows_drawn']} rows")
check_script_errors(NO_MEMORY, [("memory peak\n", 1)])
check_script_errors(SAMPLE, [("memory context 999\n", 1), ("memory sideways 1\n", 1)])

print("FAILED" if failures else "OK", len(failures), "failures")
sys.exit(1 if failures else 0)
