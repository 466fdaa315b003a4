#!/usr/bin/env bash
# An elastic MultiWorkerMirroredStrategy job of three workers on three "hosts" (network
# namespaces joined by a bridge in a fourth). Mid-training worker 2's host is cut off (its link
# set down: no TCP reset, packets just stop): workers 0 and 1 must drop it and go on, and worker
# 2 must fail (it lost the coordination service). Then the link comes back and worker 2 is
# started again: it must join the running job as a new member, and all three must finish with
# the same weights. Skips (77) where namespaces cannot be made (not root, no iproute2).
#   netns_elastic_cutoff.sh STRATA_TESTS_BINARY
set -uo pipefail
TESTS=$1
ID=$$
WORK=$(mktemp -d)
NS_PREFIX=e LINK_PREFIX=e SUBNET=232
source "$(dirname "$0")/netns_hosts.sh"
CLUSTER="\"worker\": [\"$NET.1:20000\", \"$NET.2:20000\", \"$NET.3:20000\"]"
start() {  # start worker $1 (output: $WORK/out_$1$2, log: $WORK/log_$1$2)
  local i=$1 run=$2
  TF_CONFIG="{\"cluster\": {$CLUSTER}, \"task\": {\"type\": \"worker\", \"index\": $i}}" \
  STRATA_TEST_ELASTIC_SCENARIO=netns STRATA_TEST_ELASTIC_OUT="$WORK/out_$i$run" \
  STRATA_TEST_ELASTIC_PAUSE_FILE="$WORK/cut" STRATA_TEST_ELASTIC_WAIT_AT=5:0 \
  STRATA_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE \
    timeout -s KILL 120 ip netns exec "${NS[$((i + 1))]}" "$TESTS" \
      --gtest_filter=ElasticTrainingChild.Run >"$WORK/log_$i$run" 2>&1 &
  PIDS[$i]=$!
}
for i in 0 1 2; do start $i ""; done

wait_for() {  # a file, within 60 s
  for _ in $(seq 1 600); do [ -e "$1" ] && return 0; sleep 0.1; done
  return 1
}
# The chief pauses in epoch 2; worker 2's host is cut off, then the chief goes on.
if ! wait_for "$WORK/cut.at"; then
  echo "FAIL: the job did not reach epoch 2 within 60 s"; tail -5 "$WORK/log_0"; exit 1
fi
ip -n "${NS[0]}" link set "ep2_$ID" down
CUT=$(date +%s)
touch "$WORK/cut"
wait "${PIDS[2]}"; rc=$?
echo "worker 2 exited $rc $(( $(date +%s) - CUT ))s after the cut"
if [ "$rc" -eq 0 ] || [ "$rc" -eq 137 ]; then
  echo "FAIL: worker 2, cut off, should fail (not finish, not hang)"; tail -5 "$WORK/log_2"; exit 1
fi
# Back on the network, started again: it joins (the chief waits for it in epoch 5).
ip -n "${NS[0]}" link set "ep2_$ID" up
start 2 "_again"

status=0
for i in 0 1 2; do
  wait "${PIDS[$i]}"; rc=$?
  run=""; [ "$i" -eq 2 ] && run="_again"
  if [ "$rc" -ne 0 ]; then
    echo "FAIL: worker $i$run exited $rc"; tail -20 "$WORK/log_$i$run"; status=1
  fi
done
[ "$status" -eq 0 ] || exit 1
for i in 1 2; do
  run=""; [ "$i" -eq 2 ] && run="_again"
  if ! diff -q <(grep '^w' "$WORK/out_0") <(grep '^w' "$WORK/out_$i$run") >/dev/null; then
    echo "FAIL: worker $i$run's final weights differ from worker 0's"; status=1
  fi
done
echo "worker 0: $(head -1 "$WORK/out_0")"
echo "worker 2 (joined): $(head -1 "$WORK/out_2_again")"
if ! grep -q "iterations 32 " "$WORK/out_0"; then
  echo "FAIL: worker 0 did not apply exactly 32 steps"; status=1
fi
[ "$status" -eq 0 ] && echo "PASS: cut off, dropped, back, joined; equal weights everywhere"
exit $status
