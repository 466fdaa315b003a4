#!/usr/bin/env bash
# Parameter-server figures (issue 16) on this machine, all tasks on loopback through
# strata-launch (chief + W workers + P ps, each its own process, 1 thread each):
#  1. steps/s of the tutorial model (apps/ps_embedding: Embedding sharded over the ps tasks,
#     batch 32) and of ResNet-20 (batch BATCH) with 1 and 2 workers x 1 and 2 ps, ROUNDS rounds
#     (median, min-max: this machine drifts by tens of percent);
#  2. ResNet-20 trained locally by one process with 1 thread (strata_bench train: model.fit),
#     the reference for the parameter-server runs (1 worker + 1 ps against it: the ratio);
#  3. bytes per step of an Embedding(100000, 64) sharded over 2 ps, by rows vs whole.
#   bench/ps_compare.sh                 # STEPS=40 WARMUP=5 BATCH=64 ROUNDS=3
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${STRATA_BUILD_DIR:-build}
BENCH=$BUILD/bench/strata_ps_bench
LOCAL=$BUILD/bench/strata_bench
LAUNCH=$BUILD/apps/strata_launch/strata-launch
STEPS=${STEPS:-40}
WARMUP=${WARMUP:-5}
BATCH=${BATCH:-64}
ROUNDS=${ROUNDS:-3}
[ -x "$BENCH" ] && [ -x "$LAUNCH" ] && [ -x "$LOCAL" ] ||
  STRATA_TARGET="strata_ps_bench strata-launch strata_bench" scripts/build
export STRATA_NUM_THREADS=1 OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE
unset TF_CONFIG

median_range() {  # numbers on stdin -> "median (min-max)"
  sort -g | awk '{v[NR]=$1} END {m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2;
                                 printf "%8.2f (%.2f-%.2f)", m, v[1], v[NR]}'
}

declare -A runs
for round in $(seq "$ROUNDS"); do
  out=$("$LOCAL" train --model resnet20 --batch "$BATCH" --steps "$STEPS" --warmup "$WARMUP" 2>&1) ||
    { echo "$out" >&2; exit 1; }
  runs[local]+="$(echo "$out" | sed -n 's/^samples\/s *\([0-9.]*\).*/\1/p' | head -1) "
  for model in tutorial resnet20; do
    for workers in 1 2; do
      for ps in 1 2; do
        out=$("$LAUNCH" --workers "$workers" --ps "$ps" --chief -- "$BENCH" train --model "$model" \
                --batch "$BATCH" --steps "$STEPS" --warmup "$WARMUP" 2>&1) ||
          { echo "$out" >&2; exit 1; }
        v=$(echo "$out" | sed -n 's/.*steps\/s \([0-9.]*\).*/\1/p' | head -1)
        runs[$model.$workers.$ps]+="$v "
      done
    done
  done
done

echo "steps/s, median (min-max) over $ROUNDS rounds of $STEPS steps after $WARMUP warm-up"
printf "%-10s %-9s %-22s %-22s\n" model workers "1 ps" "2 ps"
for model in tutorial resnet20; do
  for workers in 1 2; do
    printf "%-10s %-9s" "$model" "$workers"
    for ps in 1 2; do
      printf " %-22s" "$(echo ${runs[$model.$workers.$ps]} | tr ' ' '\n' | median_range)"
    done
    echo
  done
done
echo
local_median=$(echo ${runs[local]} | tr ' ' '\n' | median_range | awk '{print $1}')
ps_median=$(echo ${runs[resnet20.1.1]} | tr ' ' '\n' | median_range | awk '{print $1}')
awk -v b="$BATCH" -v l="$local_median" -v p="$ps_median" 'BEGIN {
  printf "ResNet-20 batch %d, samples/s (medians): local 1-thread fit %.1f, 1 worker + 1 ps %.1f: %.2fx\n",
         b, l, p * b, p * b / l }'
echo
"$BENCH" bytes --rows 100000 --dim 64 --batch 128 --steps 20
