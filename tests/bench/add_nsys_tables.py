#!/usr/bin/env python3
"""Adds to a copy of an Nsight SQLite export the tables a real `nsys profile` run fills besides CUDA:
add_nsys_tables.py SRC OUT WHAT...

WHAT is any of:
  nvtx=N      NVTX_EVENTS tiled N times (each tile shifted by 8 s), as `--trace=nvtx` with
              torch's emit_nvtx gives a range per operator
  osrt=N      an OSRT_API table of N calls on three threads of the report's first CUDA thread's process
  metrics=N   GPU_METRICS: N samples of 20 metrics (N / 20 timestamps, 100 us apart), with their names
  sampling=N  SAMPLING_CALLCHAINS of N frames and COMPOSITE_EVENTS of N / 20 samples: CPU sampling,
              on by default, tables Sightline does not map but lists with their row counts
  strings=N   N more StringIds (~80-byte mangled names) that no row names, as CPU sampling's symbols
"""
import shutil
import sqlite3
import sys

src, out, wants = sys.argv[1], sys.argv[2], dict(w.split('=') for w in sys.argv[3:])
shutil.copy(src, out)
c = sqlite3.connect(out)
gtid, t0 = c.execute("SELECT globalTid, min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
name = c.execute("SELECT nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME LIMIT 1").fetchone()[0]


def numbers(n):
    return f"WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < {int(n) - 1})"


if 'nvtx' in wants:
    cols = [r[1] for r in c.execute("PRAGMA table_info(NVTX_EVENTS)")]
    sel = [f"{col} + k.i * 8000000000" if col in ('start', 'end') else col for col in cols]
    c.execute("CREATE TEMP TABLE base AS SELECT * FROM NVTX_EVENTS")
    c.execute(f"WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < {int(wants['nvtx']) - 1}) "
              f"INSERT INTO NVTX_EVENTS SELECT {', '.join(sel)} FROM base, k")
    c.execute("DROP TABLE base")
if 'osrt' in wants:
    c.execute("CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, "
              "globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, "
              "nestingLevel INTEGER, callchainId INTEGER)")
    c.execute(f"{numbers(wants['osrt'])} INSERT INTO OSRT_API SELECT {t0} + i * 100000, {t0} + i * 100000 + 50000, "
              f"27, {gtid} + (i % 3), 0, {name}, i % 5, 0, NULL FROM k")
if 'metrics' in wants:
    c.execute("CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER NOT NULL, sourceId INTEGER NOT NULL, "
              "typeName TEXT NOT NULL, metricId INTEGER NOT NULL, metricName TEXT NOT NULL)")
    for m in range(20):
        c.execute("INSERT INTO TARGET_INFO_GPU_METRICS VALUES (65536, 0, 'GH100', ?, ?)", (m, f"metric {m} [%]"))
    c.execute("CREATE TABLE GPU_METRICS (timestamp INTEGER, typeId INTEGER NOT NULL, metricId INTEGER NOT NULL, "
              "value INTEGER NOT NULL)")
    c.execute(f"{numbers(wants['metrics'])} INSERT INTO GPU_METRICS SELECT {t0} + (i / 20) * 100000, 65536, i % 20, "
              "(i * 7) % 101 FROM k")
if 'sampling' in wants:
    n = int(wants['sampling'])
    c.execute("CREATE TABLE SAMPLING_CALLCHAINS (id INTEGER NOT NULL, symbol INTEGER NOT NULL, module INTEGER NOT NULL, "
              "unresolved INTEGER, originalIP INTEGER, stackDepth INTEGER NOT NULL)")
    c.execute(f"{numbers(n)} INSERT INTO SAMPLING_CALLCHAINS SELECT i / 20, 1000 + i % 977, 50 + i % 13, NULL, "
              "140000000000000 + i * 17, i % 20 FROM k")
    c.execute("CREATE TABLE COMPOSITE_EVENTS (id INTEGER PRIMARY KEY, start INTEGER NOT NULL, cpu INTEGER, "
              "threadState INTEGER, globalTid INTEGER, cpuCycles INTEGER NOT NULL)")
    c.execute(f"{numbers(n // 20)} INSERT INTO COMPOSITE_EVENTS SELECT i, {t0} + i * 1000000, i % 64, 1, {gtid}, "
              "1000000 FROM k")
if 'strings' in wants:
    base = c.execute("SELECT max(id) FROM StringIds").fetchone()[0]
    c.execute(f"{numbers(wants['strings'])} INSERT INTO StringIds SELECT {base} + 1 + i, "
              "printf('_ZN5torch8autograd9generated%dBackward0applyERKSt6vectorIN2at6TensorESaIS4_EE', i) FROM k")
c.commit()
for t in ('NVTX_EVENTS', 'OSRT_API', 'GPU_METRICS', 'SAMPLING_CALLCHAINS', 'StringIds'):
    if c.execute("SELECT count(*) FROM sqlite_master WHERE name = ?", (t,)).fetchone()[0]:
        print(t, c.execute(f"SELECT count(*) FROM {t}").fetchone()[0])
c.close()
