#!/usr/bin/env python3
"""GUI end-to-end test of a fleet tab: `sightline RUN.slfleet` opens the fleet file (core/fleet)
as a job tab whose rank overview, collectives and offsets come from the rank summaries alone; they
must equal the job tab of the folder the fleet was made from. Expanding a rank loads its store
from its source path."""
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from testkit import SHARED, SIGHTLINE, check, failures, read_png  # noqa: E402

CORPUS_JOB = os.path.join(SHARED, "param_dlrm_8rank")


def run(args, script_lines, states, env=None):
    with tempfile.TemporaryDirectory() as tmp:
        names = {n: os.path.join(tmp, n + ".json") for n in states}
        script = os.path.join(tmp, "script.txt")
        with open(script, "w") as f:
            f.write("\n".join([line.format(**names) for line in script_lines] + ["quit"]) + "\n")
        p = subprocess.run([SIGHTLINE, *args, "--script", script, "--size", "1600x1000"], capture_output=True, text=True, timeout=300,
                           env={**os.environ, **(env or {})})
        return p.returncode, p.stderr, {n: json.load(open(names[n])) for n in states if os.path.exists(names[n])}


# A big synthetic fleet (1,024 ranks, 8 a node, ranks 77 and 500 three times slower: the
# `outliers` table names them): below 3 px a row the overview aggregates into bands of a node each,
# and the two outliers stay on rows of their own (core/present/rank_rows.h). SIGHTLINE_FLEET_PNG
# keeps its screenshot.
with tempfile.TemporaryDirectory() as tmp:
    big = os.path.join(tmp, "big.slfleet")
    subprocess.run([SIGHTLINE, "bench", "fleet-reduce", "--ranks", "1024", "--collectives", "200", "--slow-rank", "77",
                    "--slow-rank", "500", "-o", big], check=True, capture_output=True)
    png = os.environ.get("SIGHTLINE_FLEET_PNG") or os.path.join(tmp, "big.png")
    rc, err, st = run([big], ["wait 2", "screenshot " + png, "state {open}"], ["open"])
    check(rc == 0 and "open" in st, f"1,024-rank fleet run failed ({rc}): {err}")
    if "open" in st:
        j = st["open"]["job"]
        rows = j["overview_rows"]
        check(j["aggregated"] and j["outlier_ranks"] >= 2 and j["bands_from_pyramid"], f"1,024 ranks: aggregated {j['aggregated']}, "
              f"{j['outlier_ranks']} outliers, bands from pyramid {j['bands_from_pyramid']}")
        check(sum(r["ranks"] for r in rows) == 1024 and j["rows_drawn"] <= len(rows) < 1024, f"{len(rows)} rows, {j['rows_drawn']} drawn")
        alone = [r["first_rank"] for r in rows if r["outlier"]]
        # The slow ranks, and whatever else the `outliers` table names (the synthetic jitter's waits).
        check({77, 500} <= set(alone) and len(alone) == j["outlier_ranks"] and all(r["ranks"] == 1 and r["label"] == f"rank {r['first_rank']}" for r in rows if r["outlier"]),
              f"outlier rows {[r for r in rows if r['outlier']]}")
        # A band is within a node, or whole nodes (when even a band a node is more than the rows).
        cut = [r for r in rows if r["first_rank"] // 8 != r["last_rank"] // 8
               and not ((r["first_rank"] % 8 == 0 or r["first_rank"] - 1 in alone) and (r["last_rank"] % 8 == 7 or r["last_rank"] + 1 in alone))]
        check(not cut, f"bands that cut a node: {cut[:3]}")
        first = rows[0]
        # The bands are drawn from one texture of their pixels (views/pixel_image.h); with
        # SIGHTLINE_NO_TEXTURES as the rectangles headless drawing uses: the same picture, pixel for pixel.
        rects_png = os.path.join(tmp, "rects.png")
        rc, err, _ = run([big], ["wait 2", "screenshot " + rects_png], [], {"SIGHTLINE_NO_TEXTURES": "1"})
        if rc == 0 and os.path.exists(rects_png) and os.path.exists(png):
            (w, h, image), (_, _, rects) = read_png(png), read_png(rects_png)
            differ = [(x, y) for y in range(h) for x in range(w) if image[y][x] != rects[y][x]]
            check(not differ, f"the bands' texture and their rectangles differ at {len(differ)} pixels, first {differ[:3]}")
        else:
            check(False, f"the rectangles' screenshot failed ({rc}): {err}")
        want = "node 0 \u00b7 ranks 0\u20137" if first["last_rank"] == 7 else f"nodes 0\u2013{first['last_rank'] // 8} \u00b7 ranks 0\u2013{first['last_rank']}"
        check(first["label"] == want, f"the first row {first}, want {want!r}")

