#!/usr/bin/python3
"""The PyTorch side of strata_allreduce_bench: all-reduce bandwidth across processes on the CPU
through torch.distributed's Gloo backend (ProcessGroupGloo: gloo::allreduce, ring), timed the
same way and printed in the same format, so bench/allreduce_compare.sh makes one table of all.

Not part of the build. Debian's python3-torch (1.13) is enough (apt-get install python3-torch
libopenblas0-pthread). One process per rank, all started alike, meeting through a file store:
  /usr/bin/python3 bench/reference/torch_allreduce.py --rank 0 --world 2 --dir /tmp/ar &
  /usr/bin/python3 bench/reference/torch_allreduce.py --rank 1 --world 2 --dir /tmp/ar

Rank 0 prints "RESULT torch <world> <bytes> <us per op> <algbw GB/s> <busbw GB/s>" per size:
warm-up ops, then the best of --reps timed loops (as many ops per loop as the C++ side),
algbw = bytes / time, busbw = algbw * 2 (world - 1) / world. float32 sums, in place.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist


def ops_for(nbytes):
    """Ops per timed loop: the same rule as strata_allreduce_bench."""
    return max(5, min(200, (256 << 20) // nbytes))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rank", type=int, required=True)
    p.add_argument("--world", type=int, required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--sizes", default="4096,65536,1048576,4194304,16777216,67108864")
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_args()
    torch.set_num_threads(1)  # the all-reduce runs on Gloo's thread; no intra-op pool needed
    os.makedirs(args.dir, exist_ok=True)
    dist.init_process_group("gloo", init_method="file://" + os.path.join(args.dir, "torch_store"),
                            rank=args.rank, world_size=args.world)
    for nbytes in (int(s) for s in args.sizes.split(",")):
        t = torch.full((nbytes // 4,), float(args.rank + 1), dtype=torch.float32)
        for _ in range(3):  # warm-up
            dist.all_reduce(t)
        ops = ops_for(nbytes)
        best = float("inf")
        for _ in range(args.reps):
            t.fill_(float(args.rank + 1))
            dist.barrier()
            start = time.perf_counter()
            for _ in range(ops):
                dist.all_reduce(t)
            best = min(best, (time.perf_counter() - start) / ops)
        if args.rank == 0:
            algbw = nbytes / best / 1e9
            busbw = algbw * 2 * (args.world - 1) / args.world
            print(f"RESULT torch {args.world} {nbytes} {best * 1e6:.1f} {algbw:.3f} {busbw:.3f}",
                  flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
