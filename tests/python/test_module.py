"""The Python module against the CLI: for every trace, report() and info() equal what
`sightline report/info --format json` print, cell for cell; errors carry the CLI's message;
columns are read-only views that outlive the Trace; two threads load at once.

Run by ctest ("python: module") with Debian's /usr/bin/python3, PYTHONPATH the build tree's
python/ folder and SIGHTLINE the CLI; the corpus traces skip, with a message, without ../shared.
"""

import gc
import glob
import gzip
import json
import math
import os
import re
import subprocess
import sys
import threading
import warnings

import numpy as np
import pandas as pd
import pytest

import sightline

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(REPO, "tests", "data")
GOLDEN_INPUTS = os.path.join(REPO, "tests", "golden", "inputs")
CORPUS = os.path.join(REPO, "..", "shared", "corpus")
SIGHTLINE = os.environ.get("SIGHTLINE", os.path.join(REPO, "build", "release", "app", "sightline"))
SAMPLE = os.path.join(REPO, "assets", "sample_bert_h100.json.gz")
TRACE_PATTERNS = ("*.json", "*.json.gz", "*.sqlite", "*.sqlite.gz", "*.nsys-rep", "*.slsnap")


def traces_in(folder):
    return sorted(p for pattern in TRACE_PATTERNS for p in glob.glob(os.path.join(folder, pattern)))


REPO_TRACES = traces_in(DATA) + [SAMPLE]
CORPUS_TRACES = traces_in(CORPUS)


def corpus_or_skip():
    if not CORPUS_TRACES:
        pytest.skip("the shared corpus (../shared/corpus) is absent: corpus traces not compared")


def cli(*args):
    """(exit status, stdout, stderr) of the CLI, with the snapshot cache off as every test."""
    env = dict(os.environ, SIGHTLINE_NO_CACHE="1")
    r = subprocess.run([SIGHTLINE, *args], capture_output=True, text=True, env=env)
    return r.returncode, r.stdout, r.stderr


