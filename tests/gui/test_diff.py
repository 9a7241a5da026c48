#!/usr/bin/env python3
"""GUI end-to-end tests of tabs and the diff view: the real app under Xvfb, driven by the
automation script (tab N, view diff, diffrow N, diffgroup, zoom) and checked through its state
dump against `sightline diff --format json`."""
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from testkit import DATA, SAMPLE, SHARED, SIGHTLINE, check, failures, read_png  # noqa: E402
BASE = os.path.join(DATA, "hta_trace_compare_base.json.gz")
TEST = os.path.join(DATA, "hta_trace_compare_test.json.gz")
SVG = "{http://www.w3.org/2000/svg}"





def run(args, script_lines, states, size="1600x1000"):
    """Runs the GUI with a script; `states` are names of `state` dumps the script writes as
    {NAME}. Returns (rc, stderr, {name: state})."""
    with tempfile.TemporaryDirectory() as tmp:
        lines = [line.format(**{n: os.path.join(tmp, n + ".json") for n in states}) for line in script_lines]
        script = os.path.join(tmp, "script.txt")
        with open(script, "w") as f:
            f.write("\n".join(lines + ["quit"]) + "\n")
        p = subprocess.run([SIGHTLINE, *args, "--script", script, "--size", size], capture_output=True, text=True, timeout=300)
        out = {}
        for n in states:
            path = os.path.join(tmp, n + ".json")
            if os.path.exists(path):
                out[n] = json.load(open(path))
        return p.returncode, p.stderr, out


# What the CLI says the aligned diff holds: the table must show exactly these operators.
cli = json.loads(subprocess.run([SIGHTLINE, "diff", BASE, TEST, "--format", "json"], capture_output=True, text=True,
                                check=True).stdout)
ops = cli["aligned"]["ops"]
check(len(ops) >= 3, f"the CLI's aligned diff has only {len(ops)} ops")
names = {o["name"] for o in ops}
biggest = max(ops, key=lambda o: o["self_delta_us"])

# 1. The diff view opens with the table, a row selects matched events in both runs, zoom syncs.
rc, err, st = run(["--diff", BASE, TEST],
                  ["view diff", "state {open}", "diffrow 0", "state {row}", "zoom 1ms 3ms", "wait 3", "state {zoom}",
                   "diffoffset 2ms", "zoom 5ms 6ms", "wait 3", "state {shifted}", "diffgroup on", "state {grouped}",
                   "difffilter aten", "state {filtered}"], ["open", "row", "zoom", "shifted", "grouped", "filtered"])
