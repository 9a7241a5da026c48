#!/usr/bin/python3
"""The Python module's speed against the CLI in the same run (issue 37; a benchmark, not a test).

For each trace (default: the 35 MB control trace and the 87 MB MTIA trace of the corpus,
decompressed to a temporary folder first, as the record's figures are of uncompressed JSON):
  open     sightline.open(path, cache=False) vs `sightline info --no-cache` (a process: its start
           included), median of --repeat
  report   Trace.report() (every table to DataFrames) vs `sightline report --no-cache --format
           json > file` minus `info` (the load), median of --repeat
Then slices(): a synthetic trace of at least 1M slices (make_synthetic_trace tiling the control
trace), all slices (views on the store's packed columns; track and row made) and its largest
track (zero-copy views).

    PYTHONPATH=build/release/python /usr/bin/python3 tests/bench/bench_python.py \\
        --sightline build/release/app/sightline --make-synthetic build/release/tests/make_synthetic_trace
"""

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import sightline

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(REPO, "..", "shared", "corpus")
DEFAULT_TRACES = ["hta_trace_diff_control_a100.json.gz", "hta_mtia_train_rank0.json.gz"]


def median_seconds(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def decompressed(path, folder):
    if not path.endswith(".gz"):
        return path
    out = os.path.join(folder, os.path.basename(path)[:-3])
    with gzip.open(path, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def cli(sightline_bin, *args, stdout=subprocess.DEVNULL):
    subprocess.run([sightline_bin, *args], check=True, stdout=stdout, stderr=subprocess.DEVNULL)


def bench_trace(path, sightline_bin, repeat, folder):
    mb = os.path.getsize(path) / 1e6
    py_open = median_seconds(lambda: sightline.open(path, cache=False), repeat)
    cli_info = median_seconds(lambda: cli(sightline_bin, "info", "--no-cache", path), repeat)
    t = sightline.open(path, cache=False)

    def fresh_report():
        t._reports.clear()
        t.report()

    py_report = median_seconds(fresh_report, repeat)
    out = os.path.join(folder, "report.json")

    def cli_report():
        with open(out, "wb") as f:
            cli(sightline_bin, "report", "--no-cache", "--format", "json", path, stdout=f)

    cli_report_total = median_seconds(cli_report, repeat)
    bench = subprocess.run([sightline_bin, "bench", "report", path, "--repeat", str(repeat), "--format", "json"],
                           check=True, capture_output=True, text=True)
    cli_analyses = json.loads(bench.stdout)["report_seconds_median"]
    print("%s (%.1f MB)" % (os.path.basename(path), mb))
    print("  open()   %.3f s   `info` %.3f s   %.2fx" % (py_open, cli_info, py_open / cli_info))
    print("  report() %.3f s   `bench report` analyses %.3f s   %.2fx" % (py_report, cli_analyses, py_report / cli_analyses))
    print("  open() + report() %.3f s   `report --format json > file` %.3f s   %.2fx"
          % (py_open + py_report, cli_report_total, (py_open + py_report) / cli_report_total))


def bench_slices(make_synthetic, source, folder, repeat):
    out = os.path.join(folder, "synthetic_1m.json")
    subprocess.run([make_synthetic, source, out, "--bytes", "450000000"], check=True, stdout=subprocess.DEVNULL)
    t = sightline.open(out, cache=False)
    count = t.info()["slices"]
    biggest = int(t.tracks()["slices"].idxmax())
    rows = int(t.tracks()["slices"][biggest])
    every = median_seconds(t.slices, repeat)
    one = median_seconds(lambda: t.slices(track=biggest), repeat)
    print("slices() of %d slices (%d tracks, packed views): %.1f ms; one track of %d (zero-copy): %.1f ms"
          % (count, len(t.tracks()), every * 1e3, rows, one * 1e3))
    os.remove(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sightline", default=os.path.join(REPO, "build", "release", "app", "sightline"))
    p.add_argument("--make-synthetic", default=os.path.join(REPO, "build", "release", "tests", "make_synthetic_trace"))
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("traces", nargs="*", help="trace files (default: two corpus traces)")
    a = p.parse_args()
    traces = a.traces or [os.path.join(CORPUS, n) for n in DEFAULT_TRACES]
    missing = [t for t in traces if not os.path.exists(t)]
    if missing:
        sys.exit("absent: %s (the corpus is ../shared/corpus)" % ", ".join(missing))
    with tempfile.TemporaryDirectory() as folder:
        plain = [decompressed(t, folder) for t in traces]
        for path in plain:
            bench_trace(path, a.sightline, a.repeat, folder)
        bench_slices(a.make_synthetic, plain[0], folder, a.repeat)


if __name__ == "__main__":
    main()
