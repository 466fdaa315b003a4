#!/usr/bin/env bash
# All-reduce bandwidth across processes on this machine's CPUs, three ways side by side in one
# table: raw Gloo and Strata's GlooCommunicator (strata_allreduce_bench --impl both: the same
# processes, their timed loops interleaved) and PyTorch's Gloo backend
# (bench/reference/torch_allreduce.py; skipped when torch does not import).
#   bench/allreduce_compare.sh                 # 2 and 4 processes, 4 KB .. 64 MB
#   WORLDS="2" REPS=7 bench/allreduce_compare.sh
# busbw = algbw * 2 (n - 1) / n (nccl-tests' bus bandwidth). On a machine with fewer cores than
# processes x 2 (each rank runs a compute thread and Gloo's I/O thread) the numbers are noisy:
# read the ratio column, taken within one run, rather than the absolute values.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${STRATA_BUILD_DIR:-build}/bench/strata_allreduce_bench
WORLDS=${WORLDS:-"2 4"}
SIZES=${SIZES:-4096,65536,1048576,4194304,16777216,67108864}
REPS=${REPS:-5}
PYTHON=${PYTHON:-/usr/bin/python3}
[ -x "$BIN" ] || STRATA_TARGET=strata_allreduce_bench scripts/build
results=$(mktemp)
work=$(mktemp -d)
trap 'rm -rf "$results" "$work"' EXIT

# run_ranks WORLD DIR CMD...: CMD once per rank (--rank R --world WORLD --dir DIR appended);
# rank 0's output is kept.
run_ranks() {
  local world=$1 dir=$2
  shift 2
  mkdir -p "$dir"
  local pids=()
  for ((r = 1; r < world; r++)); do
    "$@" --rank "$r" --world "$world" --dir "$dir" >/dev/null &
    pids+=($!)
  done
  "$@" --rank 0 --world "$world" --dir "$dir" >>"$results"
  for p in "${pids[@]}"; do wait "$p"; done
}

have_torch=0
"$PYTHON" -c "import torch.distributed" 2>/dev/null && have_torch=1
for w in $WORLDS; do
  echo "== $w processes: raw Gloo and Strata (interleaved) ..." >&2
  run_ranks "$w" "$work/both$w" "$BIN" --impl both --sizes "$SIZES" --reps "$REPS"
  if [ "$have_torch" = 1 ]; then
    echo "== $w processes: PyTorch (torch.distributed, gloo) ..." >&2
    run_ranks "$w" "$work/torch$w" "$PYTHON" bench/reference/torch_allreduce.py \
      --sizes "$SIZES" --reps "$REPS"
  fi
done

"$PYTHON" - "$results" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    if line.startswith("RESULT "):
        _, impl, world, nbytes, us, algbw, busbw = line.split()
        rows[(int(world), int(nbytes), impl)] = (float(us), float(algbw), float(busbw))

def size(n):
    return f"{n >> 20} MB" if n >= 1 << 20 else f"{n >> 10} KB"

def cell(key):
    r = rows.get(key)
    return f"{r[1]:7.3f} {r[2]:7.3f}" if r else f"{'n/a':>7} {'n/a':>7}"

print("all-reduce, float32 sum, CPU, processes on one machine over loopback TCP; GB/s (algbw busbw)")
print(f"{'ranks':>5} {'size':>6} | {'raw Gloo':^15} | {'Strata':^15} | {'PyTorch gloo':^15} | "
      f"{'Strata/Gloo':>11} {'Torch/Gloo':>10}")
for world, nbytes in sorted({(w, n) for (w, n, _) in rows}):
    g, s, t = (rows.get((world, nbytes, i)) for i in ("gloo", "strata", "torch"))
    ratio = lambda x: f"{x[1] / g[1]:.2f}x" if x and g else "n/a"
    print(f"{world:>5} {size(nbytes):>6} | {cell((world, nbytes, 'gloo'))} | "
          f"{cell((world, nbytes, 'strata'))} | {cell((world, nbytes, 'torch'))} | "
          f"{ratio(s):>11} {ratio(t):>10}")
PY