check(rc == 0, f"diff run failed ({rc}): {err}")
if rc == 0:
    d = st["open"]["diff"]
    check(d is not None and d["ready"], f"diff not ready: {d}")
    check(d["rows"] == len(ops), f"table rows {d['rows']}, CLI aligned ops {len(ops)}")
    check(d["selected_row"] == -1, "a row is selected before any click")
    check(st["open"]["tabs"] == 1, f"tabs {st['open']['tabs']}")
    check(d["a"]["path"].endswith("base.json.gz") and d["b"]["path"].endswith("test.json.gz"), "A/B paths")

    r = st["row"]["diff"]
    check(r["selected_row"] == 0 and r["selected"] is not None, f"row 0 not selected: {r['selected_row']}")
    sel = r["selected"]
    check(r["a"]["highlights"] >= 1 and r["a"]["highlights"] == r["b"]["highlights"],
          f"highlights A {r['a']['highlights']} B {r['b']['highlights']}")
    # The row is named by the matching key; the highlights are each run's own slices of that op.
    own = {side: {o["name_" + side] for o in ops if o["name"] == sel["name"]} for side in ("a", "b")}
    check(all(h["name"] in own[side] for side in ("a", "b") for h in r[side]["highlighted"]),
          f"highlighted slices are not the selected operator {sel['name']} ({own})")
    check(sel["dur_a_ns"] == sum(h["dur_ns"] for h in r["a"]["highlighted"]), "A highlights' durations differ from the row's")
    check(sel["dur_b_ns"] == sum(h["dur_ns"] for h in r["b"]["highlighted"]), "B highlights' durations differ from the row's")
    # Row 0 sorts first by self delta (what changed, not its ancestors): the CLI's largest own-time
    # regression (µs there).
    check(abs((sel["self_b_ns"] - sel["self_a_ns"]) / 1e3 - biggest["self_delta_us"]) <= 1,
          f"row 0 self delta {sel['self_b_ns'] - sel['self_a_ns']} ns vs CLI max {biggest['self_delta_us']} us")
    cli_row = next(o for o in ops if o["name"] == sel["name"] and abs(o["dur_a_us"] - sel["dur_a_ns"] / 1e3) <= 1)
    check(abs(cli_row["dur_b_us"] - sel["dur_b_ns"] / 1e3) <= 1, f"row 0's B duration differs from the CLI's {cli_row}")
    # Framed: both matched events lie in their timeline's view.
    for side in ("a", "b"):
        v, h = r[side], r[side]["highlighted"][0]
        check(v["view_start_ns"] <= h["start_ns"] and h["start_ns"] + h["dur_ns"] <= v["view_end_ns"],
              f"{side}: selected op {h['start_ns']} not framed in {v['view_start_ns']}..{v['view_end_ns']}")

    z = st["zoom"]["diff"]
    off = z["offset_ns"]
    check(abs(z["a"]["view_start_ns"] - 1e6) < 1 and abs(z["a"]["view_end_ns"] - 3e6) < 1,
          f"A view {z['a']['view_start_ns']}..{z['a']['view_end_ns']}")
    check(abs(z["b"]["view_start_ns"] - (1e6 + off)) < 1 and abs(z["b"]["view_end_ns"] - (3e6 + off)) < 1,
          f"B view {z['b']['view_start_ns']}..{z['b']['view_end_ns']} not A + offset {off}")
    # One timeline: A's rows under its header, then B's below them; B's source shifted back by the offset.
    check(0 <= z["a"]["header_y"] < z["b"]["header_y"], f"headers A at {z['a']['header_y']}, B at {z['b']['header_y']}")
    check(z["a"]["shift_ns"] == 0 and abs(z["b"]["shift_ns"] + off) < 1, f"shifts A {z['a']['shift_ns']} B {z['b']['shift_ns']}")
    sh = st["shifted"]["diff"]
    check(sh["offset_ns"] == 2e6, f"diffoffset 2ms gave {sh['offset_ns']}")
    check(abs(sh["b"]["view_start_ns"] - 7e6) < 1 and abs(sh["b"]["view_end_ns"] - 8e6) < 1,
          f"B view {sh['b']['view_start_ns']}..{sh['b']['view_end_ns']} not A (5..6 ms) + 2 ms")

    g = st["grouped"]["diff"]
    check(g["grouped"] and g["rows"] == len(names), f"grouped rows {g['rows']}, distinct operators {len(names)}")
    f = st["filtered"]["diff"]
    aten = {n for n in names if "aten" in n.lower()}
    check(f["rows"] == len(aten) and f["rows"] < len(names), f"filter 'aten': {f['rows']} rows, expected {len(aten)}")

# 1b. Both matched rows in view after a table selection, whatever A's height: each run's matched
# track is pinned under its header while the row is selected, and in a window too short for
# both (1100x700 here: A's rows alone fill it) A's process groups collapse so B's row shows too.
for size in ("1600x1000", "1100x700"):
    rc, err, st = run(["--diff", BASE, TEST], ["view diff", "diffrow 0", "wait 2", "state {r0}", "diffrow 3", "wait 2", "state {r3}"],
                      ["r0", "r3"], size=size)
    check(rc == 0, f"diff {size} run failed ({rc}): {err}")
    for name in ("r0", "r3") if rc == 0 else ():
        d = st[name]["diff"]
        top, bottom = d["rows_rect"][1], d["rows_rect"][3]
        for side in ("a", "b"):
            v = d[side]
            check(v["matched_track"] >= 0 and v["matched_pinned"], f"{size} {name} {side}: matched track {v['matched_track']} not pinned")
            check(top <= v["matched_track_y"] <= bottom - 10, f"{size} {name} {side}: matched track at y {v['matched_track_y']}, "
                  f"rows area {top}..{bottom}")
            h = v["highlighted"][0] if v["highlighted"] else None
            check(h is not None and h["track"] == v["matched_track"], f"{size} {name} {side}: highlighted {h}, matched track {v['matched_track']}")
        check(d["a"]["header_y"] < d["b"]["header_y"], f"{size} {name}: B's header above A's")
        for side in ("a", "b"):  # both runs stay named, whatever the selection scrolled to
            check(top <= d[side]["header_y"] <= bottom - 10, f"{size} {name}: {side}'s header at y {d[side]['header_y']}, "
                  f"rows area {top}..{bottom}")

