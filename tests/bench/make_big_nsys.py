#!/usr/bin/env python3
"""Tiles the runtime and kernel tables of an Nsight SQLite export: make_big_nsys.py SRC OUT RUNTIME_TILES KERNEL_TILES SHIFT_NS [linked].
Each tile is the original rows shifted by tile x SHIFT_NS and correlation ids offset by tile x 2300 (xent ids end at 2216).
`linked`: first keep only the calls that launched a kernel and as many other calls (the first ones), so that with
as many runtime as kernel tiles every kernel has its launch, two calls per kernel (a PyTorch run's ratio)."""
import sqlite3, shutil, sys
src, out, tiles, kernel_tiles, shift = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
linked = len(sys.argv) > 6 and sys.argv[6] == 'linked'
shutil.copy(src, out)
c = sqlite3.connect(out)
if linked:
    c.execute("CREATE TEMP TABLE keep AS SELECT rowid AS r FROM CUPTI_ACTIVITY_KIND_RUNTIME "
              "WHERE correlationId IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL)")
    launches = c.execute("SELECT count(*) FROM keep").fetchone()[0]
    c.execute("INSERT INTO keep SELECT rowid FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE rowid NOT IN (SELECT r FROM keep) "
              f"ORDER BY rowid LIMIT {launches}")
    c.execute("DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE rowid NOT IN (SELECT r FROM keep)")
    c.execute("DROP TABLE keep")
def tile(table, n, corr_col='correlationId'):
    cols = [r[1] for r in c.execute(f"PRAGMA table_info({table})")]
    sel = []
    for col in cols:
        if col in ('start', 'end'): sel.append(f"{col} + k.i * {shift}")
        elif col == corr_col: sel.append(f"{col} + k.i * 2300")
        else: sel.append(col)
    c.execute(f"CREATE TEMP TABLE base AS SELECT * FROM {table}")
    c.execute(f"WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < {n - 1}) "
              f"INSERT INTO {table} SELECT {', '.join(sel)} FROM base, k")
    c.execute("DROP TABLE base")
tile('CUPTI_ACTIVITY_KIND_RUNTIME', tiles)
tile('CUPTI_ACTIVITY_KIND_KERNEL', kernel_tiles)
c.commit()
for t in ('CUPTI_ACTIVITY_KIND_RUNTIME', 'CUPTI_ACTIVITY_KIND_KERNEL'):
    print(t, c.execute(f"select count(*) from {t}").fetchone()[0])
c.close()
