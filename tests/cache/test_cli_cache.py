#!/usr/bin/env python3
"""The snapshot cache from the CLI (core/snapshot/SNAPSHOT.md, "The cache"), each case with a cache folder
of its own ($XDG_CACHE_HOME under a temporary folder; the suite's SIGHTLINE_NO_CACHE is unset):

- the whole golden suite passes twice in a row with the cache on (the second time from the cache);
- a second run reads the cache (`info -v` says so) and prints the same as a fresh load;
- a touched source, a flipped byte, a truncated entry: the trace loads instead, with exactly one
  stderr line, and is cached again;
- --no-cache and SIGHTLINE_NO_CACHE=1 write nothing; a snapshot file given directly is not cached;
- an unwritable cache folder gives the same output and one warning line (for a job too);
- SIGHTLINE_CACHE_MAX evicts the least recently used entry."""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SIGHTLINE = os.path.abspath(os.environ["SIGHTLINE"])
DATA = os.path.join(HERE, "..", "data")
INPUTS = os.path.join(HERE, "..", "golden", "inputs")
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def cache_env(cache_home, **extra):
    env = dict(os.environ)
    for name in ("SIGHTLINE_NO_CACHE", "SIGHTLINE_CACHE_MAX"):
        env.pop(name, None)
    env["XDG_CACHE_HOME"] = cache_home
    env.update(extra)
    return env


def run(args, env):
    return subprocess.run([SIGHTLINE] + args, capture_output=True, text=True, env=env, timeout=300)


def masked(text):
    """Output without the lines that differ run to run (timings) or by origin (`source`)."""
    return "\n".join(line for line in text.splitlines() if not line.startswith(("loaded in", "source ")))


def entries(cache_home, ext=".slsnap"):
    folder = os.path.join(cache_home, "sightline")
    return sorted(f for f in os.listdir(folder) if f.endswith(ext)) if os.path.isdir(folder) else []


def source_line(out):
    lines = [line for line in out.splitlines() if line.startswith("source ")]
    return lines[0] if lines else ""


def one_line(stderr, *parts):
    lines = stderr.strip().splitlines()
    return len(lines) == 1 and all(p in lines[0] for p in parts)


def golden_twice(tmp):
    home = os.path.join(tmp, "golden")
    env = cache_env(home, SIGHTLINE=SIGHTLINE)
    for attempt in ("first (writes the cache)", "second (reads it)"):
        p = subprocess.run(["bash", os.path.join(HERE, "..", "golden", "run.sh")], capture_output=True, text=True,
                           env=env, timeout=600)
        check(p.returncode == 0, f"golden suite with the cache on, {attempt} run:\n{p.stdout[-3000:]}{p.stderr[-2000:]}")
    check(len(entries(home)) >= 10, f"the golden suite cached only {entries(home)}")
    p = run(["info", "-v", os.path.join(DATA, "kin_docs_after_fix_h100.json.gz")], env)
    check(source_line(p.stdout).split()[1:2] == ["cache"], f"not read from the cache: {source_line(p.stdout)!r}")


