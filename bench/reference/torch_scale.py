#!/usr/bin/python3
"""The PyTorch side of `strata_bench scale` (bench/scale_compare.sh): N processes of
torch.distributed's Gloo backend meeting through its TCPStore (rank 0 hosts it, as MASTER_ADDR
and MASTER_PORT set up a job), measuring the same things the same way:
  ready  seconds from STRATA_SCALE_T0 (the launch) until init_process_group returns: the store,
         the Gloo full-mesh rendezvous through it, its barrier
  small  4 KB all-reduce latency, microseconds (median of --small_reps, each after a barrier)
  large  16 MB all-reduce, milliseconds (median of --large_reps) and bus bandwidth
Every rank prints "SCALE_READY <rank> <ready s> <started s>" (started: the launch to main, the
interpreter and torch's import included); rank 0 prints "SCALE <N> ready <s> small_us <us>
large_ms <ms> busbw_gbs <GB/s> store_bytes - -" (TCPStore counts no bytes).

Not part of the build; Debian's python3-torch (1.13) is enough.
  RANK=r WORLD_SIZE=n MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 STRATA_SCALE_T0=$(date +%s.%N) \\
      /usr/bin/python3 bench/reference/torch_scale.py          (r = 0 .. n-1, together)
"""
import argparse
import os
import time

import torch
import torch.distributed as dist


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def time_all_reduce(nbytes, warmup, reps):
    t = torch.ones(nbytes // 4)
    for _ in range(warmup):
        dist.all_reduce(t)
    times = []
    for _ in range(reps):
        dist.barrier()
        start = time.perf_counter()
        dist.all_reduce(t)
        times.append(time.perf_counter() - start)
    return median(times)


def main():
    t0 = float(os.environ.get("STRATA_SCALE_T0", time.time()))
    started = time.time() - t0  # the launch to here: the interpreter and torch's import
    p = argparse.ArgumentParser()
    p.add_argument("--small_reps", type=int, default=20)
    p.add_argument("--large_reps", type=int, default=3)
    args = p.parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="env://")
    ready = time.time() - t0
    rank, n = dist.get_rank(), dist.get_world_size()
    print(f"SCALE_READY {rank} {ready:.3f} {started:.3f}", flush=True)
    small = time_all_reduce(4096, 3, args.small_reps)
    large_bytes = 16 << 20
    large = time_all_reduce(large_bytes, 1, args.large_reps)
    busbw = large_bytes * 2.0 * (n - 1) / n / large / 1e9
    if rank == 0:
        print(f"SCALE {n} ready {ready:.3f} small_us {small * 1e6:.1f} large_ms {large * 1e3:.1f} "
              f"busbw_gbs {busbw:.3f} store_bytes - -", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