def cli_json(*args):
    code, out, err = cli(*args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def open_quiet(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sightline.LoadWarning)
        return sightline.open(path, **kw)


def same_value(a, b):
    if b is None:
        return a is None or (not isinstance(a, (list, str)) and pd.isna(a))
    if isinstance(b, float) and math.isnan(b):
        return isinstance(a, float) and math.isnan(a)
    return type(a) is not bool and a == b


def assert_tables_equal(frames, report, where, names=None):
    """Every table of the CLI's JSON report equals its DataFrame, cell for cell (`names`: the
    tables to compare, default every list of the report but the notes, and no other)."""
    if names is None:
        names = [k for k, v in report.items() if isinstance(v, list) and k != "notes"]
        assert list(frames) == names, where
    for name in names:
        rows, df = report[name], frames[name]
        assert len(df) == len(rows), (where, name)
        if not rows:
            continue
        assert list(df.columns) == list(rows[0]), (where, name)
        for column in df.columns:
            for i, (a, row) in enumerate(zip(df[column].tolist(), rows)):
                assert same_value(a, row[column]), (where, name, column, i, a, row[column])


def without_seconds(info):
    info = dict(info)
    info.pop("load_seconds", None)
    return info


# --- every trace: report and info as the CLI -----------------------------------------------------


def check_trace(path):
    t = open_quiet(path)
    assert without_seconds(t.info()) == without_seconds(cli_json("info", path))
    for mode in ("sightline", "hta"):
        expected = cli_json("report", path, "--mode", mode)
        assert_tables_equal(t.report(mode=mode), expected, (path, mode))
        assert t.notes(mode) == expected["notes"]
    counts = t.info()
    assert len(t.slices()) == counts["slices"]
    assert len(t.kernels()) == counts["kernels"]
    assert len(t.slices(kind="gpu")) == counts["gpu_activities"]
    assert len(t.launches()) == counts["launch_links"]
    assert t.iterations()["number"].tolist() == counts["iterations"]
    return t


@pytest.mark.parametrize("path", REPO_TRACES, ids=os.path.basename)
def test_repo_trace_equals_cli(path):
    check_trace(path)


def test_corpus_traces_equal_cli():
    corpus_or_skip()
    for path in CORPUS_TRACES:
        check_trace(path)


def test_report_json_is_the_cli_json():
    t = open_quiet(SAMPLE)
    expected = cli_json("report", SAMPLE)
    got = t.report_json()
    got["trace"].pop("load_seconds", None)
    expected["trace"].pop("load_seconds", None)
    assert got == expected


def test_one_table_and_chosen_tables():
    t = open_quiet(SAMPLE)
    full = t.report()
    name = next(iter(full))
    pd.testing.assert_frame_equal(t.table(name), full[name])
    only = t.report(tables=["kernel_breakdown"])
    assert list(only) == ["kernel_breakdown"]
    pd.testing.assert_frame_equal(only["kernel_breakdown"], full["kernel_breakdown"])


# --- errors: the CLI's message as a Python exception -----------------------------------------------


def cli_error(*args):
    code, out, err = cli(*args)
    assert code != 0
    return err.strip()


@pytest.mark.parametrize("name", ["not_json.json", "events_not_array.json", "not_nsight.sqlite", "trailing_commas.json",
                                  "execution_trace.json", "not_events.json", "cut_before_events.json"])
def test_bad_file_raises_load_error_with_cli_message(name):
    path = os.path.join(GOLDEN_INPUTS, name)
    code, out, err = cli("info", path)
    if code == 0:
        pytest.skip("%s loads in the CLI" % name)
    with pytest.raises(sightline.LoadError) as e:
        sightline.open(path)
    assert "sightline: " + str(e.value) == err.strip().splitlines()[-1]
    assert e.value.file and e.value.message
    assert isinstance(e.value.offset, int) and isinstance(e.value.line, int) and isinstance(e.value.column, int)


def test_garbage_raises_with_offset(tmp_path):
    garbage = tmp_path / "garbage.json"
    garbage.write_bytes(b"\x00\x01garbage\xff\xfe" * 100)
    err = cli_error("info", str(garbage))
    with pytest.raises(sightline.LoadError) as e:
        sightline.open(garbage)
    assert "sightline: " + str(e.value) == err
    where = "byte %d (line %d, column %d)" % (e.value.offset, e.value.line, e.value.column)
    assert str(e.value).startswith("%s: %s: " % (garbage, where)) and str(e.value).endswith(e.value.message)


@pytest.mark.parametrize("name", ["truncated.json", "truncated.json.gz", "truncated_nsys.sqlite"])
def test_truncated_file_warns_as_the_cli(name):
    path = os.path.join(GOLDEN_INPUTS, name)
    code, out, err = cli("info", path)
    if code != 0:
        with pytest.raises(sightline.LoadError) as e:
            sightline.open(path)
        assert "sightline: " + str(e.value) == err.strip().splitlines()[-1]
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = sightline.open(path)
    printed = [line[len("sightline: warning: "):] for line in err.splitlines() if line.startswith("sightline: warning: ")]
    assert printed, "the CLI warns about %s" % name
    assert [str(w.message) for w in caught if issubclass(w.category, sightline.LoadWarning)] == printed
    assert t.info()["slices"] == json.loads(cli("info", path, "--format", "json")[1])["slices"]


def test_missing_file_raises():
    err = cli_error("info", "/nonexistent/trace.json")
    with pytest.raises(sightline.LoadError) as e:
        sightline.open("/nonexistent/trace.json")
    assert "sightline: " + str(e.value) == err


def test_directory_of_non_traces_raises_as_the_cli():
    folder = os.path.join(GOLDEN_INPUTS, "job_not_traces")
    err = cli_error("info", folder)
    with pytest.raises(sightline.LoadError) as e:
        sightline.open_job(folder)
    assert "sightline: " + str(e.value) == err  # with the files skipped and why, one line each


def test_wrong_table_name_has_the_cli_message():
    err = cli_error("report", SAMPLE, "--format", "csv", "--table", "no_such_table")
    t = open_quiet(SAMPLE)
    with pytest.raises(sightline.NoSuchTable) as e:
        t.table("no_such_table")
    assert "sightline report: " + str(e.value) == err
    with pytest.raises(KeyError):
        t.report(tables=["kernel_breakdown", "no_such_table"])


def test_bad_options_raise_value_error():
    t = open_quiet(SAMPLE)
    with pytest.raises(ValueError):
        t.report(mode="fast")
    with pytest.raises(ValueError):
        sightline.open(SAMPLE, mode="fast")
    with pytest.raises(ValueError):
        t.slices(kind="tpu")
    with pytest.raises(IndexError):
        t.slices(track=10**6)


# --- threads, lifetime, read-only columns ------------------------------------------------------------


def summary(path):
    t = open_quiet(path)
    return without_seconds(t.info()), {k: v.to_json() for k, v in t.report().items()}


def test_two_threads_load_at_once_as_one_at_a_time():
    paths = [os.path.join(DATA, "hta_cp_simple_add_input.json.gz"), os.path.join(DATA, "fuser_nsys_h200_electsync.sqlite.gz")]
    alone = [summary(p) for p in paths]
    together = [None, None]

    def run(i):
        together[i] = summary(paths[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert together == alone


def test_columns_are_read_only_views_that_outlive_the_trace():
    t = open_quiet(SAMPLE)
    track = int(np.argmax(t.tracks()["slices"].to_numpy()))
    df = t.slices(track=track)
    start = df["start_ns"].to_numpy()
    assert not start.flags.writeable and not start.flags.owndata  # a view on the store, not a copy
    with pytest.raises(ValueError):
        start[0] = 1
    again = t.slices(track=track)["start_ns"].to_numpy()
    assert np.shares_memory(start, again)  # the same store array both times
    view = t._core.slice_columns(track)["dur_ns"]
    expected_start, expected_dur = start.copy(), view.copy()
    del t, again, df
    gc.collect()
    # Only the views refer to the store now: it is still there, unchanged.
    assert (start == expected_start).all() and (view == expected_dur).all()


def test_slices_dataframe_survives_its_trace():
    t = open_quiet(SAMPLE)
    df = t.slices(track=0)
    expected = df.copy()
    del t
    gc.collect()
    pd.testing.assert_frame_equal(df, expected)
    assert df["name"].dtype == "category" and df["category"].dtype == "category"


def test_slices_filters_and_args():
    t = open_quiet(SAMPLE)
    all_slices = t.slices()
    gpu = t.slices(kind="gpu")
    assert set(gpu["track"]) <= set(t.tracks().index[t.tracks()["kind"] == "gpu"])
    t0 = int(all_slices["start_ns"].median())
    t1 = t0 + 1_000_000
    window = t.slices(t0=t0, t1=t1)
    end = all_slices["start_ns"] + all_slices["dur_ns"]
    brute = all_slices[(all_slices["start_ns"] < t1) & ((end > t0) | (all_slices["start_ns"] >= t0))]
    assert len(window) == len(brute)
    kernel = t.kernels().iloc[0]
    args = t.args(kernel)
    assert isinstance(args, dict) and args
    assert args == t.args((int(kernel["track"]), int(kernel["row"])))
    launches = t.launches()
    assert (launches["latency_ns"] == launches["kernel_start_ns"] - launches["launch_start_ns"]).all()
    assert len(t.flows()) >= 0 and len(t.counters()) >= 0


# --- a job and a diff pair, as the CLI ----------------------------------------------------------------


def test_job_report_equals_cli():
    folder = os.path.join(GOLDEN_INPUTS, "job_small")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sightline.LoadWarning)
        job = sightline.open_job(folder)
    expected = cli_json("report", folder)
    assert_tables_equal(job.report(), expected, folder)
    assert job.ranks == [r["rank"] for r in cli_json("info", folder)["ranks"]]
    rank = job.ranks[0]
    t = job[rank]
    assert t.info()["slices"] == job.info()["ranks"][0]["trace"]["slices"]
    del job
    gc.collect()
    assert len(t.slices()) == t.info()["slices"]  # a rank's Trace keeps the job alive


def test_corpus_job_equals_cli(tmp_path):
    corpus_or_skip()
    names = ("hta_sampled_rank0.json.gz", "hta_sampled_rank1.json.gz")
    if not all(os.path.exists(os.path.join(CORPUS, n)) for n in names):
        pytest.skip("the corpus rank pair is absent")
    for n in names:
        os.symlink(os.path.join(CORPUS, n), tmp_path / n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sightline.LoadWarning)
        job = sightline.open_job(str(tmp_path))
    for mode in ("sightline", "hta"):
        assert_tables_equal(job.report(mode=mode), cli_json("report", str(tmp_path), "--mode", mode), (tmp_path, mode))
    assert job.ranks == [0, 1]


def diff_tables(report):
    """The tables of `diff --format json` by table name (the aligned ones sit in "aligned",
    the table "aligned" as its "ops"), and their names; ops_diff is lists of names there."""
    tables = {"ops": report["ops"]}
    if report["summary"] is not None:
        tables["summary"] = report["summary"]
    aligned = report["aligned"] or {}
    for name, rows in aligned.items():
        if isinstance(rows, list):
            tables["aligned" if name == "ops" else name] = rows
    for name in ("memory_diff", "memory_diff_contexts"):  # only when either run has memory events
        if name in report:
            tables[name] = report[name]
    return tables, list(tables)


def test_diff_equals_cli():
    a, b = (os.path.join(DATA, n) for n in ("hta_trace_compare_base.json.gz", "hta_trace_compare_test.json.gz"))
    for mode in ("sightline", "hta"):
        expected = cli_json("diff", a, b, "--mode", mode)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sightline.LoadWarning)
            frames = sightline.diff(a, b, mode=mode)
            tables, names = diff_tables(expected)
            assert_tables_equal(frames, tables, (a, b, mode), names)


def test_diff_bad_iteration_has_the_cli_message():
    a, b = (os.path.join(DATA, n) for n in ("hta_trace_compare_base.json.gz", "hta_trace_compare_test.json.gz"))
    err = cli_error("diff", a, b, "--iteration-a", "999")
    with pytest.raises(ValueError) as e:
        sightline.diff(a, b, iteration_a=999)
    assert "sightline diff: " + str(e.value) == err.splitlines()[-1]


def test_corpus_diff_pair_equals_cli():
    corpus_or_skip()
    a, b = (os.path.join(CORPUS, n) for n in ("hta_trace_diff_control_a100.json.gz", "hta_trace_diff_test_v100.json.gz"))
    if not (os.path.exists(a) and os.path.exists(b)):
        pytest.skip("the corpus diff pair is absent")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sightline.LoadWarning)
        tables, names = diff_tables(cli_json("diff", a, b))
        assert_tables_equal(sightline.diff(a, b), tables, (a, b), names)


