#!/usr/bin/env bash
# Three MultiWorkerMirroredStrategy workers on three "hosts" (network namespaces joined by a
# bridge in a fourth), training; then worker 2's host is cut off (its link set down: no TCP
# reset, packets just stop). Workers 0 and 1 must exit non-zero within the timeout with an error
# naming worker 2 — no hang. Skips (77) with one line where namespaces cannot be made (not
# root, no iproute2, a chroot without /run/netns).
#   netns_cutoff.sh STRATA_TESTS_BINARY
set -uo pipefail
TESTS=$1
ID=$$
WORK=$(mktemp -d)
NS_PREFIX=w LINK_PREFIX=s SUBNET=231
source "$(dirname "$0")/netns_hosts.sh"
CLUSTER="\"worker\": [\"$NET.1:20000\", \"$NET.2:20000\", \"$NET.3:20000\"]"
for i in 0 1 2; do
  TF_CONFIG="{\"cluster\": {$CLUSTER}, \"task\": {\"type\": \"worker\", \"index\": $i}}" \
  STRATA_TEST_MWMS_SCENARIO=long STRATA_TEST_MWMS_OUT="$WORK/out_$i" \
  STRATA_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE \
    timeout -s KILL 120 ip netns exec "${NS[$((i + 1))]}" "$TESTS" \
      --gtest_filter=MultiWorkerChild.Run >"$WORK/log_$i" 2>&1 &
  PIDS[$i]=$!
done

# Training is under way once worker 0 finished an epoch.
for _ in $(seq 1 600); do
  [ -s "$WORK/out_0" ] && break
  sleep 0.1
done
if [ ! -s "$WORK/out_0" ]; then
  echo "FAIL: the workers did not start training within 60 s"; cat "$WORK/log_0"; exit 1
fi
ip -n "${NS[0]}" link set "sp2_$ID" down   # worker 2's host is cut off
CUT=$(date +%s)

status=0
for i in 0 1; do
  wait "${PIDS[$i]}"; rc=$?
  took=$(( $(date +%s) - CUT ))
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 137 ]; then
    echo "FAIL: worker $i exited $rc ${took}s after worker 2 was cut off (expected an error)"
    status=1
  elif ! grep -q "worker 2 ($NET.3:20000)" "$WORK/log_$i"; then
    echo "FAIL: worker $i's error does not name worker 2 ($NET.3:20000):"; tail -20 "$WORK/log_$i"
    status=1
  else
    echo "worker $i stopped ${took}s after the cut, naming worker 2:"
    grep -m1 -o "worker 2 ($NET.3:20000)[^\"]*" "$WORK/log_$i" | head -c 300; echo
  fi
done
kill -KILL "${PIDS[2]}" 2>/dev/null
exit $status
