#!/usr/bin/env python3
"""GUI end-to-end test of the live capture view: `sightline --live` in a real window (Xvfb),
fed by the fake producer through `sightline capture --live`, checked through the script's state
dumps and screenshot (views/README.md: waitlive, savelive, state's `live`)."""
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

from testkit import SIGHTLINE, check, failures, read_png  # noqa: E402

FAKE = os.environ.get("FAKE_PROGRAM", "")


def wait_for(path, seconds=30):
    end = time.time() + seconds
    while time.time() < end and not os.path.exists(path):
        time.sleep(0.05)
    return os.path.exists(path)


def env_for_capture(tmp):
    env = dict(os.environ)
    # Builds without CUPTI have no injection library; the fake program needs none.
    lib = os.path.join(os.path.dirname(SIGHTLINE), "libsightline_cupti.so")
    if not os.path.exists(lib) and not env.get("SIGHTLINE_CUPTI_LIB"):
        env["SIGHTLINE_CUPTI_LIB"] = os.path.join(tmp, "stand-in.so")
        open(env["SIGHTLINE_CUPTI_LIB"], "w").close()
    return env


def live_run(tmp, name, script_lines, producer_args, extra=None):
    """Starts the viewer, runs the producer into it, returns (viewer rc, stderr, producer output)."""
    sock = os.path.join(tmp, name + ".sock")
    script = os.path.join(tmp, name + ".txt")
    with open(script, "w") as f:
        f.write("\n".join(script_lines + ["quit"]) + "\n")
    viewer = subprocess.Popen([SIGHTLINE, "--live", "--socket", sock, "--script", script, "--size", "1280x800"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    produced = None
    if wait_for(sock):
        if extra:
            extra(sock)
        produced = subprocess.run([SIGHTLINE, "capture", "--live", "--socket", sock, "--", FAKE] + producer_args,
                                  capture_output=True, text=True, timeout=60, env=env_for_capture(tmp))
    try:
        out, err = viewer.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        viewer.kill()
        out, err = viewer.communicate()
    check(not os.path.exists(sock), f"{name}: the socket was not removed on exit")
    return viewer.returncode, err, produced


if not FAKE:
    print("FAIL: set FAKE_PROGRAM to the fake_capture_program binary")
    sys.exit(1)

with tempfile.TemporaryDirectory() as tmp:
    p = lambda n: os.path.join(tmp, n)  # noqa: E731
    # 1. Twenty batches of two kernels, 150 ms apart: the view follows the newest data; a zoom stops
    #    following; when the program ends the analyses run; the capture saves as Kineto JSON.
    second = {}

    def second_viewer(sock):
        r = subprocess.run([SIGHTLINE, "--live", "--socket", sock, "--size", "640x480", "--screenshot", p("x.png")],
                           capture_output=True, text=True, timeout=60)
        second["rc"], second["err"] = r.returncode, r.stderr

    rc, err, produced = live_run(tmp, "ok", [
        "waitlive 8 30", f"screenshot {p('streaming.png')}", f"state {p('early.json')}",
        "waitlive 40 30", "wait 2", f"state {p('all.json')}", f"screenshot {p('all.png')}",
        f"snapshotlive {p('live.slsnap')}",
        "zoom 0 50us", f"state {p('zoomed.json')}",
        "waitlive end 30", "wait 2", f"state {p('end.json')}", f"savelive {p('saved.json.gz')}",
    ], ["--batches", "20", "--interval-ms", "150", "--kernels", "2"], extra=second_viewer)
    check(rc == 0, f"viewer exit {rc}: {err}")
    check(produced is not None and produced.returncode == 0, f"capture --live failed: {produced and produced.stderr}")
    check(second.get("rc") == 1 and "another Sightline viewer is already listening" in second.get("err", ""),
          f"a second viewer on the same socket: {second}")
    if rc == 0:
        early, full = json.load(open(p("early.json"))), json.load(open(p("all.json")))
        zoomed, end = json.load(open(p("zoomed.json"))), json.load(open(p("end.json")))
        live = full["live"]
        check(8 <= early["live"]["store_kernels"] < 40, f"mid-stream snapshot: {early['live']['store_kernels']} kernels")
        check(live["store_kernels"] == 40 and live["kernels"] == 40, f"kernels shown/received: {live}")
        check(live["program"] == "fake_train" and live["pid"] > 0, f"program: {live['program']} {live['pid']}")
        check(live["following"], "not following by default")
        check(full["view_end_ns"] == live["store_end_ns"], f"view end {full['view_end_ns']} != store end {live['store_end_ns']}")
        check(early["view_end_ns"] == early["live"]["store_end_ns"], "view end while streaming")
        check(not zoomed["live"]["following"], "a zoom did not stop following")
        check(abs(zoomed["view_end_ns"] - 50000) < 1, f"zoom end {zoomed['view_end_ns']}")
        check(end["live"]["ended"] and end["live"]["final_shown"] and end["live"]["cut"] == "", f"end: {end['live']}")
        check(end["live"]["analyses_shown"] and end["view"] is not None, "analyses did not run when the capture ended")
        check(abs(end["view_end_ns"] - 50000) < 1, "the view moved after following was stopped")
        check(end["live"]["batches"] == 20 and end["live"]["dropped_cupti"] == 19, f"batches/drops: {end['live']}")
        events = json.load(gzip.open(p("saved.json.gz")))["traceEvents"]
        check(sum(1 for e in events if e.get("cat") == "kernel") == 40, "saved capture: kernel count")
        info = subprocess.run([SIGHTLINE, "info", p("saved.json.gz")], capture_output=True, text=True)
        check(info.returncode == 0, f"info on the saved capture: {info.stderr}")
        # The live store's snapshot opens like any trace and holds what was shown.
        snap = subprocess.run([SIGHTLINE, "info", p("live.slsnap")], capture_output=True, text=True)
        check(snap.returncode == 0, f"info on the live snapshot: {snap.stderr}")
        check("40 kernels, 40 linked to their launch" in snap.stdout, f"live snapshot info: {snap.stdout}")
        check(full["live"]["batches_shown"] >= 2, f"the store was appended to, batch by batch: {full['live']}")
        width, height, rows = read_png(p("all.png"))
        check((width, height) == (1280, 800), f"screenshot size {width}x{height}")
        white = sum(1 for row in rows for px in row if px == (255, 255, 255))
        check(white < width * height * 0.95, "screenshot is blank")

    # 2. A stream cut mid-frame: the accepted batches stay and the cut is reported.
    rc, err, produced = live_run(tmp, "cut", ["waitlive end 30", "wait 2", f"state {p('cut.json')}",
                                              f"screenshot {p('cut.png')}"],
                                 ["--batches", "3", "--kernels", "4", "--cut", "partial"])
    check(rc == 0, f"cut viewer exit {rc}: {err}")
    if rc == 0:
        live = json.load(open(p("cut.json")))["live"]
        check(live["store_kernels"] == 12 and live["records"] == 24, f"cut stream kept: {live}")
        check("stopped in the middle of a frame" in live["cut"] and not live["ended"], f"cut reported: {live['cut']}")

    # 3. A corrupted stream (bad frame header).
    rc, err, produced = live_run(tmp, "bad", ["waitlive end 30", "wait 2", f"state {p('bad.json')}"],
                                 ["--batches", "2", "--kernels", "4", "--cut", "garbage"])
    if rc == 0:
        live = json.load(open(p("bad.json")))["live"]
        check(live["store_kernels"] == 8 and "at byte" in live["cut"], f"malformed stream: {live}")
    else:
        check(False, f"bad viewer exit {rc}: {err}")

    if os.environ.get("LIVE_SHOTS"):  # keep the screenshots to look at
        import shutil
        for n in ("streaming.png", "all.png", "cut.png"):
            shutil.copy(p(n), os.path.join(os.environ["LIVE_SHOTS"], n))

print("ok" if not failures else f"{len(failures)} failures")
sys.exit(1 if failures else 0)
