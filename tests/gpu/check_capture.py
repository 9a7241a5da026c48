"""Checks a captured trace: python3 check_capture.py TRACE.json.gz KIND [EXPECTED_KERNELS STREAMS]."""
import gzip
import json
import sys

path, kind = sys.argv[1], sys.argv[2]
with gzip.open(path, "rt") as f:
    trace = json.load(f)
events = trace["traceEvents"]
kernels = [e for e in events if e.get("cat") == "kernel"]
streams = {(e["pid"], e["tid"]) for e in kernels}
starts = {e["id"] for e in events if e.get("ph") == "s" and e.get("cat") == "ac2g"}
ends = [e for e in events if e.get("ph") == "f" and e.get("cat") == "ac2g"]
nvtx = {e["name"] for e in events if e.get("cat") == "user_annotation"}
problems = []
if not trace.get("deviceProperties"):
    problems.append("no deviceProperties")
if any(e.get("bp") != "e" for e in ends):
    problems.append("a flow end without bp e")
if {e["id"] for e in ends} - starts:
    problems.append("flow ends without starts")
for k in kernels:
    if k["args"]["stream"] != k["tid"] or k["args"]["device"] != k["pid"]:
        problems.append(f"kernel {k['name']} placed off its stream")
        break
if kind == "demo":
    want_kernels, want_streams = int(sys.argv[3]), int(sys.argv[4])
    if len(kernels) != want_kernels:
        problems.append(f"{len(kernels)} kernels, expected {want_kernels}")
    if len(streams) != want_streams:
        problems.append(f"kernels on {len(streams)} streams, expected {want_streams}")
    by_stream = {}
    for k in kernels:
        by_stream.setdefault(k["tid"], set()).add(k["name"].split("(")[0])
    if sorted(map(sorted, by_stream.values())) != [["add_one"], ["scale"]]:
        problems.append(f"kernels by stream: {by_stream}")
    if len(ends) < want_kernels:
        problems.append(f"{len(ends)} ac2g flow ends, expected at least {want_kernels}")
    if not {"phase A", "phase B"} <= nvtx:
        problems.append(f"NVTX ranges: {sorted(nvtx)}")
    if not any(e.get("name") == "Stream Wait Event" for e in events):
        problems.append("no Stream Wait Event")
    if sum(e.get("cat") == "gpu_memcpy" for e in events) != 2:
        problems.append("expected 2 copies")
elif not kernels:
    problems.append("no kernels")
print(f"{path}: {len(kernels)} kernels on {len(streams)} streams, {len(ends)} flows, NVTX {sorted(nvtx)[:5]}")
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
