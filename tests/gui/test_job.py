#!/usr/bin/env python3
"""GUI end-to-end tests of a job tab (every rank of a run in one tab): the real app under Xvfb,
driven by the job script commands (collective, rankselect, expand, focus, ranksort) and checked
through its state dump against `sightline report DIR --format json` (collectives table)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from testkit import SHARED, SIGHTLINE, check, failures, read_png  # noqa: E402

INPUTS = os.path.join(HERE, "..", "golden", "inputs")
SMALL = os.path.join(INPUTS, "job_small")
CORPUS_JOB = os.path.join(SHARED, "param_dlrm_8rank")
BUSY = (0, 114, 178)      # the overview's GPU-busy colour
LAST = (213, 30, 30)      # the last rank's arrival mark
SCREENSHOT_OUT = os.environ.get("JOB_SCREENSHOT")  # where to keep the overview PNG (README asset)


def run(args, script_lines, states, size="1600x1000"):
    """Runs the GUI with a script; `states` name the `state` dumps ({NAME}); {png} is a screenshot
    path. Returns (rc, stderr, {name: state}, png rows or None)."""
    with tempfile.TemporaryDirectory() as tmp:
        names = {n: os.path.join(tmp, n + ".json") for n in states}
        names["png"] = os.path.join(tmp, "shot.png")
        lines = [line.format(**names) for line in script_lines]
        script = os.path.join(tmp, "script.txt")
        with open(script, "w") as f:
            f.write("\n".join(lines + ["quit"]) + "\n")
        p = subprocess.run([SIGHTLINE, *args, "--script", script, "--size", size], capture_output=True, text=True, timeout=300)
        out = {n: json.load(open(names[n])) for n in states if os.path.exists(names[n])}
        png = None
        if os.path.exists(names["png"]):
            png = read_png(names["png"])
            if SCREENSHOT_OUT:
                shutil.copy(names["png"], SCREENSHOT_OUT)
        return p.returncode, p.stderr, out, png


def cli_instances(job_dir):
    """{(group, name, instance): {rank: row}} from the CLI's collectives table."""
    rep = json.loads(subprocess.run([SIGHTLINE, "report", job_dir, "--format", "json", "--only", "collectives"],
                                    capture_output=True, text=True, check=True).stdout)
    out = {}
    for row in rep["collectives"]:
        out.setdefault((row["group"], row["name"], row["instance"]), {})[row["rank"]] = row
    return out


# 1. The hand-made 3-rank job (tests/golden/inputs): one tab, one AllReduce where rank 1 is 50 µs late.
rc, err, st, _ = run([SMALL], ["state {open}", "collective 0", "state {sel}"], ["open", "sel"])
check(rc == 0, f"job_small run failed ({rc}): {err}")
if rc == 0:
    j = st["open"]["job"]
    check(st["open"]["tabs"] == 1, f"a job folder opened {st['open']['tabs']} tabs, want 1")
    check(j is not None and j["loaded"] == 3 and [r["rank"] for r in j["ranks"]] == [0, 1, 2], f"job_small ranks: {j}")
    check(j["collectives"] == 1 and j["selected_instance"] is None, f"job_small collectives: {j['collectives']}")
    s = st["sel"]["job"]["selected_instance"]
    check(s is not None and s["last_rank"] == 1 and s["skew_ns"] == 50000, f"job_small instance: {s}")
    check(sorted(st["sel"]["job"]["highlighted_ranks"]) == [0, 1, 2], f"highlighted {st['sel']['job']['highlighted_ranks']}")
    check("rank 1 made the others wait" in st["sel"]["job"]["insight"], f"insight: {st['sel']['job']['insight']}")