def test_memory_diff_equals_cli():
    """Two runs with memory events: the memory_diff tables as DataFrames equal the CLI's."""
    a = SAMPLE
    b = os.path.join(CORPUS, "tl_mi300_bert_small.json.gz")
    if not os.path.exists(b):
        pytest.skip("the corpus MI300 BERT trace is absent")
    expected = cli_json("diff", a, b)
    assert expected["memory_diff"][0]["device"] == "cuda:0 vs hip:0"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sightline.LoadWarning)
        frames = sightline.diff(a, b)
    tables, names = diff_tables(expected)
    assert "memory_diff_contexts" in names
    assert_tables_equal(frames, tables, (a, b), names)
    assert frames["memory_diff"]["peak_a_bytes"].iloc[0] == expected["memory_diff"][0]["peak_a_bytes"]


# --- fleets --------------------------------------------------------------------------------------------


def make_fleet(tmp_path, job_dir):
    """RUN.slfleet of a job folder through the CLI's own map and reduce (no Dask needed)."""
    summaries = []
    for i, rank_file in enumerate(sorted(glob.glob(os.path.join(job_dir, "*.json*")))):
        out = str(tmp_path / ("rank%d.slsum" % i))
        code, _, err = cli("fleet-map", rank_file, "-o", out)
        assert code == 0, err
        summaries.append(out)
    fleet = str(tmp_path / "run.slfleet")
    code, _, err = cli("fleet-reduce", *summaries, "-o", fleet)
    assert code == 0, err
    return fleet


