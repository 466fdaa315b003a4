# Sourced by the network-namespace tests: three "hosts" (namespaces ${NS[1..3]}) joined by a
# bridge in a fourth (${NS[0]}), at $NET.1 .. $NET.3; host i's link in the bridge is
# "${LINK_PREFIX}p${i}_$ID" (set it down to cut the host off). Exits 77 (skip) with one line
# where namespaces cannot be made (not root, no iproute2, a chroot without /run/netns).
# Before sourcing: ID (unique, e.g. $$), NS_PREFIX (2 letters), LINK_PREFIX (1 letter), SUBNET
# (the third-to-last octet base: 10.SUBNET.x.y), WORK (a scratch folder). Installs the cleanup.
NS=(${NS_PREFIX}s_$ID ${NS_PREFIX}0_$ID ${NS_PREFIX}1_$ID ${NS_PREFIX}2_$ID)
NET=10.$SUBNET.$((ID % 250))

cleanup() {
  for p in $(jobs -p); do kill -KILL "$p" 2>/dev/null; done
  wait 2>/dev/null
  for n in "${NS[@]}"; do ip netns del "$n" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT

if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null; then
  echo "SKIP: needs root and iproute2 to make network namespaces"; exit 77
fi
if ! ip netns add "${NS[0]}" 2>"$WORK/err"; then
  echo "SKIP: cannot make network namespaces here: $(head -1 "$WORK/err")"; exit 77
fi
set -e
ip -n "${NS[0]}" link add br0 type bridge
ip -n "${NS[0]}" link set br0 up
for i in 0 1 2; do
  ns=${NS[$((i + 1))]}
  ip netns add "$ns"
  ip link add "${LINK_PREFIX}v${i}_$ID" type veth peer name "${LINK_PREFIX}p${i}_$ID"
  ip link set "${LINK_PREFIX}v${i}_$ID" netns "$ns"
  ip link set "${LINK_PREFIX}p${i}_$ID" netns "${NS[0]}"
  ip -n "${NS[0]}" link set "${LINK_PREFIX}p${i}_$ID" master br0 up
  ip -n "$ns" addr add "$NET.$((i + 1))/24" dev "${LINK_PREFIX}v${i}_$ID"
  ip -n "$ns" link set "${LINK_PREFIX}v${i}_$ID" up
  ip -n "$ns" link set lo up
done
set +e