# 1a. The job's overview strip (above the ruler) shows every rank's GPU busy before any rank is
# expanded: the mean over the 3 ranks, whose kernels add up to 100+300, 100+250 and 100+300 µs,
# so the strip's columns sum to 1150/3 µs of busy time. The Insights tab's Stragglers entry is the
# CLI's sentence; opening it focuses rank 1 (expanded) and selects its worst (only) collective.
stragglers = json.loads(subprocess.run([SIGHTLINE, "report", SMALL, "--format", "json", "--only", "stragglers"],
                                       capture_output=True, text=True, check=True).stdout)["stragglers"]
report_text = subprocess.run([SIGHTLINE, "report", SMALL], capture_output=True, text=True, check=True).stdout
cli_sentence = next((line[len("stragglers: "):] for line in report_text.splitlines() if line.startswith("stragglers: ")), None)
rc, err, st, _ = run([SMALL], ["wait 2", "state {open}", "jobinsight 0", "wait 2", "state {opened}"], ["open", "opened"])
check(rc == 0, f"job_small insight run failed ({rc}): {err}")
if rc == 0:
    j = st["open"]["job"]
    strip = j["strip"]
    check(j["expanded_ranks"] == [] and strip["columns"] > 100 and strip["busy_columns"] > 0,
          f"overview strip with no rank expanded: {strip}")
    check(abs(strip["busy_ns"] - 1150e3 / 3) < 1150e3 / 3 * 0.01, f"strip busy {strip['busy_ns']} ns, want {1150e3 / 3:.0f}")
    ins = j["insights"]
    late = max(stragglers, key=lambda r: r["delay_caused_us"])
    check(cli_sentence is not None and len(ins) == 1 and ins[0]["kind"] == "stragglers" and ins[0]["title"] == cli_sentence
          and ins[0]["title"] == j["insight"], f"insights {ins}, CLI sentence {cli_sentence!r}")
    if ins:
        check(ins[0]["rank"] == 1 == late["rank"] and abs(ins[0]["cost_ns"] - late["delay_caused_us"] * 1000) < 1
              and ins[0]["cost_ns"] == 100000, f"stragglers entry {ins[0]} vs CLI {late}")
        check(ins[0]["instance"] == 0 and ins[0]["t0_ns"] < ins[0]["t1_ns"], f"its worst collective: {ins[0]}")
    o = st["opened"]["job"]
    check(o["insight_opened"] == 0 and o["focused_rank"] == 1, f"jobinsight 0: opened {o['insight_opened']}, focused {o['focused_rank']}")
    check(o["selected_instance"] is not None and o["selected_instance"]["index"] == 0 and o["selected_instance"]["last_rank"] == 1,
          f"jobinsight 0 selected {o['selected_instance']}")
    check([{f: e[f] for f in ("rank", "highlights", "selected")} for e in o["expanded_ranks"]]
          == [{"rank": 1, "highlights": 1, "selected": True}], f"jobinsight 0 expanded {o['expanded_ranks']}")
    rc, err, _, _ = run([SMALL], ["jobinsight 1"], [])
    check(rc == 1 and "jobinsight wants an index below 1" in err, f"jobinsight 1: rc {rc}, {err}")

# 1b. Export figure... in the job tab writes the same figure as `render DIR --view ranks`.
with tempfile.TemporaryDirectory() as out:
    svg = os.path.join(out, "ranks.svg")
    rc, err, st, _ = run([SMALL], ["jobexport " + svg], [])
    check(rc == 0 and os.path.exists(svg), f"jobexport: rc {rc}, {err}")
    if os.path.exists(svg):
        import xml.etree.ElementTree as ET
        texts = [g.get("aria-label") for g in ET.parse(svg).getroot().iter("{http://www.w3.org/2000/svg}g") if g.get("aria-label")]
        check("rank 2" in texts and "100 µs" in texts, f"exported figure labels: {texts}")
    rc, err, st, _ = run([SMALL], ["jobexport " + os.path.join(out, "x.gif")], [])
    check(rc == 1 and ".svg, .pdf or .png" in err, f"jobexport to .gif: rc {rc}, {err}")

