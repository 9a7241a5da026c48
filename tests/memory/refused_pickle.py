#!/usr/bin/python3
"""Opening a pickle that would run code never runs it: `sightline info` refuses it, naming the
opcode and its byte offset, and the marker file the payload would create never appears.
Also: a cut snapshot gives an error with a byte offset, not a crash.

usage: refused_pickle.py   (SIGHTLINE: the sightline binary; CORPUS_SNAPSHOT: optional real snapshot)
"""
import os
import pickle
import pickletools
import subprocess
import sys
import tempfile


def main():
    exe = os.environ.get("SIGHTLINE", "sightline")
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        marker = os.path.join(tmp, "MARKER")

        class Payload:
            def __reduce__(self):
                return (os.system, ("touch " + marker,))

        # Protocol 2 writes GLOBAL; 4 and 5 write STACK_GLOBAL; both then REDUCE.
        for protocol, opcode in ((2, "GLOBAL"), (3, "GLOBAL"), (4, "STACK_GLOBAL"), (5, "STACK_GLOBAL")):
            data = pickle.dumps({"segments": [], "device_traces": [[Payload()]]}, protocol=protocol)
            path = os.path.join(tmp, "evil%d.pickle" % protocol)
            with open(path, "wb") as f:
                f.write(data)
            expect_at = next(pos for op, _, pos in pickletools.genops(data) if op.name == opcode)
            r = subprocess.run([exe, "--no-cache", "info", path], capture_output=True, text=True)
            ok = (r.returncode != 0 and (opcode + " refused") in r.stderr and ("byte %d" % expect_at) in r.stderr
                  and not os.path.exists(marker))
            print("%s protocol %d: rc %d, %s" % ("ok  " if ok else "FAIL", protocol, r.returncode, r.stderr.strip()))
            failures += not ok
        # Never ran, in any of them.
        if os.path.exists(marker):
            print("FAIL the payload ran")
            failures += 1
        snapshot = os.environ.get("CORPUS_SNAPSHOT")
        if snapshot and os.path.exists(snapshot):
            with open(snapshot, "rb") as f:
                data = f.read()
            for cut in (3, len(data) // 2, len(data) - 1):
                path = os.path.join(tmp, "cut.pickle")
                with open(path, "wb") as f:
                    f.write(data[:cut])
                r = subprocess.run([exe, "--no-cache", "info", path], capture_output=True, text=True)
                ok = r.returncode not in (0, -11, -6) and "byte " in r.stderr
                print("%s cut at %d: rc %d, %s" % ("ok  " if ok else "FAIL", cut, r.returncode, r.stderr.strip()))
                failures += not ok
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