def test_open_fleet_equals_cli(tmp_path):
    job_dir = os.path.join(CORPUS, "param_dlrm_8rank")
    if not os.path.isdir(job_dir):
        pytest.skip("the corpus 8-rank job (../shared/corpus/param_dlrm_8rank) is absent")
    path = make_fleet(tmp_path, job_dir)
    fleet = sightline.open_fleet(path)
    assert fleet.ranks == list(range(8))
    assert all(r["status"] == "ok" and os.path.exists(r["path"]) for r in fleet.rank_status())
    expected = cli_json("report", path)
    names = [n for n in ("collectives", "stragglers", "clock_offsets", "ranks", "outliers", "nodes") if n in expected]
    assert {"collectives", "stragglers", "clock_offsets", "ranks"} <= set(names)
    assert_tables_equal(fleet.report(), {n: expected[n] for n in names}, path, names)
    # The job tables equal the folder's own report, as the CLI's fleet report does.
    folder = cli_json("report", job_dir, "--only", "collectives,stragglers,clock_offsets")
    assert_tables_equal(fleet.report(tables=["stragglers"]), {"stragglers": folder["stragglers"]}, job_dir, ["stragglers"])
    rank = fleet.open_rank(3)
    assert rank.info()["events"] == cli_json("info", fleet.rank_status()[3]["path"])["events"]
    with pytest.raises(KeyError):
        fleet.open_rank(99)


def test_open_fleet_refuses_a_cut_file_with_the_cli_message(tmp_path):
    job_dir = os.path.join(CORPUS, "param_dlrm_8rank")
    if not os.path.isdir(job_dir):
        pytest.skip("the corpus 8-rank job (../shared/corpus/param_dlrm_8rank) is absent")
    path = make_fleet(tmp_path, job_dir)
    cut = tmp_path / "cut.slfleet"
    cut.write_bytes(open(path, "rb").read()[:300])
    with pytest.raises(sightline.LoadError) as e:
        sightline.open_fleet(str(cut))
    code, _, err = cli("report", str(cut))
    assert code != 0
    assert str(e.value) in err
    assert "byte" in str(e.value)