# 2. --job A B C: the same job from explicit files, one tab.
files = [os.path.join(SMALL, f) for f in ("worker0.json", "worker1.json", "rank_2.trace.json")]
rc, err, st, _ = run(["--job", *files], ["state {open}"], ["open"])
check(rc == 0 and st["open"]["tabs"] == 1 and st["open"]["job"]["loaded"] == 3, f"--job: rc {rc} {err} {st.get('open', {}).get('job')}")

# 3. One truncated rank: shown as failed with its error, the other stays usable.
rc, err, st, _ = run([os.path.join(INPUTS, "job_truncated")], ["state {open}"], ["open"])
check(rc == 0, f"job_truncated run failed ({rc}): {err}")
if rc == 0:
    ranks = {r["rank"]: r for r in st["open"]["job"]["ranks"]}
    check(ranks[0]["status"] == "loaded" and ranks[1]["status"] == "failed" and ranks[1]["error"],
          f"job_truncated ranks: {ranks}")
    check(st["open"]["job"]["loaded"] == 1, f"job_truncated loaded {st['open']['job']['loaded']}")

# 3b. One rank cut off after complete events: it loads, marked with the single-trace banner's words.
rc, err, st, _ = run([os.path.join(INPUTS, "job_cut")], ["state {open}"], ["open"])
check(rc == 0, f"job_cut run failed ({rc}): {err}")
if rc == 0:
    ranks = {r["rank"]: r for r in st["open"]["job"]["ranks"]}
    check(ranks[0]["status"] == "loaded" and ranks[0]["cut_off"] == "", f"job_cut rank 0: {ranks[0]}")
    check(ranks[1]["status"] == "loaded" and "this trace ends at byte" in ranks[1]["cut_off"]
          and "6 events loaded" in ranks[1]["cut_off"], f"job_cut rank 1: {ranks[1]}")

# 3c. An expanded rank's rows sit on the job clock, in the job's one timeline: its source is
# shifted by the rank's shift (rank 1 of job_cut starts 2 ms after rank 0, so with raw clocks its
# shift onto the job clock is 2 ms; `align none` because aligning by the collective would cancel
# it), so at the view's left edge the rank's own clock reads the job clock minus 2 ms; its rows
# start below the rank overview's rows.
rc, err, st, _ = run([os.path.join(INPUTS, "job_cut")],
                     ["align none", "expand 1", "wait 2", "state {exp}", "collective 0", "wait 2", "state {sel}"], ["exp", "sel"])
check(rc == 0, f"job_cut expand run failed ({rc}): {err}")
if rc == 0:
    for name in ("exp", "sel"):
        j = st[name]["job"]
        e = j["expanded_ranks"]
        check(len(e) == 1 and e[0]["rank"] == 1 and e[0]["shift_ns"] == 2000000, f"{name}: expanded {e}")
        check(len(e) == 1 and abs(e[0]["rank_view_start_ns"] - (j["view_start_ns"] - 2000000)) < 1,
              f"{name}: rank 1's clock at the left edge {e and e[0]['rank_view_start_ns']}, job clock {j['view_start_ns']}")
        check(len(e) == 1 and e[0]["header_y"] >= j["overview_bottom_y"] > 0,
              f"{name}: rank 1's rows at y {e and e[0]['header_y']}, overview rows end at {j['overview_bottom_y']}")
    sel = st["sel"]["job"]["expanded_ranks"]
    check(sel and sel[0]["highlights"] == 1, f"collective 0 not highlighted on the expanded rank: {sel}")

# 3d. A folder of unrelated traces: the job tab's banner says what the CLI warns (device type,
# world_size, clocks that never overlap); two files claiming rank 0 open with --rank-from order.
rc, err, st, _ = run([os.path.join(INPUTS, "job_unrelated")], ["wait 2", "state {open}"], ["open"])
check(rc == 0, f"job_unrelated run failed ({rc}): {err}")
if rc == 0:
    w = st["open"]["job"]["warnings"]
    check(len(w) == 3 and w[0].startswith("ranks disagree on device type") and "world_size" in w[1]
          and "do not overlap" in w[2], f"job_unrelated banner: {w}")
