#!/usr/bin/env python3
"""Writes tiny.sqlite: a minimal Nsight Systems export (schema 3.16 shapes, 512-byte pages)."""
import os, sqlite3, sys
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tiny.sqlite")
if os.path.exists(out):
    os.remove(out)
db = sqlite3.connect(out)
db.execute("PRAGMA page_size = 512")
gpid = 1 << 40 | 100 << 24
gtid = gpid | 101
db.executescript(f"""
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'main'), (3, 'kern'), (4, 'range');
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.16.1');
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1000000000000000000);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
INSERT INTO PROCESSES VALUES ({gpid}, 100, 'p');
CREATE TABLE ThreadNames (nameId INTEGER, priority INTEGER, globalTid INTEGER);
INSERT INTO ThreadNames VALUES (2, 20, {gtid});
CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, smCount INTEGER, threadsPerWarp INTEGER, maxWarpsPerSm INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES (0, 'gpu', 132, 32, 64);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, eventClass INTEGER, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER, returnValue INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1000, 1500, 0, {gtid}, 1, 1, 0), (2000, 2500, 0, {gtid}, 2, 1, 0);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, contextId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, gridX INTEGER, blockX INTEGER,
  graphNodeId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1600, 2100, 0, 1, 7, 1, {gpid}, 3, 64, 256, NULL),
  (2600, 2900, 0, 1, 7, 2, {gpid}, 3, 1, 32, 5);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER, contextId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER, copyKind INTEGER, srcKind INTEGER,
  dstKind INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (3000, 3100, 0, 1, 7, 3, {gpid}, 4096, 1, 0, 2);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER, end INTEGER, deviceId INTEGER, contextId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, syncType INTEGER, eventId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (3200, 3300, 0, 1, 4294967295, 4, {gpid}, 4, 4294967295);
CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, globalTid INTEGER,
  textId INTEGER, domainId INTEGER, color INTEGER, int64Value INTEGER);
INSERT INTO NVTX_EVENTS VALUES (0, NULL, 75, 'dom', {gtid}, NULL, 1, NULL, NULL), (900, 3000, 59, NULL, {gtid}, 4, 1, 255, 7),
  (950, NULL, 34, 'mark', {gtid}, NULL, 0, NULL, NULL), (960, 2000, 60, 'async', {gtid}, NULL, 1, NULL, NULL);
CREATE TABLE OSRT_API (start INTEGER, end INTEGER, globalTid INTEGER, nameId INTEGER, returnValue INTEGER);
INSERT INTO OSRT_API VALUES (2950, 2990, {gtid}, 4, 0);
CREATE TABLE SCHED_EVENTS (start INTEGER, cpu INTEGER, globalTid INTEGER);
INSERT INTO SCHED_EVENTS VALUES (1, 0, {gtid});
""")
db.commit()
db.execute("VACUUM")
db.close()
print(out, os.path.getsize(out), file=sys.stderr)
