#!/usr/bin/env python3
"""Sums the GPU time of each kernel in an Nsight Compute CSV (ncu --csv --page raw --metrics
gpu__time_duration.sum), as scripts/gpu_run's `profile` step writes it, and prints the kernels
that took the most time: calls, total and mean microseconds, share. A development aid for the
GPU machine (no part of the build); the project does not need Python to build or run.

  scripts/gpu_kernel_table.py kernels.csv [--last N]   # N: only the last N launches (one step)
"""
import collections
import csv
import sys


def main():
    args = sys.argv[1:]
    last = 0
    if "--last" in args:
        i = args.index("--last")
        last = int(args[i + 1])
        del args[i:i + 2]
    rows = []
    with open(args[0], newline="") as f:
        lines = [l for l in f if l.startswith('"')]  # ncu's own messages start with ==
    reader = csv.DictReader(lines)
    for row in reader:
        if not row.get("ID", "").isdigit():
            continue  # the units row
        t = row.get("gpu__time_duration.sum", "").replace(",", "")
        try:
            rows.append((int(row["ID"]), row["Kernel Name"], float(t)))
        except ValueError:
            continue
    rows.sort()
    if last:
        rows = rows[-last:]
    total = sum(t for _, _, t in rows)
    by_name = collections.defaultdict(lambda: [0, 0.0])
    for _, name, t in rows:
        short = name.split("(")[0][:90]
        by_name[short][0] += 1
        by_name[short][1] += t
    print(f"{len(rows)} kernel launches, {total / 1e6:.2f} ms of GPU time in all")
    print(f"{'calls':>6} {'total us':>10} {'mean us':>9} {'share':>6}  kernel")
    for name, (n, t) in sorted(by_name.items(), key=lambda kv: -kv[1][1])[:30]:
        print(f"{n:6d} {t / 1e3:10.1f} {t / n / 1e3:9.2f} {100 * t / total:5.1f}%  {name}")


if __name__ == "__main__":
    main()
