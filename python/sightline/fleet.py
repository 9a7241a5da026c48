"""Fleet scale on Dask distributed: map every rank of a run to a rank summary on the workers,
reduce the summaries into one ``.slfleet`` file on the client.

    python3 -m sightline.fleet PATHS... -o RUN.slfleet [--scheduler tcp://HOST:PORT | --local N]
        [--cache DIR] [--gpus-per-node N] [--align auto|none|collectives] [--sightline BIN]

(``sightline fleet ...`` runs this.) PATHS are folders of rank traces (ranks picked as
``report DIR`` picks them), rank files, globs, or ``@LIST`` files naming one path a line.

This module needs neither the compiled extension nor a shared file system for the summaries: each
task runs ``sightline fleet-map`` on its worker and returns the summary's bytes (a few KB) to the
client, which writes them to a temporary folder and runs ``sightline fleet-reduce`` there. The rank
files themselves must be readable by the workers at the paths given.
"""

import argparse
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SCHEDULER_TIMEOUT_S = 5  # the client gives up on an unreachable scheduler after this long


class FleetError(Exception):
    """A failure the user can act on; the message says what and where."""


def map_rank(sightline, path, index, cache):
    """The map task (runs on a worker): one rank file -> its summary bytes and status.

    A rank that fails to load still yields a summary (status failed, with its error); a map whose
    process dies yields a failed summary written by fleet-map --failed-with, so the rank is never
    silently lost."""
    workdir = tempfile.mkdtemp(prefix="sightline-map-")
    out = os.path.join(workdir, "rank.slrank")
    started = time.monotonic()
    try:
        cmd = [sightline, "fleet-map", path, "-o", out, "--index", str(index)]
        if cache:
            cmd += ["--cache", cache]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_one_thread())
        if proc.returncode != 0 or not os.path.exists(out):
            error = (proc.stderr.strip() or "fleet-map exited with status %d" % proc.returncode).splitlines()[-1]
            subprocess.run([sightline, "fleet-map", path, "-o", out, "--index", str(index), "--failed-with", error],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
            status = {"status": "failed", "error": error}
        else:
            status = json.loads(proc.stdout.strip().splitlines()[-1])
        with open(out, "rb") as f:
            data = f.read()
        status.update(path=path, index=index, summary=data, seconds=time.monotonic() - started)
        return status
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _one_thread():
    """The map's environment: one thread per task. A worker runs as many tasks at once as it has
    threads, so a map that spread over every core would make more workers contend, not go faster."""
    env = dict(os.environ)
    env["SIGHTLINE_THREADS"] = "1"
    return env


def _by_value():
    # Workers need not have this package installed: ship map_rank by value.
    try:
        import cloudpickle

        module = sys.modules[__name__]
        if __name__ != "__main__" and hasattr(cloudpickle, "register_pickle_by_value"):
            cloudpickle.register_pickle_by_value(module)
    except Exception:
        pass


def expand_paths(sightline, paths):
    """Folders, files, globs and @LIST files -> (source, rank files, skipped) via fleet-plan."""
    given = []
    for p in paths:
        if p.startswith("@"):
            with open(p[1:]) as f:
                given += [line.strip() for line in f if line.strip()]
        elif any(c in p for c in "*?[") and not os.path.exists(p):
            matches = sorted(glob.glob(p))
            if not matches:
                raise FleetError("no file matches %s" % p)
            given += matches
        else:
            given.append(p)
    proc = subprocess.run([sightline, "fleet-plan"] + given, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.stderr.strip():
        sys.stderr.write(proc.stderr)
    plan = json.loads(proc.stdout)
    if not plan["files"]:
        raise FleetError("no rank traces among %s" % " ".join(paths))
    if not plan["source"] and len(given) > 1:
        plan["source"] = os.path.commonpath([os.path.abspath(p) for p in given]) or ""
    return plan


class Progress:
    """One line on stderr every `every` ranks and at the end: done, failed, ranks/s, ETA."""

    def __init__(self, total, every, stream=sys.stderr):
        self.total, self.every, self.stream = total, max(1, every), stream
        self.done = self.failed = 0
        self.t0 = time.monotonic()

    def add(self, failed):
        self.done += 1
        self.failed += int(failed)
        if self.done % self.every == 0 or self.done == self.total:
            self.stream.write(self.line() + "\n")
            self.stream.flush()

    def line(self):
        elapsed = max(1e-9, time.monotonic() - self.t0)
        rate = self.done / elapsed
        eta = (self.total - self.done) / rate if rate > 0 else float("inf")
        return "fleet: %d/%d ranks done, %d failed, %.2f ranks/s, ETA %s" % (
            self.done, self.total, self.failed, rate, "%.0f s" % eta if eta != float("inf") else "?")


def connect(scheduler, local):
    """A Client on the scheduler (failing within SCHEDULER_TIMEOUT_S, naming it), or on a new
    LocalCluster of `local` single-threaded worker processes on the loopback."""
    from distributed import Client, LocalCluster

    if scheduler:
        try:
            return Client(scheduler, timeout="%ds" % SCHEDULER_TIMEOUT_S), None
        except (OSError, TimeoutError) as e:
            raise FleetError("cannot reach the Dask scheduler at %s within %d s (%s)" % (scheduler, SCHEDULER_TIMEOUT_S, e))
        except Exception as e:  # distributed wraps some connection failures in its own types
            raise FleetError("cannot reach the Dask scheduler at %s: %s" % (scheduler, e))
    cluster = LocalCluster(n_workers=local, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None, silence_logs=40)
    return Client(cluster), cluster


def run_fleet(paths, output, sightline="sightline", scheduler=None, local=None, cache=None, gpus_per_node=None,
              align="auto", progress_every=None, stream=sys.stderr):
    """Maps and reduces; returns {"ranks", "failed": [{path, error}], "seconds"}. Raises FleetError.
    Each summary is written to a temporary folder as its task completes, so the client holds one
    at a time, whatever the rank count."""
    started = time.monotonic()
    plan = expand_paths(sightline, paths)
    # Absolute, so that workers started elsewhere (another folder, another machine with the same
    # mounts) find the files.
    files = [os.path.abspath(f) for f in plan["files"]]
    _by_value()
    client, cluster = connect(scheduler, local or os.cpu_count() or 1)
    progress = Progress(len(files), progress_every or max(1, len(files) // 20), stream)
    futures = []
    failed = []
    workdir = tempfile.mkdtemp(prefix="sightline-reduce-")
    try:
        try:
            from distributed import as_completed

            futures = [client.submit(map_rank, sightline, path, i, cache,
                                     key="sightline-map-%d-%s" % (i, os.path.basename(path)), pure=False, retries=2)
                       for i, path in enumerate(files)]
            for future in as_completed(futures):
                r = future.result()
                future.release()  # the client keeps each summary on disk, not in memory
                with open(os.path.join(workdir, "rank%d.slrank" % r["index"]), "wb") as f:
                    f.write(r["summary"])
                if r["status"] != "ok":
                    failed.append({"path": r["path"], "error": r.get("error", "")})
                progress.add(r["status"] != "ok")
        except KeyboardInterrupt:
            stream.write("fleet: cancelled; cancelling %d tasks\n" % sum(1 for f in futures if not f.done()))
            client.cancel(futures)
            raise
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
        reduce_summaries(sightline, workdir, len(files), output, plan["source"], gpus_per_node, align)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return {"ranks": len(files), "failed": failed, "seconds": time.monotonic() - started}


def reduce_summaries(sightline, workdir, count, output, source, gpus_per_node, align):
    """fleet-reduce over the `count` summaries the map wrote into `workdir` (rankI.slrank)."""
    listing = os.path.join(workdir, "summaries.txt")
    with open(listing, "w") as lst:
        for i in range(count):
            lst.write(os.path.join(workdir, "rank%d.slrank" % i) + "\n")
    cmd = [sightline, "fleet-reduce", "--list", listing, "-o", output, "--source", source, "--align", align]
    if gpus_per_node:
        cmd += ["--gpus-per-node", str(gpus_per_node)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise FleetError(proc.stderr.strip() or "fleet-reduce exited with status %d" % proc.returncode)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="sightline fleet", description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", help="folders of rank traces, rank files, globs, @LIST files")
    ap.add_argument("-o", "--output", required=True, help="the fleet file to write (.slfleet)")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--scheduler", help="tcp://HOST:PORT of a running dask-scheduler")
    where.add_argument("--local", type=int, help="start a local cluster of N workers (default: the cores)")
    ap.add_argument("--cache", help="a snapshot cache folder the workers share")
    ap.add_argument("--gpus-per-node", type=int, help="ranks per node (node = rank / N); default: the traces' host")
    ap.add_argument("--align", default="auto", choices=["auto", "none", "collectives"])
    ap.add_argument("--sightline", default=shutil.which("sightline") or "sightline", help="the sightline binary")
    ap.add_argument("--progress-every", type=int, help="a progress line every N ranks (default: every 5%%)")
    a = ap.parse_args(argv)
    try:
        result = run_fleet(a.paths, a.output, sightline=os.path.abspath(a.sightline) if os.path.exists(a.sightline) else a.sightline,
                           scheduler=a.scheduler, local=a.local, cache=a.cache, gpus_per_node=a.gpus_per_node,
                           align=a.align, progress_every=a.progress_every)
    except FleetError as e:
        sys.stderr.write("sightline fleet: %s\n" % e)
        return 1
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    for f in result["failed"]:
        sys.stderr.write("sightline fleet: failed: %s\n" % f["error"])
    sys.stderr.write("sightline fleet: %d ranks (%d failed) in %.1f s -> %s\n" % (
        result["ranks"], len(result["failed"]), result["seconds"], a.output))
    return 1 if result["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
