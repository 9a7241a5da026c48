#!/usr/bin/python3
"""Writes a synthetic PyTorch CUDA memory snapshot in the documented shape (torch/cuda/memory.py:
Snapshot, Segment, Block, TraceEntry), for tests and benchmarks: `bench load` on it prints
Sightline's load time beside Python's own pickle.load of the same file.

usage: make_memory_snapshot.py OUT.pickle [--entries N] [--devices D] [--seed S]

Per device: segments of 2 MiB..64 MiB, a trace of alloc / free_requested / free_completed (and
segment_alloc / segment_free) entries with 8 to 24 frames from a pool of stacks (as a training
loop repeats its call sites), blocks alive at the end listed in the final segments, and a few
blocks freed before any alloc of them (pre-existing).
"""
import argparse
import pickle
import random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--entries", type=int, default=100000, help="trace entries per device")
    ap.add_argument("--devices", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    native = ["c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(unsigned long, CUstream_st*)",
              "at::detail::empty_strided_cuda(c10::ArrayRef<long>, c10::ArrayRef<long>, c10::ScalarType)",
              "at::native::empty_cuda(c10::ArrayRef<long>)", "_PyEval_EvalFrameDefault"]
    user = [("forward", "model.py"), ("attention", "layers.py"), ("mlp", "layers.py"), ("loss_fn", "train.py"),
            ("step", "optim.py"), ("backward_hook", "train.py"), ("embed", "model.py"), ("collate", "data.py")]
    stacks = []
    for i in range(256):
        depth = rnd.randint(8, 24)
        frames = [{"name": native[k % len(native)], "filename": "??", "line": 0} for k in range(depth - 2)]
        fn, file = user[i % len(user)]
        frames.insert(rnd.randint(2, depth - 2), {"name": fn, "filename": "/work/" + file, "line": 10 + i})
        frames.append({"name": "<module>", "filename": "/work/train.py", "line": 1})
        stacks.append(frames)
    segments, traces = [], []
    for device in range(a.devices):
        trace, live, keys, t = [], {}, [], 1_700_000_000_000_000
        next_addr = 0x7F0000000000 + device * (1 << 40)
        reserved = []
        for k in range(8):  # pre-existing: freed before any alloc of them
            addr, size = next_addr, 512 * (k + 1)
            next_addr += 1 << 20
            trace.append({"action": "free_requested", "addr": addr, "size": size, "stream": 0, "time_us": t, "frames": []})
            t += rnd.randint(1, 50)
            trace.append({"action": "free_completed", "addr": addr, "size": size, "stream": 0, "time_us": t, "frames": []})
        while len(trace) < a.entries:
            t += rnd.randint(1, 200)
            if live and rnd.random() < 0.48:
                k = rnd.randrange(len(keys))  # a random live block, removed by swapping with the last
                keys[k], keys[-1] = keys[-1], keys[k]
                addr = keys.pop()
                size, _ = live.pop(addr)
                trace.append({"action": "free_requested", "addr": addr, "size": size, "stream": 0, "time_us": t, "frames": []})
                t += rnd.randint(0, 100)
                trace.append({"action": "free_completed", "addr": addr, "size": size, "stream": 0, "time_us": t, "frames": []})
            else:
                if rnd.random() < 0.01:
                    seg = rnd.choice([2, 20, 64]) << 20
                    trace.append({"action": "segment_alloc", "addr": next_addr, "size": seg, "stream": 0, "time_us": t,
                                  "frames": stacks[rnd.randrange(len(stacks))]})
                    reserved.append((next_addr, seg))
                    next_addr += seg
                size = 512 * rnd.randint(1, 4096)
                addr = next_addr
                next_addr += size
                st = stacks[rnd.randrange(len(stacks))]
                live[addr] = (size, st)
                keys.append(addr)
                trace.append({"action": "alloc", "addr": addr, "size": size, "stream": 0, "time_us": t, "frames": st,
                              "compile_context": "N/A", "user_metadata": ""})
        blocks = [{"address": addr, "size": size, "requested_size": size, "state": "active_allocated", "frames": st}
                  for addr, (size, st) in live.items()]
        blocks.append({"address": next_addr, "size": 1 << 20, "requested_size": 1 << 20, "state": "active_allocated",
                       "frames": stacks[0]})  # allocated before the trace, still live: pre-existing
        total = sum(s for _, s in reserved) + (256 << 20)
        segments.append({"device": device, "address": 0x7F0000000000 + device * (1 << 40), "total_size": total,
                         "allocated_size": sum(b["size"] for b in blocks), "active_size": 0, "requested_size": 0,
                         "stream": 0, "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False,
                         "frames": [], "blocks": blocks})
        traces.append(trace)
    snapshot = {"segments": segments, "device_traces": traces,
                "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": None}, "external_annotations": []}
    with open(a.out, "wb") as f:
        pickle.dump(snapshot, f, protocol=4)


if __name__ == "__main__":
    main()