if not os.path.isdir(CORPUS_JOB):
    print(f"skipped: ../shared is absent ({CORPUS_JOB})")
    sys.exit(0)

with tempfile.TemporaryDirectory() as tmp:
    parts = []
    for i, f in enumerate(sorted(glob.glob(os.path.join(CORPUS_JOB, "*.json.gz")))):
        parts.append(os.path.join(tmp, "r%d.slrank" % i))
        subprocess.run([SIGHTLINE, "fleet-map", f, "-o", parts[-1], "--index", str(i)], check=True, capture_output=True)
    fleet = os.path.join(tmp, "run.slfleet")
    subprocess.run([SIGHTLINE, "fleet-reduce", *parts, "-o", fleet, "--source", CORPUS_JOB], check=True, capture_output=True)

    script = ["wait 2", "state {open}", "collective 3", "state {sel}", "expand 5", "state {exp}"]
    rc, err, fl = run([fleet], script, ["open", "sel", "exp"])
    check(rc == 0, f"fleet tab run failed ({rc}): {err}")
    rc, err, jb = run([CORPUS_JOB], script, ["open", "sel", "exp"])
    check(rc == 0, f"job tab run failed ({rc}): {err}")
    if len(fl) == 3 and len(jb) == 3:
        f, j = fl["open"]["job"], jb["open"]["job"]
        check(fl["open"]["tabs"] == 1 and f["fleet"] and f["summarised"] == 8 and f["loaded"] == 0,
              f"fleet tab: tabs {fl['open']['tabs']}, fleet {f['fleet']}, summarised {f['summarised']}, loaded {f['loaded']}")
        check([r["status"] for r in f["ranks"]] == ["summarised"] * 8, f"fleet ranks: {f['ranks']}")
        for key in ("collectives", "offsets_ns", "aligned", "insight", "strip"):
            check(f[key] == j[key], f"fleet tab {key} {f[key]} != job tab {j[key]}")
        check(fl["sel"]["job"]["selected_instance"] == jb["sel"]["job"]["selected_instance"],
              f"collective 3: fleet {fl['sel']['job']['selected_instance']} != job {jb['sel']['job']['selected_instance']}")
        fe, je = fl["exp"]["job"], jb["exp"]["job"]
        check({r["rank"]: r["status"] for r in fe["ranks"]}[5] == "loaded", f"expand 5 did not load rank 5: {fe['ranks']}")
        check([e["rank"] for e in fe["expanded_ranks"]] == [5] and fe["expanded_ranks"] == je["expanded_ranks"],
              f"expanded: fleet {fe['expanded_ranks']} job {je['expanded_ranks']}")
        check(fe["expanded_ranks"] and fe["expanded_ranks"][0].get("highlights") == 1,
              f"the selected collective's kernel is not highlighted on the expanded fleet rank: {fe['expanded_ranks']}")

    # A click (focus, as the Ranks table's) loads the rank in the background; it expands once loaded.
    rc, err, bg = run([fleet], ["wait 2", "focus 2", "state {now}", "wait 300", "state {later}"], ["now", "later"])
    check(rc == 0 and len(bg) == 2, f"background expand run failed ({rc}): {err}")
    if len(bg) == 2:
        later = bg["later"]["job"]
        check({r["rank"]: r["status"] for r in later["ranks"]}[2] == "loaded" and [e["rank"] for e in later["expanded_ranks"]] == [2],
              f"focus 2 in a fleet tab: {later['ranks']}, expanded {later['expanded_ranks']}")

if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("ok")
