#!/usr/bin/env bash
# What grows with the number of workers, for N = 2 .. 128 processes on this machine (issue 27):
# Strata (strata_bench scale under strata-launch: MultiWorkerMirroredStrategy over TF_CONFIG,
# its coordination service hosted by worker 0, Gloo between the workers) beside PyTorch's gloo
# (bench/reference/torch_scale.py: init_process_group over a TCPStore hosted by rank 0).
# For each N and side:
#   start s      launch to main() (the slowest process): starting N processes and loading
#                their libraries (PyTorch: the interpreter and `import torch`), which on a
#                machine with fewer cores than processes grows with N before any rendezvous
#   ready s      launch to ready (the slowest process): start, then registration, rendezvous,
#                first barrier; apart from any training step, whose compute grows with N too
#   4KB us       all-reduce latency (median)
#   16MB ms      all-reduce time (median), and busbw GB/s (bytes x 2 (N-1) / N / time)
#   store KB     key and value bytes through the coordination service when worker 0 (its host)
#                is ready, and at the end (Strata only: TCPStore counts nothing)
#   bench/scale_compare.sh                       # N = 2 4 8 16 32 64 128, PyTorch up to 64
#   NS="2 8 32" TORCH_MAX=32 bench/scale_compare.sh
# One thread per process. Every process of a job shares this machine's cores, so the all-reduce
# figures measure a crowded machine as much as the algorithm: compare the two sides at equal N,
# and the growth of "ready" with N. PyTorch processes take about 250 MB each (TORCH_MAX, default
# 64, caps N there); Strata's about 80 MB. LOG_DIR=dir keeps every run's output.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${STRATA_BUILD_DIR:-build}
BENCH=$BUILD/bench/strata_bench
LAUNCH=$BUILD/apps/strata_launch/strata-launch
NS=${NS:-"2 4 8 16 32 64 128"}
TORCH_MAX=${TORCH_MAX:-64}
PYTHON=${PYTHON:-/usr/bin/python3}
[ -x "$BENCH" ] && [ -x "$LAUNCH" ] || STRATA_TARGET="strata_bench strata-launch" scripts/build
have_torch=1
"$PYTHON" -c "import torch.distributed" 2>/dev/null || {
  have_torch=0
  echo "PyTorch side skipped: apt-get install -y python3-torch libopenblas0-pthread" >&2
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
logs=${LOG_DIR:-$work}
mkdir -p "$logs"
export STRATA_NUM_THREADS=1 OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE

# summary LOG: "<start of the slowest> <ready of the slowest> <rank 0's SCALE fields>", or
# dashes when it failed.
summary() {
  local slowest started line
  slowest=$(grep -ao 'SCALE_READY [0-9]* [0-9.]* [0-9.]*' "$1" | awk '$3 > m {m = $3} END {print m + 0}')
  started=$(grep -ao 'SCALE_READY [0-9]* [0-9.]* [0-9.]*' "$1" | awk '$4 > m {m = $4} END {print m + 0}')
  line=$(grep -ao 'SCALE [0-9].*' "$1" | head -1)
  if [ -z "$line" ]; then echo "- - - - - - -"; return; fi
  # SCALE N ready R small_us S large_ms L busbw_gbs B store_bytes X Y: fields 1 .. 13
  echo "$line" | awk -v slowest="$slowest" -v started="$started" '{
    kb1 = ($12 == "-") ? "-" : sprintf("%.0f", $12 / 1024);
    kb2 = ($13 == "-") ? "-" : sprintf("%.0f", $13 / 1024);
    printf "%.2f %.2f %s %s %s %s %s\n", started, slowest, $6, $8, $10, kb1, kb2 }'
}

printf '%5s | %-52s | %-44s\n' "" "Strata (MultiWorkerMirrored, coordination service)" \
  "PyTorch gloo (TCPStore)"
printf '%5s | %7s %7s %9s %8s %6s %11s | %7s %7s %9s %8s %6s\n' N "start s" "ready s" "4KB us" \
  "16MB ms" busbw "store KB" "start s" "ready s" "4KB us" "16MB ms" busbw
for n in $NS; do
  log=$logs/strata_$n.log
  STRATA_SCALE_T0=$(date +%s.%N) timeout 900 "$LAUNCH" --workers "$n" -- "$BENCH" scale \
    > "$log" 2>&1 || true
  read -r s_start s_ready s_small s_large s_bw s_kb1 s_kb2 <<< "$(summary "$log")"
  t_start=- t_ready=- t_small=- t_large=- t_bw=-
  if [ "$have_torch" = 1 ] && [ "$n" -le "$TORCH_MAX" ]; then
    log=$logs/torch_$n.log
    port=$((29500 + RANDOM % 20000))
    t0=$(date +%s.%N)
    pids=()
    for ((r = 0; r < n; r++)); do
      RANK=$r WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$port STRATA_SCALE_T0=$t0 \
        timeout 900 "$PYTHON" bench/reference/torch_scale.py >> "$log" 2>&1 &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || true; done
    read -r t_start t_ready t_small t_large t_bw _ _ <<< "$(summary "$log")"
  fi
  printf '%5s | %7s %7s %9s %8s %6s %5s/%-5s | %7s %7s %9s %8s %6s\n' "$n" "$s_start" \
    "$s_ready" "$s_small" "$s_large" "$s_bw" "$s_kb1" "$s_kb2" "$t_start" "$t_ready" "$t_small" \
    "$t_large" "$t_bw"
done
