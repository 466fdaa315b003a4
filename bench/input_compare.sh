#!/usr/bin/env bash
# Input-pipeline throughput (issue 29): images/s of a CIFAR-10 training input, decoding PNGs and
# augmenting them (pad 4 + random 32x32 crop, random left-right flip, scale to [0,1]) into
# batches of 128, with 1 and 2 threads, in Strata (strata_input_bench: TFRecord files of
# tf.train.Example -> parse_single_example -> decode_png) and in PyTorch
# (bench/reference/torch_input.py: DataLoader over torchvision's ImageFolder of the same PNGs,
# num_workers 1 and 2). Strata runs its pipeline two ways: the usual per-image parallel map
# (--map element) and the map inside a parallel interleave, one file per thread (--map per_file).
#   bench/input_compare.sh                  # 10240 images after 5 warm-up batches, 3 rounds
#   IMAGES=20480 ROUNDS=5 bench/input_compare.sh
#   INPUT_DIR=~/cifar10-input bench/input_compare.sh    # keeps the converted data there
# The data: the real CIFAR-10 (scripts/get_datasets cifar10, run here when needed), converted by
# strata_cifar10_to_tfrecord into INPUT_DIR/tfrecord (train-0000k-of-00010.tfrecord) and
# INPUT_DIR/png (train/<class>/<n>.png); without INPUT_DIR into a temporary folder, removed at
# the end. The runs go in turn within each round (this machine's speed drifts), and the table
# gives the median over rounds (and the range). STRATA_NUM_THREADS=1 and
# torch.set_num_threads(1): the threads counted are the pipeline's. LOG_DIR=dir keeps every
# run's output.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${STRATA_BUILD_DIR:-build}
BENCH=$BUILD/bench/strata_input_bench
CONVERT=$BUILD/datasets/tools/strata_cifar10_to_tfrecord
IMAGES=${IMAGES:-10240}
WARMUP=${WARMUP:-5}
BATCH=${BATCH:-128}
ROUNDS=${ROUNDS:-3}
PYTHON=${PYTHON:-/usr/bin/python3}
[ -x "$BENCH" ] && [ -x "$CONVERT" ] ||
  STRATA_TARGET="strata_input_bench strata_cifar10_to_tfrecord" scripts/build
"$PYTHON" -c "import torch, torchvision" 2>/dev/null || {
  echo "needs PyTorch and torchvision: apt-get install -y python3-torch python3-torchvision" >&2
  exit 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
logs=${LOG_DIR:-$work}
mkdir -p "$logs"
results=$work/results
data=${INPUT_DIR:-$work/cifar10}
export STRATA_NUM_THREADS=1 OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE

# The converted data, unless a complete conversion is already there.
if [ ! -f "$data/converted" ]; then
  scripts/get_datasets cifar10 >&2
  rm -rf "$data/tfrecord" "$data/png"
  echo "converting CIFAR-10 into $data (TFRecord files and PNG folders)" >&2
  "$CONVERT" --output_dir "$data/tfrecord" --png_dir "$data/png" >&2
  touch "$data/converted"
fi

common=(--batch "$BATCH" --images "$IMAGES" --warmup "$WARMUP")
# run NAME ROUND COMMAND...: records the images/s that COMMAND prints.
run() {
  local name=$1 round=$2 log=$logs/$1_$2.log rate
  shift 2
  "$@" >"$log" 2>&1 || { echo "$name failed:" >&2; cat "$log" >&2; exit 1; }
  rate=$(sed -n 's/^images\/s *\([0-9.]*\).*/\1/p' "$log" | head -1)
  [ -n "$rate" ] || { echo "no images/s in $log:" >&2; cat "$log" >&2; exit 1; }
  echo "$name $round $rate" >>"$results"
  echo "   $name: $rate images/s" >&2
}

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((r = 1; r <= ROUNDS; r++)); do
  echo "== round $r of $ROUNDS" >&2
  for t in 1 2; do
    for map in element per_file; do
      run "$map$t" "$r" "$BENCH" --data_dir "$data/tfrecord" --threads "$t" --map "$map" \
        "${common[@]}"
    done
    run "torch$t" "$r" "$PYTHON" bench/reference/torch_input.py --data_dir "$data/png" \
      --workers "$t" "${common[@]}"
  done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

"$PYTHON" - "$results" "$BATCH" "$IMAGES" "$WARMUP" "$ROUNDS" <<'PY'
import statistics, sys
path, batch, images, warmup, rounds = sys.argv[1], *map(int, sys.argv[2:])
rate = {}
for line in open(path):
    name, r, v = line.split()
    rate[(name, int(r))] = float(v)
rs = range(1, rounds + 1)

def cell(name):
    xs = [rate[(name, r)] for r in rs]
    return f"{statistics.median(xs):8.0f} ({min(xs):.0f}-{max(xs):.0f})"

def ratio(name, t):
    return statistics.median([rate[(f"{name}{t}", r)] / rate[(f"torch{t}", r)] for r in rs])

print(f"CIFAR-10 training input (PNG decode, pad-4 random crop, random flip, [0,1] float32, "
      f"batch {batch}):\nimages/s, median (min-max) of {rounds} rounds of {images} images after "
      f"{warmup} warm-up batches")
print(f"{'':<46} {'1 thread':>22} {'2 threads':>22}")
rows = (("element", "Strata, TFRecord, map(num_parallel_calls=N)"),
        ("per_file", "Strata, TFRecord, map in interleave(N)"),
        ("torch", "PyTorch, ImageFolder, DataLoader(workers=N)"))
for name, label in rows:
    print(f"{label:<46} {cell(name + '1'):>22} {cell(name + '2'):>22}")
for name, label in rows[:2]:
    r1, r2 = f"{ratio(name, 1):.2f}x", f"{ratio(name, 2):.2f}x"
    print(f"{'Strata / PyTorch (' + name + ')':<46} {r1:>22} {r2:>22}")
PY
