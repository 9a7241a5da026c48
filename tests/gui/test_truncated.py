#!/usr/bin/env python3
"""GUI end-to-end test of a cut-off trace (issue 17): it opens, a banner says where it stops and
how many events loaded (seen in the screenshot), and the state dump counts exactly the events
that were complete before the cut (counted here from the JSON alone). A trace with launches but no
GPU activity gets its banner too (issue 35)."""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from testkit import DATA, SHARED, SIGHTLINE, check, failures, read_png  # noqa: E402

BANNER = (255, 224, 130)  # the banner's background in app/gui_window_tab.cpp


def complete_events_before(text, cut):
    """Elements of traceEvents that end at or before `cut`, found with Python's own JSON decoder."""
    decoder = json.JSONDecoder()
    pos = text.index("[", text.index('"traceEvents"')) + 1
    count = 0
    while True:
        while text[pos] in " \t\r\n,":
            pos += 1
        if text[pos] == "]":
            return count
        _, end = decoder.raw_decode(text, pos)
        if end > cut:
            return count
        count, pos = count + 1, end


def cut_trace(source, fraction, tmp):
    text = gzip.open(source, "rt").read()
    cut = int(len(text) * fraction)
    path = os.path.join(tmp, "cut_off_run.json")
    with open(path, "w") as f:
        f.write(text[:cut])
    return path, cut, complete_events_before(text, cut)


def run_gui(trace, tmp):
    shot, state, script = (os.path.join(tmp, n) for n in ("shot.png", "state.json", "script.txt"))
    with open(script, "w") as f:
        f.write(f"wait 2\nscreenshot {shot}\nstate {state}\nquit\n")
    p = subprocess.run([SIGHTLINE, trace, "--script", script, "--size", "1280x800"], capture_output=True, text=True,
                       timeout=180)
    if p.returncode != 0 or not os.path.exists(state):
        return p.returncode or 1, p.stderr, None, None
    return 0, p.stderr, json.load(open(state)), shot


def banner_rows(rows):
    """Rows of the screenshot that are mostly banner colour."""
    return [y for y, row in enumerate(rows) if sum(1 for px in row if px == BANNER) > len(row) // 2]


source = os.path.join(SHARED, "hta_nccl_data_a100.json.gz")
if not os.path.exists(source):
    print("../shared is absent: using a repo test trace instead of a corpus trace")
    source = os.path.join(DATA, "hta_cp_simple_add_input.json.gz")
tmp = tempfile.mkdtemp()
try:
    trace, cut, expected = cut_trace(source, 0.61, tmp)
    check(expected > 100, f"only {expected} events before the cut")

    # The CLI agrees first: exit 0, one warning line naming the file and the offset.
    info = subprocess.run([SIGHTLINE, "info", trace, "--format", "json"], capture_output=True, text=True)
    check(info.returncode == 0, f"info exit {info.returncode}: {info.stderr}")
    warning = info.stderr.strip().splitlines()
    check(len(warning) == 1 and trace in warning[0] and f"ends at byte {cut}:" in warning[0],
          f"info's warning: {info.stderr!r}")
    if info.returncode == 0:
        events = json.loads(info.stdout)["events"]
        check(events == expected, f"info counts {events} events, {expected} were complete")

    rc, err, state, shot = run_gui(trace, tmp)
    check(rc == 0, f"the GUI failed on the cut-off trace ({rc}): {err}")
    if rc == 0:
        check(state["error"] == "", f"error shown: {state['error']}")
        check(state.get("events") == expected, f"state counts {state.get('events')} events, {expected} were complete")
        t = state.get("truncated")
        check(t is not None and t["byte_offset"] == cut and t["events"] == expected, f"state's truncated: {t}")
        check(t is not None and t["banner"] == f"this trace ends at byte {cut}: the run was probably cut off; "
              f"{expected} events loaded", f"banner text: {t}")
        width, height, rows = read_png(shot)
        band = banner_rows(rows)
        check(len(band) >= 12, f"no banner in the screenshot ({len(band)} rows of banner colour)")
        check(band and band[0] < height // 4, f"banner not near the top: rows {band[:1]}..")
        # Dark text on the banner: the words are drawn, not just the strip.
        if band:
            ink = sum(1 for y in band for px in rows[y] if max(px) < 140)
            check(ink > 200, f"the banner holds no text ({ink} dark pixels)")
        shutil.copy(shot, os.path.join(tempfile.gettempdir(), "sightline_truncated_banner.png"))

    # A whole trace shows no banner.
    rc, err, state, shot = run_gui(os.path.join(DATA, "hta_trace_compare_base.json.gz"), tmp)
    check(rc == 0 and state["truncated"] is None, "a whole trace reports a truncation")
    if rc == 0:
        check(not banner_rows(read_png(shot)[2]), "a whole trace shows the banner")
        check(state["gpu_warning"] == "", f"a trace with GPU activity warns: {state['gpu_warning']}")

    # Launches but no GPU activity (CUPTI activity not recorded): the CLI's warning as a banner.
    no_gpu = os.path.join(HERE, "..", "golden", "inputs", "no_gpu_activity.json")
    rc, err, state, shot = run_gui(no_gpu, tmp)
    check(rc == 0, f"the GUI failed on a trace without GPU activity ({rc}): {err}")
    if rc == 0:
        words = "no GPU activity recorded: 5 launches have no GPU event — was CUPTI activity tracing on?"
        check(state["gpu_warning"] == words, f"state's gpu_warning: {state['gpu_warning']!r}")
        check(state["truncated"] is None, "a whole trace without GPU activity reports a truncation")
        band = banner_rows(read_png(shot)[2])
        check(len(band) >= 12, f"no banner for the missing GPU activity ({len(band)} rows of banner colour)")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print("gui truncated:", "FAIL" if failures else "ok", f"({len(failures)} failures)")
sys.exit(1 if failures else 0)