# 1c. Deep Python stacks (bert, H100 vs MI300: ~40 levels a track): a selected row scrolls far into
# A's rows; A's header stays at the top of the rows area and B's waits at the bottom edge, so the
# view never shows one run with no A/B header.
bert_a, bert_b = (os.path.join(SHARED, n) for n in ("tl_h100_bert_small.json.gz", "tl_mi300_bert_small.json.gz"))
if os.path.exists(bert_a) and os.path.exists(bert_b):
    rc, err, st = run(["--diff", bert_a, bert_b], ["view diff", "wait 3", "diffrow 0", "wait 2", "state {r0}", "diffrow 3",
                                                   "wait 2", "state {r3}"], ["r0", "r3"], size="1100x700")
    check(rc == 0, f"bert diff run failed ({rc}): {err}")
    # Row 0 is what changed most in its own time (the CLI's first regression), not the ancestors
    # of an op that changed, which all carry its inclusive delta.
    top_regression = json.loads(subprocess.run([SIGHTLINE, "diff", bert_a, bert_b, "--format", "json"], capture_output=True,
                                               text=True, check=True).stdout)["aligned"]["regressions"][0]
    if rc == 0:
        sel = st["r0"]["diff"]["selected"]
        check(sel["name"] == top_regression["name"] and
              abs((sel["self_b_ns"] - sel["self_a_ns"]) / 1e3 - top_regression["self_delta_us"]) <= 1,
              f"bert row 0 {sel['name']} (self {sel['self_b_ns'] - sel['self_a_ns']} ns), CLI's top regression "
              f"{top_regression['name']} ({top_regression['self_delta_us']} us)")
    for name in ("r0", "r3") if rc == 0 else ():
        d = st[name]["diff"]
        top, bottom = d["rows_rect"][1], d["rows_rect"][3]
        check(top <= d["a"]["header_y"] < d["b"]["header_y"] <= bottom - 10,
              f"bert {name}: headers A at {d['a']['header_y']}, B at {d['b']['header_y']}, rows area {top}..{bottom}")
else:
    print("skipped: bert deep-stack header check (../shared/corpus is absent)")

# 2. Two files open as two tabs; `tab N` switches which one the script acts on.
rc, err, st = run([BASE, TEST], ["state {t0}", "tab 1", "state {t1}"], ["t0", "t1"])
check(rc == 0, f"tabs run failed ({rc}): {err}")
if rc == 0:
    check(st["t0"]["tabs"] == 2 and st["t0"]["active_tab"] == 0, f"t0: {st['t0']['tabs']} tabs, active {st['t0']['active_tab']}")
    check(st["t0"]["path"].endswith("base.json.gz"), f"tab 0 shows {st['t0']['path']}")
    check(st["t1"]["active_tab"] == 1 and st["t1"]["path"].endswith("test.json.gz"), f"tab 1 shows {st['t1']['path']}")
    check(st["t1"]["diff"] is None, "a plain tab reports a diff")

# 3. Bad script input is an error, not a crash.
rc, err, _ = run([BASE], ["tab 3"], [])
check(rc == 2 and "no tab" in err, f"tab 3 of 1: rc {rc}, {err}")
rc, err, _ = run([BASE], ["diffrow 0"], [])
check(rc == 1 and "needs a diff tab" in err, f"diffrow without diff: rc {rc}, {err}")

