#!/usr/bin/env python3
"""Makes a synthetic distributed job for `sightline bench load|report|frame DIR`.

Every rank is a copy of real corpus traces (cycled over the sources given) with its
`distributedInfo` rank and world size rewritten, so the collectives of each copy match across the
ranks one to one, in order. The rest of the text is kept byte for byte.

    python3 tests/bench/make_synthetic_job.py OUT_DIR RANKS SOURCE.json[.gz]...

e.g. 64 ranks of 35 MB: `... /tmp/job64 64 ../shared/corpus/hta_trace_diff_control_a100.json.gz`;
the 8 corpus ranks x 8: `... /tmp/dlrm64 64 ../shared/corpus/param_dlrm_8rank/*.json.gz`.
"""
import gzip
import os
import re
import sys

DIST = re.compile(rb'"distributedInfo"\s*:\s*\{[^}]*\}')


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if path.endswith(".gz") else data


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out_dir, ranks, sources = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    os.makedirs(out_dir, exist_ok=True)
    texts = [read(s) for s in sources]
    for rank in range(ranks):
        text = texts[rank % len(texts)]
        info = b'"distributedInfo": {"backend": "nccl", "rank": %d, "world_size": %d}' % (rank, ranks)
        text, n = DIST.subn(info, text, count=1)
        if n == 0:  # no distributedInfo: put one before traceEvents
            text = text.replace(b'"traceEvents"', info + b', "traceEvents"', 1)
        with open(os.path.join(out_dir, "rank_%d.json" % rank), "wb") as f:
            f.write(text)


if __name__ == "__main__":
    main()
