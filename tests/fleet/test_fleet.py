"""`sightline fleet` on real Dask processes (tests/CMakeLists.txt: "cli: fleet").

A dask-scheduler and two dask-worker processes on 127.0.0.1 (random free ports), the fleet of the
corpus 8-rank job against `report DIR`; --local 1 and 2 give the same fleet file apart from its
TIME section; a corrupt rank is `failed` with its error while the rest complete; an unreachable
scheduler is named within 10 s; a cut fleet file is refused. Run: SIGHTLINE=BIN python3 -m pytest
tests/fleet. Tests needing ../shared skip, saying so, when it is absent."""

import os
import shutil
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SIGHTLINE = os.environ.get("SIGHTLINE", str(ROOT / "build" / "release" / "app" / "sightline"))
JOB = ROOT.parent / "shared" / "corpus" / "param_dlrm_8rank"
JOB_TABLES = "collectives,stragglers,clock_offsets"

needs_job = pytest.mark.skipif(not JOB.is_dir(), reason="skipped: ../shared is absent (%s)" % JOB)
pytest.importorskip("distributed", reason="skipped: Dask distributed (python3-distributed) is not installed")


@pytest.fixture
def env(tmp_path):
    e = dict(os.environ)
    e["XDG_CACHE_HOME"] = str(tmp_path / "cache")  # the workers' snapshot cache, not the user's
    e.pop("SIGHTLINE_NO_CACHE", None)
    return e


def run(args, env, **kw):
    return subprocess.run([SIGHTLINE] + [str(a) for a in args], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, **kw)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def report(path, env, only=JOB_TABLES):
    r = run(["report", path, "--only", only], env)
    return r.stdout


def sections(path):
    """(tag, bytes of the whole section) of a fleet file, in order."""
    data = Path(path).read_bytes()
    assert data[:8] == b"SLFLEET\0"
    (count,) = struct.unpack_from("<I", data, 12)
    out, at = [], 16
    for _ in range(count):
        tag = data[at:at + 4].decode()
        (stored,) = struct.unpack_from("<Q", data, at + 13)
        end = at + 25 + stored
        out.append((tag, data[at:end]))
        at = end
    assert at == len(data)
    return out


def without_timing(path):
    return [s for s in sections(path) if s[0] != "TIME"]


@pytest.fixture
def cluster(tmp_path):
    """A real dask-scheduler and two dask-worker processes on the loopback; stopped afterwards.
    The workers get no PYTHONPATH: the map task travels by value."""
    port = free_port()
    address = "tcp://127.0.0.1:%d" % port
    worker_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    worker_env["XDG_CACHE_HOME"] = str(tmp_path / "worker-cache")
    logs = open(tmp_path / "dask.log", "w")
    procs = [subprocess.Popen(["dask-scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                              stdout=logs, stderr=subprocess.STDOUT, env=worker_env)]
    for _ in range(2):
        procs.append(subprocess.Popen(["dask-worker", address, "--host", "127.0.0.1", "--nworkers", "1", "--nthreads", "1",
                                       "--no-dashboard", "--local-directory", str(tmp_path / "dask")],
                                      stdout=logs, stderr=subprocess.STDOUT, env=worker_env))
    try:
        from distributed import Client

        deadline = time.monotonic() + 60
        while True:
            try:
                with Client(address, timeout="5s") as c:
                    c.wait_for_workers(2, timeout=60)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
        logs.close()


@needs_job
def test_fleet_on_a_real_cluster_equals_report_dir(cluster, tmp_path, env):
    out = tmp_path / "run.slfleet"
    r = run(["fleet", JOB, "-o", out, "--scheduler", cluster], env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "8/8 ranks done, 0 failed" in r.stderr
    assert "ranks/s" in r.stderr and "ETA" in r.stderr
    expected = report(JOB, env)
    assert expected and report(out, env) == expected
    full = run(["report", out], env).stdout
    for table in ("== ranks ==", "== outliers ==", "== nodes =="):
        assert table in full
    info = run(["info", out], env)
    assert info.returncode == 0 and "8 (8 loaded, 0 failed)" in info.stdout


@needs_job
def test_one_and_two_local_workers_write_the_same_fleet(tmp_path, env):
    files = []
    for n in (1, 2):
        out = tmp_path / ("local%d.slfleet" % n)
        r = run(["fleet", JOB, "-o", out, "--local", n, "--cache", tmp_path / "shared-cache"], env, timeout=300)
        assert r.returncode == 0, r.stderr
        files.append(out)
    assert [s[0] for s in sections(files[0])][-1] == "TIME"
    assert without_timing(files[0]) == without_timing(files[1])
    assert report(files[0], env) == report(JOB, env)


@needs_job
def test_a_corrupt_rank_fails_alone(tmp_path, env):
    job = tmp_path / "job"
    shutil.copytree(JOB, job)
    victim = sorted(job.iterdir())[3]
    os.chmod(victim, 0o644)
    data = bytearray(victim.read_bytes())
    for i in range(3000, 3200):
        data[i] ^= 0x5A
    victim.write_bytes(bytes(data))
    out = tmp_path / "run.slfleet"
    r = run(["fleet", job, "-o", out, "--local", 2], env, timeout=300)
    assert r.returncode == 1  # a rank failed, as `report DIR` exits then
    assert "8/8 ranks done, 1 failed" in r.stderr
    assert "corrupt or truncated gzip data" in r.stderr
    text = run(["report", out], env).stdout
    assert "ranks: 8 (7 loaded)" in text
    assert "rank 3 failed to load: %s: corrupt or truncated gzip data" % victim in text
    # The same failure and the same tables as the job report of that folder.
    assert report(out, env) == report(job, env)


def test_an_unreachable_scheduler_is_named_within_10_s(tmp_path, env):
    address = "tcp://127.0.0.1:%d" % free_port()  # nothing listens there
    rank = tmp_path / "rank0.json"
    rank.write_text('{"traceEvents": []}')
    t0 = time.monotonic()
    r = run(["fleet", rank, "-o", tmp_path / "x.slfleet", "--scheduler", address], env, timeout=60)
    elapsed = time.monotonic() - t0
    assert r.returncode == 1
    assert address in r.stderr and "cannot reach the Dask scheduler" in r.stderr
    assert elapsed < 10, elapsed
    assert not (tmp_path / "x.slfleet").exists()


@needs_job
def test_a_cut_or_flipped_fleet_file_is_refused(tmp_path, env):
    parts = []
    for i, f in enumerate(sorted(JOB.iterdir())[:2]):
        part = tmp_path / ("r%d.slrank" % i)
        r = run(["fleet-map", f, "-o", part, "--index", i], env)
        assert r.returncode == 0, r.stderr
        parts.append(part)
    out = tmp_path / "two.slfleet"
    assert run(["fleet-reduce"] + parts + ["-o", out], env).returncode == 0
    data = out.read_bytes()
    cut = tmp_path / "cut.slfleet"
    cut.write_bytes(data[: len(data) // 2])
    r = run(["report", cut], env)
    assert r.returncode == 1 and "cut short" in r.stderr and "byte" in r.stderr
    flipped = bytearray(data)
    flipped[len(data) // 3] ^= 1
    cut.write_bytes(bytes(flipped))
    r = run(["info", cut], env)
    assert r.returncode == 1 and "checksum mismatch" in r.stderr