rc, err, st, _ = run([os.path.join(INPUTS, "job_dup"), "--rank-from", "order"], ["wait 2", "state {open}"], ["open"])
check(rc == 0 and st["open"]["job"]["error"] == "" and [r["rank"] for r in st["open"]["job"]["ranks"]] == [0, 1],
      f"job_dup --rank-from order: {rc} {err} {st.get('open', {}).get('job')}")

# 4. A folder with no traces: a clear error, exit 1.
rc, err, st, _ = run([os.path.join(INPUTS, "job_not_traces")], ["state {open}"], ["open"])
check(rc == 1 and "sightline:" in err, f"job_not_traces: rc {rc}, stderr {err!r}")

# 5. Many ranks (600 copies of a tiny rank): rows shrink to 3 px, then each row aggregates
# consecutive ranks so that all of them stay on screen; a collective still marks every rank.
with tempfile.TemporaryDirectory() as many:
    rank = json.load(open(os.path.join(SMALL, "worker1.json")))
    for r in range(600):
        rank["distributedInfo"].update(rank=r, world_size=600)
        json.dump(rank, open(os.path.join(many, f"rank{r}.json"), "w"))
    rc, err, st, _ = run([many], ["collective 0", "state {sel}"], ["sel"])
    check(rc == 0, f"600-rank job failed ({rc}): {err}")
    if rc == 0:
        j = st["sel"]["job"]
        check(j["loaded"] == 600 and j["row_height"] == 3 and j["ranks_per_row"] > 1, f"600 ranks: {j['row_height']} px rows, "
              f"{j['ranks_per_row']} ranks per row")
        check(j["rows_drawn"] * j["ranks_per_row"] >= 600, f"{j['rows_drawn']} rows × {j['ranks_per_row']} do not cover 600 ranks")
        check(sorted(j["highlighted_ranks"]) == list(range(600)), f"{len(j['highlighted_ranks'])} of 600 ranks marked")
        # The bands come from their pyramid (built on a worker thread; the script waits for it as for a load).
        check(j["bands_from_pyramid"] and not j["bands_pending"] and j["band_level"] >= 0, f"600 ranks: bands not from their pyramid")

# 5. The corpus job: selecting a collective marks all 8 ranks; numbers equal the CLI's.
if not os.path.isdir(CORPUS_JOB):
    print(f"SKIP corpus job: {CORPUS_JOB} is absent")