# 4. Export from a diff tab: the same figure as `render A B --view diff`; a zoom exports its window.
with tempfile.TemporaryDirectory() as tmp:
    gui_svg, cli_svg = os.path.join(tmp, "gui.svg"), os.path.join(tmp, "cli.svg")
    rc, err, st = run(["--diff", BASE, TEST], [f"export {gui_svg}", "state {whole}", "zoom 1ms 3ms", "wait 3",
                                               f"export {os.path.join(tmp, 'zoom.svg')}", "state {zoomed}"],
                      ["whole", "zoomed"])
    check(rc == 0, f"diff export failed ({rc}): {err}")
    p = subprocess.run([SIGHTLINE, "render", BASE, TEST, "--view", "diff", "-o", cli_svg], capture_output=True, text=True)
    check(p.returncode == 0, f"render --view diff failed: {p.stderr}")
    if rc == 0 and p.returncode == 0:
        def texts_and_shapes(path):
            root = ET.parse(path).getroot()
            texts = [g.get("aria-label") for g in root.iter(SVG + "g") if g.get("aria-label")]
            return texts, sum(1 for _ in root.iter(SVG + "rect")) + sum(1 for _ in root.iter(SVG + "path"))
        gui, cli_fig = texts_and_shapes(gui_svg), texts_and_shapes(cli_svg)
        check(gui == cli_fig, f"GUI diff export differs from render: {len(gui[0])} texts / {gui[1]} shapes vs "
                              f"{len(cli_fig[0])} / {cli_fig[1]}")
        check(any(t.startswith("hta_trace_compare_base vs") for t in gui[0]), "diff export has no 'A vs B' title")
        e = st["whole"]["last_export"]
        check(e["what"] == "diff" and e["ok"] and e["start_ns"] == 0 and e["end_ns"] == 0, f"whole-step export: {e}")
        z = st["zoomed"]["last_export"]
        check(z["ok"] and z["end_ns"] - z["start_ns"] == 2_000_000, f"zoomed export window {z['start_ns']}..{z['end_ns']} ns")

# 5. The headline and the GPU banner: the steady-state mean (warm-up step excluded) and the
# different-GPUs warning, as `sightline diff` reports them.
rc, err, st = run(["--diff", BASE, TEST], ["view diff", "state {open}"], ["open"])
check(rc == 0, f"diff run failed ({rc}): {err}")
if rc == 0:
    d, steady = st["open"]["diff"], cli["steady_state"]
    check(d["gpu_warning"] == "", f"same GPUs, yet a warning: {d['gpu_warning']}")
    check(d["steady_state"] is not None and steady is not None, "no steady-state headline")
    if d["steady_state"] and steady:
        check(abs(d["steady_state"]["mean_step_a_ns"] / 1000 - steady["mean_step_a_us"]) < 0.01 and
              abs(d["steady_state"]["mean_step_b_ns"] / 1000 - steady["mean_step_b_us"]) < 0.01,
              f"view headline {d['steady_state']} != CLI {steady}")
a100, v100 = (os.path.join(SHARED, n) for n in ("hta_trace_diff_control_a100.json.gz", "hta_trace_diff_test_v100.json.gz"))
if os.path.exists(a100) and os.path.exists(v100):
    rc, err, st = run(["--diff", a100, v100], ["view diff", "state {open}"], ["open"])
    p = subprocess.run([SIGHTLINE, "diff", a100, v100, "--format", "json"], capture_output=True, text=True)
    check(rc == 0 and p.returncode == 0, f"A100 vs V100 diff failed: {err} {p.stderr}")
    if rc == 0 and p.returncode == 0:
        warning = json.loads(p.stdout)["gpu_warning"]
        check(warning and "different GPUs" in warning, f"CLI gives no GPU warning: {warning}")
        check("sightline diff: warning: the runs used different GPUs" in p.stderr, "no warning on stderr")
        check(st["open"]["diff"]["gpu_warning"] == warning, f"view banner {st['open']['diff']['gpu_warning']!r} != CLI")
else:
    print("skipped: A100 vs V100 banner check (../shared/corpus is absent)")

print("FAIL" if failures else "OK", f"({len(failures)} failures)")
sys.exit(1 if failures else 0)
