#!/usr/bin/python3
"""Per-rank map cost against a bare `info` (issue 38): `sightline fleet-map TRACE` and `sightline
info TRACE`, both --no-cache, as processes (what a Dask worker runs), interleaved run by run so the
shared machine's load falls on both alike. Prints per trace the medians (wall, and CPU: user +
system of every thread), the ratios, the summary's size and the load average before and after.

    /usr/bin/python3 tests/bench/bench_fleet_map.py [--runs 7] [--sightline build/release/app/sightline] TRACE...
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def timed(cmd, cpu=None):
    """Wall seconds of one run; its CPU seconds (user + system, every thread) appended to `cpu`."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if cpu is not None:
        cpu.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    return wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--sightline", default="build/release/app/sightline")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "rank.slrank")
        for trace in a.traces:
            info = [a.sightline, "--no-cache", "info", trace]
            fmap = [a.sightline, "--no-cache", "fleet-map", trace, "-o", out]
            timed(info), timed(fmap)  # warm the page cache
            load0 = os.getloadavg()[0]
            ti, tm, ci, cm = [], [], [], []
            for k in range(a.runs):
                # Alternate which goes first, so neither always follows the other.
                if k % 2:
                    tm.append(timed(fmap, cm)), ti.append(timed(info, ci))
                else:
                    ti.append(timed(info, ci)), tm.append(timed(fmap, cm))
            load1 = os.getloadavg()[0]
            mi, mm = statistics.median(ti), statistics.median(tm)
            pi, pm = statistics.median(ci), statistics.median(cm)
            print(f"{os.path.basename(trace)}: wall info {mi:.3f} s, map {mm:.3f} s ({mm / mi:.2f}x); "
                  f"CPU info {pi:.3f} s, map {pm:.3f} s ({pm / pi:.2f}x); "
                  f"summary {os.path.getsize(out) / 1024:.0f} KB, load {load0:.1f}-{load1:.1f}, runs {a.runs}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
