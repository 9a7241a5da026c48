#!/usr/bin/env python3
"""Makes a synthetic distributed job for `sightline bench load|report|frame DIR`.

Every rank is a copy of real corpus traces (cycled over the sources given) with its
`distributedInfo` rank and world size rewritten, so the collectives of each copy match across the
ranks one to one, in order. The rest of the text is kept byte for byte.

    python3 tests/bench/make_synthetic_job.py OUT_DIR RANKS SOURCE.json[.gz]...

e.g. 64 ranks of 35 MB: `... /tmp/job64 64 ../shared/corpus/hta_trace_diff_control_a100.json.gz`;
the 8 corpus ranks x 8: `... /tmp/dlrm64 64 ../shared/corpus/param_dlrm_8rank/*.json.gz`.

A fleet with known answers (issue 38): every rank a copy of ONE real rank, its clock shifted by
rank x --clock-step-us, with stragglers and slow steps injected at the ranks named:

    python3 tests/bench/make_synthetic_job.py --fleet OUT_DIR RANKS SOURCE.json[.gz] \
        [--stragglers 5,77,200] [--slow-steps 13,140] [--clock-step-us 1000]

A straggler starts its share of the NCCL kernels (instance i goes to straggler i mod count) half
their length late and ends them on time, as a late rank does; a slow step's ProfilerStep lasts
30 % longer. The fleet must name exactly those ranks (stragglers; iteration-time outliers).
"""
import gzip
import os
import re
import sys

DIST = re.compile(rb'"distributedInfo"\s*:\s*\{[^}]*\}')


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if path.endswith(".gz") else data


def fleet_main(argv):
    import argparse
    import json

    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("ranks", type=int)
    ap.add_argument("source")
    ap.add_argument("--stragglers", default="")
    ap.add_argument("--slow-steps", default="")
    ap.add_argument("--clock-step-us", type=int, default=1000)
    a = ap.parse_args(argv)
    stragglers = [int(x) for x in a.stragglers.split(",") if x]
    slow = {int(x) for x in a.slow_steps.split(",") if x}
    os.makedirs(a.out_dir, exist_ok=True)
    source = read(a.source)
    for rank in range(a.ranks):
        trace = json.loads(source)
        trace["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": a.ranks}
        shift = rank * a.clock_step_us
        instance = 0
        for e in trace["traceEvents"]:
            if "ts" not in e:
                continue
            if e.get("cat") == "kernel" and "nccl" in e.get("name", "").lower():
                if stragglers and stragglers[instance % len(stragglers)] == rank:
                    late = e["dur"] // 2
                    e["ts"] += late
                    e["dur"] -= late
                instance += 1
            if e.get("name", "").startswith("ProfilerStep") and rank in slow:
                e["dur"] = e["dur"] * 13 // 10
            e["ts"] += shift
        with open(os.path.join(a.out_dir, "rank_%d.json" % rank), "w") as f:
            json.dump(trace, f)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--fleet":
        return fleet_main(sys.argv[2:])
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out_dir, ranks, sources = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    os.makedirs(out_dir, exist_ok=True)
    texts = [read(s) for s in sources]
    for rank in range(ranks):
        text = texts[rank % len(texts)]
        info = b'"distributedInfo": {"backend": "nccl", "rank": %d, "world_size": %d}' % (rank, ranks)
        text, n = DIST.subn(info, text, count=1)
        if n == 0:  # no distributedInfo: put one before traceEvents
            text = text.replace(b'"traceEvents"', info + b', "traceEvents"', 1)
        with open(os.path.join(out_dir, "rank_%d.json" % rank), "wb") as f:
            f.write(text)


if __name__ == "__main__":
    main()
