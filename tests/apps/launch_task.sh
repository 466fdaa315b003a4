#!/bin/sh
# A task for strata-launch's tests (apps/CMakeLists.txt): prints its TF_CONFIG, then does what
# $1 asks of a task of its type and index.
#   serve           ps tasks wait until stopped, the others exit 0
#   fail_worker_1   worker 1 exits with status 3, the others wait until stopped
#   wait            every task says "ready" and waits until stopped (for tests that signal the
#                   launcher only once every task runs: a fixed sleep races under load)
#   security        prints the job token file it was given (its mode and a hash of its text)
#                   and the TLS files and bind host, then exits 0; with $LAUNCH_TASK_SYNC_DIR
#                   set, a ps marks there that it has printed, and the workers wait (30 s at
#                   most) for ps 0's mark: the launcher stops the ps tasks once the workers end,
#                   which under load could be before the ps had printed
#   flaky DIR N     worker 1 adds a line to DIR/runs each run and fails on its first N runs
#                   (killed by SIGKILL the first time, status 3 after), then writes DIR/done
#                   and exits 0; the other tasks wait (30 s at most) for DIR/done and exit 0
#                   (1 if it never came): none ends before worker 1's last run, so the
#                   launcher's restart decisions do not race their exits
#   fail_chief      the chief exits with status 3, the others wait until stopped
#   fail_then_wait FILE TEXT
#                   worker 1 exits with status 3; the others wait (30 s at most) until FILE (the
#                   launcher's output) holds TEXT, then exit 0 (1 if it never did): they are
#                   running when the launcher weighs the failure
echo "$TF_CONFIG"
type=$(echo "$TF_CONFIG" | sed -n 's/.*"type": *"\([a-z]*\)".*/\1/p')
index=$(echo "$TF_CONFIG" | sed -n 's/.*"index": *\([0-9]*\).*/\1/p')
# Polls the command until it succeeds (exit 0) or 30 s have passed (exit 1).
wait_until() {
  tries=0
  until "$@"; do
    [ "$tries" -lt 300 ] || { echo "gave up waiting for: $*" >&2; exit 1; }
    sleep 0.1; tries=$((tries + 1))
  done
  exit 0
}
case "$1:$type:$index" in
  serve:ps:*) exec sleep 60 ;;
  security:*)
    if [ -n "${STRATA_JOB_TOKEN_FILE:-}" ]; then
      echo "token file $STRATA_JOB_TOKEN_FILE mode $(stat -c %a "$STRATA_JOB_TOKEN_FILE")" \
           "hash $(cksum < "$STRATA_JOB_TOKEN_FILE" | cut -d' ' -f1)"
    else
      echo "no token file"
    fi
    echo "tls ${STRATA_TLS_CERT_FILE:-none} ${STRATA_TLS_KEY_FILE:-none} ${STRATA_TLS_CA_FILE:-none}" \
         "bind ${STRATA_BIND_HOST:-none}"
    if [ -n "${LAUNCH_TASK_SYNC_DIR:-}" ]; then
      if [ "$type" = ps ]; then
        touch "$LAUNCH_TASK_SYNC_DIR/ps_$index"
      elif echo "$TF_CONFIG" | grep -q '"ps"'; then
        tries=0
        while [ ! -e "$LAUNCH_TASK_SYNC_DIR/ps_0" ] && [ "$tries" -lt 300 ]; do
          sleep 0.1; tries=$((tries + 1))
        done
      fi
    fi
    exit 0 ;;
  fail_worker_1:worker:1) echo "worker 1 fails on purpose" >&2; exit 3 ;;
  fail_worker_1:*) exec sleep 60 ;;
  wait:*) echo "ready"; exec sleep 60 ;;
  flaky:worker:1)
    echo run >> "$2/runs"
    runs=$(wc -l < "$2/runs")
    [ "$runs" -gt 1 ] || [ "$3" -eq 0 ] || kill -KILL $$
    [ "$runs" -gt "$3" ] || { echo "worker 1 fails on purpose" >&2; exit 3; }
    touch "$2/done"; exit 0 ;;
  flaky:*) wait_until test -e "$2/done" ;;
  fail_then_wait:worker:1) echo "worker 1 fails on purpose" >&2; exit 3 ;;
  fail_then_wait:*) wait_until grep -q "$3" "$2" ;;
  fail_chief:chief:*) echo "the chief fails on purpose" >&2; exit 3 ;;
  fail_chief:*) exec sleep 60 ;;
  *) exit 0 ;;
esac
