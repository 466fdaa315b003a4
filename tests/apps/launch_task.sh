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
echo "$TF_CONFIG"
type=$(echo "$TF_CONFIG" | sed -n 's/.*"type": *"\([a-z]*\)".*/\1/p')
index=$(echo "$TF_CONFIG" | sed -n 's/.*"index": *\([0-9]*\).*/\1/p')
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
  *) exit 0 ;;
esac