def hit_and_invalidation(tmp):
    home = os.path.join(tmp, "hits")
    env = cache_env(home)
    trace = os.path.join(tmp, "run.json.gz")
    shutil.copy(os.path.join(DATA, "hta_trace_compare_base.json.gz"), trace)
    fresh = run(["--no-cache", "info", trace], env)
    fresh_report = run(["--no-cache", "report", trace], env)
    check(fresh.returncode == 0 and fresh_report.returncode == 0, f"fresh load failed: {fresh.stderr}")
    check(entries(home) == [], "--no-cache wrote the cache")

    first = run(["info", "-v", trace], env)
    check(first.returncode == 0 and first.stderr == "", f"first run: {first.returncode} {first.stderr!r}")
    check(source_line(first.stdout) == f"source          trace file ({trace})", f"first: {source_line(first.stdout)!r}")
    names = entries(home)
    check(len(names) == 1 and entries(home, ".key") == [n[:-7] + ".key" for n in names], f"entries: {os.listdir(home)}")

    second = run(["info", "-v", trace], env)
    entry = os.path.join(home, "sightline", names[0]) if names else "?"
    check(second.returncode == 0 and second.stderr == "", f"second run: {second.stderr!r}")
    check(source_line(second.stdout) == f"source          cache ({entry})", f"second: {source_line(second.stdout)!r}")
    check(masked(second.stdout) == masked(fresh.stdout), "info from the cache differs from a fresh load")
    report = run(["report", trace], env)
    check(report.stdout == fresh_report.stdout and report.stderr == "", "report from the cache differs")
    # --no-cache reads nothing either.
    check(source_line(run(["--no-cache", "info", "-v", trace], env).stdout).startswith("source          trace file"),
          "--no-cache read the cache")

    def falls_back(what, *says):
        p = run(["report", trace], env)
        check(p.returncode == 0 and p.stdout == fresh_report.stdout, f"{what}: report differs ({p.returncode})")
        check(one_line(p.stderr, "sightline: cache: discarded the cached snapshot of", *says),
              f"{what}: stderr is not one line saying {says}: {p.stderr!r}")
        again = run(["info", "-v", trace], env)
        check(again.stderr == "" and " cache (" in source_line(again.stdout), f"{what}: not cached again: {again.stderr!r}")

    st = os.stat(trace)
    os.utime(trace, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    falls_back("touched source", "the trace changed since it was cached")
    check(entries(home) == names, f"a touched source left {entries(home)}")

    with open(entry, "r+b") as f:
        f.seek(os.path.getsize(entry) // 2)
        byte = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([byte[0] ^ 0x40]))
    falls_back("flipped byte", "bad snapshot at byte")
    os.truncate(entry, os.path.getsize(entry) // 3)
    falls_back("truncated entry", entry)


def nothing_written(tmp):
    home = os.path.join(tmp, "off")
    trace = os.path.join(DATA, "hta_amd_mi250_minitoy.json.gz")
    p = run(["--no-cache", "info", trace], cache_env(home))
    check(p.returncode == 0 and not os.path.exists(home), "--no-cache created the cache folder")
    p = run(["report", trace, "--no-cache"], cache_env(home))  # after the subcommand too
    check(p.returncode == 0 and not os.path.exists(home), "report --no-cache created the cache folder")
    p = run(["info", trace], cache_env(home, SIGHTLINE_NO_CACHE="1"))
    check(p.returncode == 0 and not os.path.exists(home), "SIGHTLINE_NO_CACHE=1 created the cache folder")
    snapshot = os.path.join(tmp, "minitoy.slsnap")
    check(run(["convert", trace, "-o", snapshot], cache_env(home)).returncode == 0, "convert failed")
    p = run(["info", "-v", snapshot], cache_env(home))
    check(p.returncode == 0 and entries(home) == [], f"a snapshot given directly was cached: {entries(home)}")
    check(source_line(p.stdout) == f"source          snapshot file ({snapshot})", f"{source_line(p.stdout)!r}")


def unwritable(tmp):
    blocker = os.path.join(tmp, "not_a_folder")
    open(blocker, "w").close()  # XDG_CACHE_HOME is a file: not even root can create the cache in it
    env = cache_env(blocker)
    trace = os.path.join(DATA, "hta_cp_simple_add_input.json.gz")
    expected = run(["--no-cache", "report", trace], env)
    p = run(["report", trace], env)
    check(p.returncode == 0 and p.stdout == expected.stdout, f"unwritable cache: output differs ({p.returncode})")
    check(one_line(p.stderr, "sightline: warning: cache: cannot create the folder", blocker),
          f"unwritable cache: stderr {p.stderr!r}")
    job = os.path.join(tmp, "job_unwritable")
    shutil.copytree(os.path.join(INPUTS, "job_small"), job)
    expected = run(["--no-cache", "info", job], env)
    p = run(["info", job], env)
    check(masked(p.stdout) == masked(expected.stdout), "unwritable cache: job output differs")
    check(one_line(p.stderr, "cannot create the folder"), f"unwritable cache, job: not one warning line: {p.stderr!r}")


def jobs_diff_render(tmp):
    home = os.path.join(tmp, "more")
    env = cache_env(home)
    job = os.path.join(tmp, "job")
    shutil.copytree(os.path.join(INPUTS, "job_small"), job)
    runs = [run(["report", job, "--only", "collectives,stragglers"], env) for _ in range(2)]
    check(runs[0].stdout == runs[1].stdout and runs[1].returncode == 0, "a job's report differs from the cache")
    check(len(entries(home)) == 3, f"a job of 3 ranks cached {entries(home)}")
    a, b = (os.path.join(DATA, f"hta_trace_compare_{n}.json.gz") for n in ("base", "test"))
    diffs = [run(["diff", a, b], env) for _ in range(2)]
    check(diffs[0].stdout == diffs[1].stdout and diffs[1].returncode == 0 and diffs[1].stderr == "", "diff differs")
    svgs = []
    for i in range(2):
        out = os.path.join(tmp, f"timeline{i}.svg")
        p = run(["render", a, "-o", out], env)
        check(p.returncode == 0, f"render failed: {p.stderr}")
        svgs.append(open(out, "rb").read() if os.path.exists(out) else b"")
    check(svgs[0] == svgs[1] and svgs[0], "render from the cache draws another SVG")
    check(len(entries(home)) == 5, f"job, diff and render cached {entries(home)}")


def snapshot_files(tmp):
    """Every command takes snapshot files (`sightline convert`) in place of the traces: report in both
    modes, diff, render, and a job of snapshots, with the same numbers as from the traces."""
    env = cache_env(os.path.join(tmp, "unused"), SIGHTLINE_NO_CACHE="1")
    folder = os.path.join(tmp, "snapshots")
    os.mkdir(folder)

    def convert(trace):
        out = os.path.join(folder, os.path.basename(trace).split(".")[0] + ".slsnap")
        p = run(["convert", trace, "-o", out], env)
        check(p.returncode == 0 and p.stdout.strip() == out, f"convert {trace}: {p.returncode} {p.stdout!r} {p.stderr!r}")
        return out

    a, b = (os.path.join(DATA, f"hta_trace_compare_{n}.json.gz") for n in ("base", "test"))
    report = os.path.join(DATA, "fuser_nsys_h200_electsync.sqlite.gz")
    snap_a, snap_b, snap_report = convert(a), convert(b), convert(report)
    for trace, snap in ((a, snap_a), (report, snap_report)):
        for mode in ("sightline", "hta"):
            want, got = (run(["report", t, "--mode", mode, "--format", "csv", "--table", "kernel_breakdown"], env)
                         for t in (trace, snap))
            check(got.returncode == 0 and got.stdout == want.stdout and want.stdout.count("\n") > 1,
                  f"report --mode {mode} of {snap} differs from {trace}")
    want, got = (run(["diff", x, y, "--format", "csv", "--table", "ops"], env) for x, y in ((a, b), (snap_a, snap_b)))
    check(got.returncode == 0 and got.stdout == want.stdout and want.stdout.count("\n") > 5, "diff of snapshots differs")
    want, got = (run(["render", t, "-o", os.path.join(tmp, "figure.svg")], env) for t in (report, snap_report))
    # The same elements and size; the bytes differ by the title (the file's name).
    check(got.returncode == 0 and want.stderr.split(":", 1)[1].split(" px,")[0] == got.stderr.split(":", 1)[1].split(" px,")[0],
          f"render of the snapshot: {got.stderr!r} vs {want.stderr!r}")
    job, job_snaps = os.path.join(tmp, "job_json"), os.path.join(tmp, "job_snaps")
    shutil.copytree(os.path.join(INPUTS, "job_small"), job)
    os.mkdir(job_snaps)
    for name in sorted(os.listdir(job)):
        if name.endswith(".json"):
            check(run(["convert", os.path.join(job, name), "-o", os.path.join(job_snaps, name[:-5] + ".slsnap")],
                      env).returncode == 0, f"convert {name}")
    want, got = (run(["report", d, "--only", "collectives,stragglers", "--format", "csv", "--table", "stragglers"], env)
                 for d in (job, job_snaps))
    check(got.returncode == 0 and got.stdout == want.stdout and want.stdout.count("\n") > 2,
          f"a job of snapshots: {got.returncode} {got.stderr!r}\n{got.stdout}\nvs\n{want.stdout}")


def eviction(tmp):
    home = os.path.join(tmp, "small")
    traces = []
    for name in ("one", "two"):
        traces.append(os.path.join(tmp, f"{name}.json.gz"))
        shutil.copy(os.path.join(DATA, "hta_amd_mi250_minitoy.json.gz"), traces[-1])
    run(["info", traces[0]], cache_env(home))
    first = entries(home)
    folder = os.path.join(home, "sightline")
    size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
    run(["info", traces[1]], cache_env(home, SIGHTLINE_CACHE_MAX=str(size * 3 // 2)))
    left = entries(home)
    check(len(first) == 1 and len(left) == 1 and left != first, f"eviction: {first} then {left}")


tmp = tempfile.mkdtemp()
try:
    for case in (golden_twice, hit_and_invalidation, nothing_written, unwritable, jobs_diff_render, snapshot_files,
                 eviction):
        before = len(failures)
        case(tmp)
        print(case.__name__, "ok" if len(failures) == before else "FAIL")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print("cli snapshot cache:", "FAIL" if failures else "ok", f"({len(failures)} failures)")
sys.exit(1 if failures else 0)
