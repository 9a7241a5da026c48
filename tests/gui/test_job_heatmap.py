#!/usr/bin/env python3
"""GUI end-to-end: a job tab's Heatmap view (ranks × steps of iteration time, ranks × collectives
of wait, ranks × steps of wait in collectives) under Xvfb, driven by the `heatmap` and `heatmapcell` script commands and checked
through the state dump against `sightline report DIR` (stragglers: iteration means; collectives):
the row order by slowness, a click on a step cell focusing that rank and framing that step, a
click on a wait cell selecting that collective; the cells drawn in the screenshot."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from testkit import SHARED, SIGHTLINE, check, failures, read_png  # noqa: E402

INPUTS = os.path.join(HERE, "..", "golden", "inputs")
CORPUS_JOB = os.path.join(SHARED, "param_dlrm_8rank")
DARKEST = (128, 0, 38)  # the scale's longest (YlOrRd)


def run(args, script_lines, states):
    with tempfile.TemporaryDirectory() as tmp:
        names = {n: os.path.join(tmp, n + ".json") for n in states}
        names["png"] = os.path.join(tmp, "shot.png")
        script = os.path.join(tmp, "script.txt")
        with open(script, "w") as f:
            f.write("\n".join([line.format(**names) for line in script_lines] + ["quit"]) + "\n")
        p = subprocess.run([SIGHTLINE, *args, "--script", script, "--size", "1600x1000"], capture_output=True, text=True, timeout=300)
        out = {n: json.load(open(names[n])) for n in states if os.path.exists(names[n])}
        png = read_png(names["png"]) if os.path.exists(names["png"]) else None
        return p.returncode, p.stderr, out, png


def report(job_dir, table):
    p = subprocess.run([SIGHTLINE, "report", job_dir, "--format", "json", "--only", table], capture_output=True, text=True, check=True)
    return json.loads(p.stdout)[table]


job = CORPUS_JOB if os.path.isdir(CORPUS_JOB) else os.path.join(INPUTS, "job_small")
if job != CORPUS_JOB:
    print(f"SKIP corpus job ({CORPUS_JOB} is absent): the hand-made job_small instead")
stragglers = {r["rank"]: r for r in report(job, "stragglers")}
# One ProfilerStep per rank in both jobs: the mean is the step; slowness = longest first, ties by rank.
slowest = sorted(stragglers, key=lambda r: (-stragglers[r]["iteration_mean_us"], r))
worst = slowest[0]

rc, err, st, png = run([job], ["heatmap steps slowness", "wait 1", "state {steps}", f"heatmapcell {worst} 0", "wait 1",
                               "state {clicked}", "screenshot {png}", "heatmap waits", "heatmapcell 1 0", "wait 1", "state {waits}",
                               "heatmap step-waits slowness", "wait 1", "state {stepwaits}"],
                       ["steps", "clicked", "waits", "stepwaits"])
check(rc == 0, f"run failed ({rc}): {err}")
if rc == 0:
    h = st["steps"]["job"]["heatmap"]
    check(st["steps"]["job"]["view"] == "heatmap", f"view: {st['steps']['job']['view']}")
    check(h["kind"] == "steps" and h["order"] == "slowness", f"heatmap: {h}")
    check(h["row_order"] == slowest, f"rows by slowness {h['row_order']}, the CLI's iteration means give {slowest}")
    check(h["ranks"] == len(stragglers) and h["columns"] == 1, f"matrix {h['ranks']} × {h['columns']}")
    check(h["band_rows"] == len(stragglers), f"{h['band_rows']} band rows for {len(stragglers)} ranks (room for each)")
    want_max = max(r["iteration_mean_us"] for r in stragglers.values()) * 1000
    check(abs(h["max_ns"] - want_max) <= 1000, f"scale max {h['max_ns']} ns, the CLI's longest step {want_max} ns")
    j = st["clicked"]["job"]
    check(j["heatmap"]["clicked"] == {"rank": worst, "column": 0}, f"clicked: {j['heatmap']['clicked']}")
    check(j["focused_rank"] == worst and worst in [e["rank"] for e in j["expanded_ranks"]], f"rank {worst} not focused/expanded: {j}")
    span = j["view_end_ns"] - j["view_start_ns"]
    check(abs(span - stragglers[worst]["iteration_mean_us"] * 1000) <= 1000, f"the view spans {span} ns, not rank {worst}'s step")
    w = st["waits"]["job"]
    check(w["heatmap"]["kind"] == "waits" and w["heatmap"]["columns"] == w["collectives"], f"waits: {w['heatmap']}")
    check(w["selected_instance"] is not None and w["selected_instance"]["index"] == 0 and w["focused_rank"] == 1,
          f"a wait cell click: instance {w['selected_instance']}, focused {w['focused_rank']}")
    sw = st["stepwaits"]["job"]["heatmap"]
    check(sw["kind"] == "step-waits" and sw["ranks"] == len(stragglers) and sw["columns"] == 1, f"step-waits: {sw}")
    # One step per rank: its cell is the part of its wait in collectives within the step, at most its whole wait.
    most_wait = max(r["wait_us"] for r in stragglers.values()) * 1000
    check(0 <= sw["min_ns"] <= sw["max_ns"] <= most_wait + 1000, f"step-waits {sw['min_ns']}..{sw['max_ns']} ns, the CLI's largest wait {most_wait} ns")
    if png:
        _, _, rows = png
        dark = sum(1 for row in rows for px in row if px == DARKEST)
        check(dark > 100, f"only {dark} pixels of the slowest step's colour in the screenshot")

# Errors: a kind that is not one, a rank that is not in the job.
for line, want in (("heatmap speeds", "steps, waits or step-waits"), ("heatmapcell 99 0", "no cell")):
    rc, err, _, _ = run([job], [line], [])
    check(rc == 1 and want in err, f"'{line}': rc {rc}, {err}")

if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("ok")
