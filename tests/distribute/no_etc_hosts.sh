#!/usr/bin/env bash
# Multi-worker training on a machine without /etc/hosts (a debootstrap root, some containers):
# the tutorial's TF_CONFIG names every task "localhost:<port>", which must still mean the
# loopback address (RFC 6761) for the coordination service and Gloo. Runs two of the
# multi-worker tests in a mount namespace where /etc/hosts is an empty file. Skips (77) with
# one line where a mount namespace cannot be made (not root, no unshare).
#   no_etc_hosts.sh STRATA_TESTS_BINARY
set -uo pipefail
TESTS=$1
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null; then
  echo "SKIP: needs root and unshare to hide /etc/hosts"; exit 77
fi
if ! unshare --mount true 2>/dev/null; then
  echo "SKIP: cannot make a mount namespace here"; exit 77
fi
exec unshare --mount bash -c '
  mount --bind /dev/null /etc/hosts || { echo "SKIP: cannot hide /etc/hosts"; exit 77; }
  getent hosts localhost && { echo "localhost still resolves: /etc/hosts is not hidden"; exit 1; }
  exec "$0" --gtest_filter="MultiWorkerMirrored.TwoWorkersFitLikeOneProcessOnTheGlobalBatch:MultiWorkerMirrored.KilledWorkerMakesTheOthersFailNamingIt"
' "$TESTS"
