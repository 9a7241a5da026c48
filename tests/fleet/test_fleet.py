"""`sightline fleet` on real Dask processes (tests/CMakeLists.txt: "cli: fleet").

A dask-scheduler and two dask-worker processes on 127.0.0.1 (random free ports), the fleet of the
corpus 8-rank job against `report DIR`; --local 1 and 2 give the same fleet file apart from its
TIME section; a corrupt rank is `failed` with its error while the rest complete; an unreachable
scheduler is named within 10 s; a cut fleet file is refused; a 256-rank synthetic fleet names
exactly its injected stragglers and slow steps, and is unchanged by a worker SIGKILLed mid-run.
Run: SIGHTLINE=BIN /usr/bin/python3 -m pytest tests/fleet. Tests needing ../shared skip, saying
so, when it is absent."""

import contextlib
import os
import shutil
import signal
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
JOB_TABLES = "collectives,stragglers,clock_offsets,outliers"

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


@contextlib.contextmanager
def dask_cluster(tmp_path, nanny=True):
    """A real dask-scheduler and two dask-worker processes on the loopback, stopped afterwards;
    yields (address, worker processes). The workers get no PYTHONPATH: the map task travels by
    value. Without a nanny, a killed worker stays dead."""
    port = free_port()
    address = "tcp://127.0.0.1:%d" % port
    worker_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    worker_env["XDG_CACHE_HOME"] = str(tmp_path / "worker-cache")
    logs = open(tmp_path / "dask.log", "w")
    procs = [subprocess.Popen(["dask-scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                              stdout=logs, stderr=subprocess.STDOUT, env=worker_env)]
    workers = [subprocess.Popen(["dask-worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                                 "--nanny" if nanny else "--no-nanny", "--no-dashboard",
                                 "--local-directory", str(tmp_path / "dask")],
                                stdout=logs, stderr=subprocess.STDOUT, env=worker_env) for _ in range(2)]
    procs += workers
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
        yield address, workers
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
        logs.close()


@pytest.fixture
def cluster(tmp_path):
    with dask_cluster(tmp_path) as (address, workers):
        yield address


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


def csv_rows(path, table, env):
    import csv
    import io

    r = run(["report", path, "--format", "csv", "--table", table], env)
    assert r.returncode in (0, 1), r.stderr
    return list(csv.DictReader(io.StringIO(r.stdout)))


STRAGGLERS, SLOW_STEPS = {5, 77, 200}, {13, 140}


@pytest.fixture(scope="module")
def synthetic_job(tmp_path_factory):
    """make_synthetic_job.py --fleet: 256 copies of one corpus rank, clocks shifted 1 ms a rank,
    stragglers and slow steps injected at known ranks."""
    if not JOB.is_dir():
        pytest.skip("skipped: ../shared is absent (%s)" % JOB)
    job = tmp_path_factory.mktemp("synthetic") / "job"
    subprocess.run([sys.executable, str(ROOT / "tests" / "bench" / "make_synthetic_job.py"), "--fleet", str(job), "256",
                    str(sorted(JOB.iterdir())[0]), "--stragglers", ",".join(map(str, sorted(STRAGGLERS))),
                    "--slow-steps", ",".join(map(str, sorted(SLOW_STEPS)))], check=True)
    return job


def test_a_256_rank_synthetic_fleet_names_exactly_the_injected_ranks(synthetic_job, tmp_path, env):
    out = tmp_path / "run.slfleet"
    r = run(["fleet", synthetic_job, "-o", out, "--local", 2, "--gpus-per-node", 8], env, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "256/256 ranks done, 0 failed" in r.stderr
    late = {int(row["rank"]) for row in csv_rows(out, "stragglers", env) if int(row["late_count"]) > 0}
    assert late == STRAGGLERS
    outliers = csv_rows(out, "outliers", env)
    assert {int(o["rank"]) for o in outliers if o["metric"] == "iteration_time"} == SLOW_STEPS
    offsets = csv_rows(out, "clock_offsets", env)
    assert all(o["applied"] == "yes" for o in offsets)
    nodes = csv_rows(out, "nodes", env)
    assert len(nodes) == 32 and all(int(n["ranks"]) == 8 for n in nodes)


def test_a_worker_killed_mid_run_changes_nothing(synthetic_job, tmp_path, env):
    """SIGKILL one of two workers (no nanny to restart it) once a sixteenth of the ranks are
    done: Dask reruns its tasks on the other, and the fleet file equals a --local 2 run's."""
    with dask_cluster(tmp_path, nanny=False) as (address, workers):
        out = tmp_path / "killed.slfleet"
        fleet = subprocess.Popen([SIGHTLINE, "fleet", str(synthetic_job), "-o", str(out), "--scheduler", address,
                                  "--progress-every", "16"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = []
        for line in fleet.stderr:
            lines.append(line)
            if line.startswith("fleet: 16/256"):
                workers[0].kill()
                break
        _, rest = fleet.communicate(timeout=600)
        lines.append(rest)
        assert workers[0].poll() is not None, "the worker was not killed mid-run: %s" % "".join(lines)
        assert fleet.returncode == 0, "".join(lines)
        reference = tmp_path / "reference.slfleet"
        r = run(["fleet", synthetic_job, "-o", reference, "--local", 2], env, timeout=600)
        assert r.returncode == 0, r.stderr
        assert without_timing(out) == without_timing(reference)


def test_ctrl_c_cancels_the_run(synthetic_job, tmp_path, env):
    """SIGINT once the first ranks are done: the driver cancels its futures, stops its local
    cluster and exits 130 without writing the fleet file."""
    out = tmp_path / "cancelled.slfleet"
    fleet = subprocess.Popen([SIGHTLINE, "fleet", str(synthetic_job), "-o", str(out), "--local", "2",
                              "--progress-every", "8"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    for line in fleet.stderr:
        lines.append(line)
        if line.startswith("fleet: 8/256"):
            fleet.send_signal(signal.SIGINT)
            t0 = time.monotonic()
            break
    _, rest = fleet.communicate(timeout=60)
    lines.append(rest)
    assert fleet.returncode == 130, "".join(lines)
    assert time.monotonic() - t0 < 30
    assert "cancelled" in "".join(lines)
    assert not out.exists()


@needs_job
def test_render_of_a_fleet_equals_render_dir(tmp_path, env):
    """`render RUN.slfleet` draws the rank overview from the summaries alone: the same figure,
    byte for byte, as `render DIR` (also with --align collectives)."""
    parts = []
    for i, f in enumerate(sorted(JOB.iterdir())):
        parts.append(tmp_path / ("r%d.slrank" % i))
        assert run(["fleet-map", f, "-o", parts[-1], "--index", i], env).returncode == 0
    fleet = tmp_path / "run.slfleet"
    assert run(["fleet-reduce"] + parts + ["-o", fleet, "--source", JOB], env).returncode == 0
    for align in ("auto", "collectives"):
        a, b = tmp_path / ("fleet-%s.svg" % align), tmp_path / ("dir-%s.svg" % align)
        assert run(["render", fleet, "--align", align, "-o", a, "-q"], env).returncode == 0
        assert run(["render", JOB, "--align", align, "-o", b, "-q"], env).returncode == 0
        assert a.read_bytes() == b.read_bytes()
