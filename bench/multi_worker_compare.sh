#!/usr/bin/env bash
# Multi-worker scaling on this machine's CPUs (issue 15): ResNet-20 CIFAR training, 1 worker x 1
# thread against 2 workers x 1 thread, in Strata (strata_bench train; 2 workers through
# strata-launch and MultiWorkerMirroredStrategy) and in PyTorch (bench/reference/pytorch_train.py;
# 2 processes with DistributedDataParallel over gloo), with the same model, per-worker batch,
# optimizer (SGD, momentum 0.9) and synthetic data. Weak scaling, as DDP: each worker trains
# --batch samples per step, so 2 workers train 2 x BATCH per step; samples/s are global.
#   bench/multi_worker_compare.sh                     # batch 64 per worker, 40 steps, 3 rounds
#   BATCH=128 STEPS=60 ROUNDS=5 bench/multi_worker_compare.sh
# The four runs go in turn within each round (this machine's speed drifts by tens of percent), so
# each round's efficiency = 2-worker samples/s / (2 x 1-worker samples/s) compares runs taken a
# minute apart; the table gives the median over rounds (and the range). 2 workers x 1 thread
# fill a 2-core machine: on a busier machine read the ratios, not the absolute values. Every
# worker process runs in a session of its own (setsid): with the kernel's autogroup scheduling
# (sched_autogroup_enabled, Debian's default) the CPU is shared fairly between sessions, so
# workers sharing one session would get one session's share between them on a loaded machine.
# LOG_DIR=dir keeps every run's output.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${STRATA_BUILD_DIR:-build}
BENCH=$BUILD/bench/strata_bench
LAUNCH=$BUILD/apps/strata_launch/strata-launch
BATCH=${BATCH:-64}
STEPS=${STEPS:-40}
WARMUP=${WARMUP:-5}
ROUNDS=${ROUNDS:-3}
PYTHON=${PYTHON:-/usr/bin/python3}
[ -x "$BENCH" ] && [ -x "$LAUNCH" ] || STRATA_TARGET="strata_bench strata-launch" scripts/build
"$PYTHON" -c "import torch.distributed" 2>/dev/null ||
  { echo "needs PyTorch: apt-get install -y python3-torch libopenblas0-pthread" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
logs=${LOG_DIR:-$work}
mkdir -p "$logs"
results=$work/results
export STRATA_NUM_THREADS=1 OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE

args=(--model resnet20 --batch "$BATCH" --steps "$STEPS" --warmup "$WARMUP")
# record NAME ROUND LOG: the samples/s of LOG's first "samples/s" line (worker / rank 0's).
record() {
  local rate
  rate=$(sed -n 's/^\(\[worker 0\] \)\{0,1\}samples\/s *\([0-9.]*\).*/\2/p' "$3" | head -1)
  [ -n "$rate" ] || { echo "no samples/s in $3:" >&2; cat "$3" >&2; exit 1; }
  echo "$1 $2 $rate" >>"$results"
  echo "   $1: $rate samples/s" >&2
}

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((r = 1; r <= ROUNDS; r++)); do
  echo "== round $r of $ROUNDS" >&2
  log=$logs/strata1_$r.log
  setsid -w "$BENCH" train "${args[@]}" >"$log" 2>&1
  record strata1 "$r" "$log"
  log=$logs/strata2_$r.log
  "$LAUNCH" --workers 2 -- setsid -w "$BENCH" train "${args[@]}" --strategy multi_worker_mirrored \
    >"$log" 2>&1
  record strata2 "$r" "$log"
  log=$logs/torch1_$r.log
  setsid -w "$PYTHON" bench/reference/pytorch_train.py "${args[@]}" --threads 1 >"$log" 2>&1
  record torch1 "$r" "$log"
  log=$logs/torch2_$r.log
  pids=()
  for rank in 1 0; do
    RANK=$rank WORLD_SIZE=2 setsid -w "$PYTHON" bench/reference/pytorch_train.py "${args[@]}" \
      --threads 1 --ddp --init_method "file://$work/ddp_store_$r" >>"$log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  record torch2 "$r" "$log"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

"$PYTHON" - "$results" "$BATCH" "$STEPS" "$WARMUP" "$ROUNDS" <<'PY'
import statistics, sys
path, batch, steps, warmup, rounds = sys.argv[1], *map(int, sys.argv[2:])
rate = {}
for line in open(path):
    name, r, v = line.split()
    rate[(name, int(r))] = float(v)
rs = range(1, rounds + 1)
med = lambda xs: statistics.median(xs)

def cell(name):
    xs = [rate[(name, r)] for r in rs]
    return f"{med(xs):7.1f} ({min(xs):.0f}-{max(xs):.0f})"

def eff(lib):
    xs = [rate[(lib + "2", r)] / (2 * rate[(lib + "1", r)]) for r in rs]
    return med(xs), min(xs), max(xs)

print(f"ResNet-20 CIFAR training, fp32, SGD momentum 0.9, batch {batch} per worker, 1 thread per "
      f"worker; {warmup} warm-up + {steps} timed steps; median (min-max) of {rounds} rounds")
print(f"{'':<24} {'1 worker':>18} {'2 workers':>18} {'scaling efficiency':>22}")
print(f"{'':<24} {'samples/s':>18} {'samples/s':>18}")
for lib, label in (("strata", "Strata (MWMS, Gloo)"), ("torch", "PyTorch (DDP, gloo)")):
    e = eff(lib)
    print(f"{label:<24} {cell(lib + '1'):>18} {cell(lib + '2'):>18} "
          f"{f'{e[0]:.2f} ({e[1]:.2f}-{e[2]:.2f})':>22}")
ratio = lambda n: med([rate[(f"strata{n}", r)] / rate[(f"torch{n}", r)] for r in rs])
print(f"{'Strata / PyTorch':<24} {f'{ratio(1):.2f}x':>18} {f'{ratio(2):.2f}x':>18}")
print("scaling efficiency = 2-worker samples/s / (2 x 1-worker samples/s), per round; "
      "samples/s are global")
PY