# --- figures -------------------------------------------------------------------------------------------


def test_render_writes_the_cli_figure(tmp_path):
    t = open_quiet(SAMPLE)
    for view in ("timeline", "breakdown"):
        mine, theirs = tmp_path / ("py_%s.svg" % view), tmp_path / ("cli_%s.svg" % view)
        assert "elements" in t.render(mine, view=view, title="sample")
        code, out, err = cli("render", SAMPLE, "--view", view, "--title", "sample", "-o", str(theirs), "-q")
        assert code == 0, err
        # Cairo numbers its surfaces per process: this process has drawn others before.
        assert re.sub(rb"surface\d+", b"surface", mine.read_bytes()) == re.sub(rb"surface\d+", b"surface", theirs.read_bytes())
    with pytest.raises(ValueError):
        t.render(tmp_path / "x.bmp")


def test_version_and_help():
    assert sightline.__version__ == "0.1.0"
    assert "sightline.open" in sightline.__doc__
    for f in (sightline.open, sightline.open_job, sightline.diff, sightline.Trace.report, sightline.Trace.slices):
        assert f.__doc__


CTRL_C = """
import os, signal, sys, threading, time
import sightline
path = sys.argv[1]
t0 = time.perf_counter()
sightline.open(path, cache=False)
full = time.perf_counter() - t0
threading.Timer(0.02, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
t0 = time.perf_counter()
try:
    sightline.open(path, cache=False)
except KeyboardInterrupt:
    print("interrupted %.3f of %.3f" % (time.perf_counter() - t0, full))
"""


def test_ctrl_c_stops_a_load(tmp_path):
    make = os.environ.get("MAKE_SYNTHETIC_TRACE")
    if not make:
        pytest.skip("MAKE_SYNTHETIC_TRACE (tests/tools/make_synthetic_trace) not given")
    big = tmp_path / "big.json"
    subprocess.run([make, os.path.join(DATA, "hta_cp_simple_add_input.json.gz"), str(big), "--bytes", "150000000"],
                   check=True, capture_output=True)
    r = subprocess.run([sys.executable, "-c", CTRL_C, str(big)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    words = r.stdout.split()
    assert words[0] == "interrupted", r.stdout
    assert float(words[1]) < float(words[3]), r.stdout  # stopped before a whole load's time


SLICES_RSS = """
import sys
import numpy as np
import sightline

def rss_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024

t = sightline.open(sys.argv[1], cache=False)
loaded = rss_bytes()
df = t.slices()
after = rss_bytes()
columns = t._core.packed_slice_columns()
shared = [name for name in ("start_ns", "dur_ns", "depth", "lane")
          if np.shares_memory(df[name].to_numpy(), columns[name])]
shared += [name for name in ("name", "category", "correlation")
           if np.shares_memory(df[name].array.codes, columns[name])]
print(len(df), loaded, after, ",".join(shared))
"""


def test_slices_of_a_1gb_trace_add_under_a_tenth_to_the_process(tmp_path):
    # Issue 37: the whole trace's slices are views on the store's packed columns; only the
    # track and row columns are made (uint16 + uint32 a slice), so the DataFrame costs a small
    # part of what the loaded store does.
    make = os.environ.get("MAKE_SYNTHETIC_TRACE")
    if not make:
        pytest.skip("MAKE_SYNTHETIC_TRACE (tests/tools/make_synthetic_trace) not given")
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("under ASan the process's RSS is the sanitizer's shadow memory, not the store's")
    big = tmp_path / "1gb.json"
    subprocess.run([make, SAMPLE, str(big), "--bytes", "1000000000"], check=True, capture_output=True)
    r = subprocess.run([sys.executable, "-c", SLICES_RSS, str(big)], capture_output=True, text=True, timeout=600)
    big.unlink()
    assert r.returncode == 0, r.stderr
    rows, loaded, after, shared = r.stdout.split()
    assert int(rows) > 1_000_000
    # pandas narrows a categorical's codes to the fewest bytes its categories need, so the name
    # and category codes (a few thousand strings) are int16 copies; correlation (one id per
    # launch, well over 32,768 of them) keeps the store's int32 rows.
    assert shared.split(",") == ["start_ns", "dur_ns", "depth", "lane", "correlation"]
    added = int(after) - int(loaded)
    print("slices() of %s rows: %d MB loaded, %d MB added" % (rows, int(loaded) >> 20, added >> 20))
    assert added < 0.10 * int(after), "slices() added %d MB to a %d MB process" % (added >> 20, int(after) >> 20)