else:
    cli = cli_instances(CORPUS_JOB)
    worst_skew = max(next(iter(rows.values()))["skew_us"] for rows in cli.values())
    rc, err, st, png = run([CORPUS_JOB],
                           ["state {open}", "collective worst", "wait 3", "screenshot {png}", "state {worst}", "collective next",
                            "state {next}",
                            "rankselect 3 ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*) 1",
                            "wait 3", "state {kernel}", "ranksort rank asc", "focus 5", "state {focus}",
                            "align collectives", "state {aligned}", "align none", "state {raw}"],
                           ["open", "worst", "next", "kernel", "focus", "aligned", "raw"])
    check(rc == 0, f"corpus job run failed ({rc}): {err}")
    if rc == 0:
        j = st["open"]["job"]
        check(j["loaded"] == 8 and len(j["ranks"]) == 8, f"corpus job ranks: {j['loaded']}")
        # The Stragglers entry and the Ranks header say what `report DIR` says, the cause in words.
        # Strict decoding: the text tables cut long names at a character boundary (valid UTF-8).
        text = subprocess.run([SIGHTLINE, "report", CORPUS_JOB], capture_output=True, check=True).stdout.decode("utf-8")
        sentence = next((ln[len("stragglers: "):] for ln in text.splitlines() if ln.startswith("stragglers: ")), None)
        check(sentence is not None and "data_loading" not in sentence and j["insight"] == sentence
              and [i["title"] for i in j["insights"]] == [sentence], f"corpus insights {j['insights']}, CLI {sentence!r}")
        check(j["strip"]["busy_columns"] > j["strip"]["columns"] // 4, f"corpus overview strip {j['strip']}")
        check(j["collectives"] == len(cli), f"GUI instances {j['collectives']}, CLI {len(cli)}")
        w = st["worst"]["job"]
        s = w["selected_instance"]
        check(s is not None and abs(s["skew_ns"] - worst_skew * 1000) < 1, f"worst skew {s and s['skew_ns']} vs CLI {worst_skew} µs")
        check(sorted(w["highlighted_ranks"]) == list(range(8)), f"highlighted ranks {w['highlighted_ranks']}, want all 8")
        if s:
            rows = cli[(s["group"], s["name"], s["instance"])]
            check(len(s["arrivals"]) == 8, f"{len(s['arrivals'])} arrivals")
            for a in s["arrivals"]:
                r = rows[a["rank"]]
                check(abs(a["arrival_ns"] - r["arrival_us"] * 1000) < 1 and abs(a["wait_ns"] - r["wait_us"] * 1000) < 1,
                      f"rank {a['rank']} arrival/wait {a} vs CLI {r}")
                check(s["last_rank"] == r["last_rank"], f"last rank {s['last_rank']} vs CLI {r['last_rank']}")
            n = st["next"]["job"]["selected_instance"]
            check(n is not None and n["index"] == min(s["index"] + 1, j["collectives"] - 1), f"next: {n and n['index']}")
        k = st["kernel"]["job"]
        ks = k["selected_instance"]
        check(ks is not None and ks["name"] == "AllReduce" and ks["instance"] == 1, f"kernel click selected {ks}")
        check(sorted(k["highlighted_ranks"]) == list(range(8)), f"kernel click highlighted {k['highlighted_ranks']}")
        check([{f: e[f] for f in ("rank", "highlights", "selected")} for e in k["expanded_ranks"]]
              == [{"rank": 3, "highlights": 1, "selected": True}], f"expanded {k['expanded_ranks']}")
        f = st["focus"]["job"]
        check(f["ranks_table"] == list(range(8)), f"ranksort rank asc: {f['ranks_table']}")
        check(f["focused_rank"] == 5 and 5 in [e["rank"] for e in f["expanded_ranks"]], f"focus 5: {f['focused_rank']}")
        # The Align clocks toggle: the CLI's offsets (report --align collectives), selection kept.
        rep = json.loads(subprocess.run([SIGHTLINE, "report", CORPUS_JOB, "--align", "collectives", "--format", "json",
                                         "--only", "clock_offsets"], capture_output=True, text=True, check=True).stdout)
        al = st["aligned"]["job"]
        check(al["aligned"] is True and not st["raw"]["job"]["aligned"], "align collectives / none did not switch")
        for row in rep["clock_offsets"]:
            check(abs(al["offsets_ns"][str(row["rank"])] - row["offset_us"] * 1000) < 1,
                  f"rank {row['rank']} offset {al['offsets_ns'].get(str(row['rank']))} ns vs CLI {row['offset_us']} µs")
        ks, ka = k["selected_instance"], al["selected_instance"]
        check(ka is not None and (ka["name"], ka["instance"]) == (ks["name"], ks["instance"]), f"aligned selection {ka}")
        check(sorted(al["highlighted_ranks"]) == list(range(8)), f"aligned highlighted {al['highlighted_ranks']}")
    if png:
        width, height, pixels = png
        # The overview's rows: busy-blue pixels in 8 separate row bands, and the last rank's red mark.
        bands = set()
        for y in range(60, min(height, 400)):
            if sum(1 for p in pixels[y] if p == BUSY) > 50:
                bands.add(y // 26)
        check(len(bands) >= 8, f"busy rows found in {len(bands)} bands of the overview")
        check(any(p == LAST for row in pixels[60:400] for p in row), "no last-rank mark in the overview")

if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("ok")
