#!/usr/bin/env bash
# Recovery from a worker killed mid-training (issue 28): an elastic MultiWorkerMirroredStrategy
# job against the restart that TensorFlow (and torchrun without elasticity) offers. The same job
# both ways: 3 workers on loopback under strata-launch, strata_elastic_bench (a small MLP
# classifier, synthetic data from fixed seeds, global batch 96, one line per completed step in
# a log), and worker 2 killed with SIGKILL once the chief has completed KILL_AT steps (+ a
# per-round offset in [0, BACKUP_FREQ), the same for both ways within a round).
#   (a) elastic: strata-launch --elastic_min_workers 2 --max_restarts 1, the program with
#       --elastic_min_workers 2. Workers 0 and 1 re-form without worker 2 and go on; the launcher
#       starts worker 2 again at once and it joins at a step boundary.
#   (a') elastic, not restarted: the same without --max_restarts: workers 0 and 1 finish alone
#       (the launcher lets worker 2 go: 2 training tasks still run).
#   (b) restart: the program with BackupAndRestore every BACKUP_FREQ steps; the kill fails the
#       whole job (the launcher stops the others); the script then starts the same command again
#       at once (what a user, torchrun --max-restarts or Kubernetes' restartPolicy would do, here
#       with no scheduling delay at all), and every worker resumes from the chief's last backup.
# Measured from the chief's step log (system_clock times):
#   kill -> next step: seconds from the kill to the first step completed after it whose
#     optimizer iteration is beyond every one completed before the kill (new progress);
#   steps redone: steps completed after the kill whose iteration had been completed before it;
#   kill -> worker 2 back: (a) seconds to the restarted worker 2's first completed step.
# Then, as an aside, the same job without any failure and without the step sleep, elastic and
# not: steps/s of the chief over steps 20..end (the per-step cost of elasticity: a snapshot of
# the state before every step).
#   bench/elastic_compare.sh                        # 3 rounds
#   ROUNDS=5 BACKUP_FREQ=20 SLEEP_MS=50 bench/elastic_compare.sh
# Settings: ROUNDS (3), EPOCHS (4), STEPS_PER_EPOCH (100), BATCH (96), SLEEP_MS (50: each step
# sleeps that long, so the job lasts long enough to be killed in), BACKUP_FREQ (10), KILL_AT
# (120), RUN_TIMEOUT (180 s per launcher run), THROUGHPUT_STEPS (600; 0: skip), SEED (1: the
# kill offsets), LOG_DIR (keeps every run's output and step logs), BENCH_ARGS (more flags for
# every strata_elastic_bench, e.g. "--heartbeat_timeout_seconds 2"). A worker that is not
# restarted is dropped once silent for 3 heartbeat intervals (at least 2 s) after a survivor
# reported the broken connection (CoordinationOptions::suspicion_timeout): 2.1 s from the kill
# to the next step on 2026-11-28, 9.7 s before, when it waited for the 10 s heartbeat timeout.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${STRATA_BUILD_DIR:-build}
BENCH=$BUILD/bench/strata_elastic_bench
LAUNCH=$BUILD/apps/strata_launch/strata-launch
ROUNDS=${ROUNDS:-3}
EPOCHS=${EPOCHS:-4}
STEPS_PER_EPOCH=${STEPS_PER_EPOCH:-100}
BATCH=${BATCH:-96}
SLEEP_MS=${SLEEP_MS:-50}
BACKUP_FREQ=${BACKUP_FREQ:-10}
KILL_AT=${KILL_AT:-120}
RUN_TIMEOUT=${RUN_TIMEOUT:-180}
THROUGHPUT_STEPS=${THROUGHPUT_STEPS:-600}
SEED=${SEED:-1}
PYTHON=${PYTHON:-python3}
TOTAL=$((EPOCHS * STEPS_PER_EPOCH))
if ((KILL_AT + BACKUP_FREQ >= TOTAL)); then
  echo "KILL_AT ($KILL_AT) + BACKUP_FREQ ($BACKUP_FREQ) must be below EPOCHS x STEPS_PER_EPOCH ($TOTAL)" >&2
  exit 2
fi
[ -x "$BENCH" ] && [ -x "$LAUNCH" ] ||
  flock /tmp/strata-build.lock env STRATA_TARGET="strata_elastic_bench strata-launch" scripts/build
work=$(mktemp -d)
logs=${LOG_DIR:-$work}
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
results=$work/results
MARKER=elastic_compare.$$  # on every task's command line: finds what this script started
export STRATA_NUM_THREADS=1 OMP_NUM_THREADS=1

# Everything this script started ends with it: the launchers (timeout passes SIGTERM on, the
# launcher to its tasks), then, by id, any task left.
runners=()
cleanup() {
  local p
  for p in "${runners[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  sleep 1
  for p in $(pgrep -f -- "--marker $MARKER" || true); do kill -KILL "$p" 2>/dev/null || true; done
  [ -n "${LOG_DIR:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The pid of task `worker INDEX` among the children of launcher LAUNCHER (empty if none now).
worker_pid() {
  local c
  for c in $(pgrep -P "$1" || true); do
    if tr '\0' '\n' <"/proc/$c/environ" 2>/dev/null | grep -Eq "^TF_CONFIG=.*\"index\": *$2[,}]"; then
      echo "$c"
      return
    fi
  done
}

# The optimizer iteration of the last line of step log FILE (0 before the first).
last_iteration() {
  local it
  it=$(tail -n 1 "$1" 2>/dev/null | awk 'NF >= 6 {print $4}')
  echo "${it:-0}"
}

now() { date +%s.%N; }

# start_job NAME LAUNCHER_FLAGS... -- BENCH_FLAGS...: starts the job in the background under
# timeout; sets RUNNER (timeout's pid) and LAUNCHER (strata-launch's pid).
start_job() {
  local name=$1
  shift
  local lflags=()
  while [ "$1" != "--" ]; do lflags+=("$1"); shift; done
  shift
  timeout -k 10 "$RUN_TIMEOUT" "$LAUNCH" --workers 3 "${lflags[@]}" -- "$BENCH" \
    --epochs "$EPOCHS" --steps_per_epoch "$STEPS_PER_EPOCH" --batch_size "$BATCH" \
    --marker "$MARKER" ${BENCH_ARGS:-} "$@" >>"$logs/$name.out" 2>&1 &
  RUNNER=$!
  runners=("$RUNNER")
  LAUNCHER=""
  local i=0
  while [ -z "$LAUNCHER" ] && ((i++ < 500)); do
    LAUNCHER=$(pgrep -P "$RUNNER" -x strata-launch || true)
    [ -n "$LAUNCHER" ] || sleep 0.01
  done
  [ -n "$LAUNCHER" ] || { echo "strata-launch did not start ($name)" >&2; exit 1; }
}

# wait_job: waits for the job started last; sets RC.
wait_job() {
  RC=0
  wait "$RUNNER" || RC=$?
  runners=()
}

# kill_worker2_at NAME LOG ITERATION: once the chief's step LOG reaches ITERATION, SIGKILL worker
# 2; sets KILL_TIME and KILLED.
kill_worker2_at() {
  local name=$1 log=$2 at=$3
  while (($(last_iteration "$log") < at)); do
    kill -0 "$RUNNER" 2>/dev/null || { echo "$name ended before step $at:" >&2; tail -20 "$logs/$name.out" >&2; exit 1; }
    sleep 0.02
  done
  KILLED=$(worker_pid "$LAUNCHER" 2)
  [ -n "$KILLED" ] || { echo "$name: no worker 2 to kill" >&2; exit 1; }
  KILL_TIME=$(now)
  kill -KILL "$KILLED"
  echo "   $name: killed worker 2 (pid $KILLED) at chief iteration $(last_iteration "$log")" >&2
}

# result FIELD OUT: FIELD of the chief's RESULT line in OUT (its last one).
result() {
  sed -n "s/^\[worker 0\] RESULT .*[ ]$1=\([^ ]*\).*/\1/p" "$2" | tail -1
}

RANDOM=$SEED
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((r = 1; r <= ROUNDS; r++)); do
  at=$((KILL_AT + RANDOM % BACKUP_FREQ))
  echo "== round $r of $ROUNDS: kill worker 2 after step $at of $TOTAL" >&2

  # (a) elastic
  name=elastic_$r
  steps=$logs/$name.steps.{task}
  start_job "$name" --elastic_min_workers 2 --max_restarts 1 -- --elastic_min_workers 2 \
    --step_sleep_ms "$SLEEP_MS" --step_log "$steps"
  kill_worker2_at "$name" "$logs/$name.steps.worker0" "$at"
  wait_job
  echo "   $name: job exited $RC; chief: $(grep '^\[worker 0\] RESULT' "$logs/$name.out" || echo 'no RESULT')" >&2
  echo "elastic $r $RC $KILL_TIME $KILLED 0 $logs/$name.steps.worker0 $logs/$name.steps.worker2" \
    "$(result accuracy "$logs/$name.out") $(result iterations "$logs/$name.out")" >>"$results"

  # (a') elastic, worker 2 not started again: the job goes on with 2 workers
  name=elastic_norestart_$r
  steps=$logs/$name.steps.{task}
  start_job "$name" --elastic_min_workers 2 -- --elastic_min_workers 2 \
    --step_sleep_ms "$SLEEP_MS" --step_log "$steps"
  kill_worker2_at "$name" "$logs/$name.steps.worker0" "$at"
  wait_job
  echo "   $name: job exited $RC; chief: $(grep '^\[worker 0\] RESULT' "$logs/$name.out" || echo 'no RESULT')" >&2
  echo "elastic_norestart $r $RC $KILL_TIME $KILLED 0 $logs/$name.steps.worker0 -" \
    "$(result accuracy "$logs/$name.out") $(result iterations "$logs/$name.out")" >>"$results"

  # (b) restart from BackupAndRestore
  name=restart_$r
  steps=$logs/$name.steps.{task}
  backup=$work/backup_$r
  rm -rf "$backup"
  cmd=(-- --step_sleep_ms "$SLEEP_MS" --step_log "$steps" --backup_dir "$backup"
       --backup_freq "$BACKUP_FREQ")
  start_job "$name" "${cmd[@]}"
  kill_worker2_at "$name" "$logs/$name.steps.worker0" "$at"
  wait_job
  first_rc=$RC
  restart_time=$(now)
  echo "   $name: job exited $first_rc after the kill; starting the same command again" >&2
  start_job "$name" "${cmd[@]}"
  wait_job
  echo "   $name: resumed job exited $RC; chief: $(grep '^\[worker 0\] RESULT' "$logs/$name.out" || echo 'no RESULT')" >&2
  [ "$first_rc" -ne 0 ] || echo "   $name: the killed job exited 0: the kill came too late?" >&2
  echo "restart $r $RC $KILL_TIME $KILLED $restart_time $logs/$name.steps.worker0 -" \
    "$(result accuracy "$logs/$name.out") $(result iterations "$logs/$name.out")" >>"$results"
done

if ((THROUGHPUT_STEPS > 0)); then
  tp_epochs=$(((THROUGHPUT_STEPS + STEPS_PER_EPOCH - 1) / STEPS_PER_EPOCH))
  for ((r = 1; r <= ROUNDS; r++)); do
    for mode in elastic plain; do
      name=throughput_${mode}_$r
      if [ "$mode" = elastic ]; then
        EPOCHS=$tp_epochs start_job "$name" --elastic_min_workers 2 -- --elastic_min_workers 2 \
          --step_log "$logs/$name.steps.{task}"
      else
        EPOCHS=$tp_epochs start_job "$name" -- --step_log "$logs/$name.steps.{task}"
      fi
      wait_job
      echo "throughput_$mode $r $RC $logs/$name.steps.worker0" >>"$results"
      echo "   $name: exited $RC" >&2
    done
  done
fi
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

"$PYTHON" - "$results" "$ROUNDS" "$TOTAL" "$BATCH" "$SLEEP_MS" "$BACKUP_FREQ" "$KILL_AT" <<'PY'
import statistics, sys
path, rounds, total, batch, sleep_ms, backup_freq, kill_at = sys.argv[1], *map(int, sys.argv[2:])

def steps(path):  # [(time, iteration, pid)] in file order
    out = []
    for line in open(path):
        f = line.split()
        if len(f) >= 6:
            out.append((float(f[0]), int(f[3]), int(f[5])))
    return out

rows = {"elastic": [], "elastic_norestart": [], "restart": []}
throughput = {"elastic": [], "plain": []}
problems = []
for line in open(path):
    f = line.split()
    if f[0].startswith("throughput_"):
        mode, rc, log = f[0][len("throughput_"):], int(f[2]), f[3]
        s = steps(log)
        if rc != 0 or len(s) < 40:
            problems.append(f"throughput {mode} round {f[1]}: exit {rc}, {len(s)} steps logged")
            continue
        t = [x[0] for x in s[20:]]
        throughput[mode].append((len(t) - 1) / (t[-1] - t[0]))
        continue
    mode, r, rc, kill, killed, restart, chief, w2, acc, its = f + [""] * (10 - len(f))
    r, rc, kill = int(r), int(rc), float(kill)
    s = steps(chief)
    before = [it for t, it, _ in s if t <= kill]
    after = [(t, it) for t, it, _ in s if t > kill]
    top = max(before) if before else 0
    new = [t for t, it in after if it > top]
    redone = sum(1 for t, it in after if it <= top)
    its_all = [it for _, it, _ in s]
    dup = len(its_all) - len(set(its_all))
    row = {"rc": rc, "at": top, "redone": redone,
           "next": (new[0] - kill) if new else None,
           "end": (s[-1][0] - kill) if s else None,
           "acc": float(acc) if acc else None, "its": int(its) if its else None,
           "dup": dup}
    if mode == "elastic_norestart":
        pass
    elif mode == "elastic":
        w = [t for t, _, pid in steps(w2) if pid != int(killed)]
        row["back"] = (w[0] - kill) if w else None
    else:
        row["teardown"] = float(restart) - kill
        second = [t for t, it in after if t > float(restart)]
        row["first_resumed"] = (second[0] - kill) if second else None
        resumed_from = min((it for t, it in after if t > float(restart)), default=None)
        row["resumed_from"] = resumed_from - 1 if resumed_from is not None else None
    if rc != 0:
        problems.append(f"{mode} round {r}: the job exited {rc}")
    if row["its"] != total:
        problems.append(f"{mode} round {r}: chief's optimizer iterations {row['its']}, expected {total}")
    if mode != "restart" and (dup or redone):
        problems.append(f"{mode} round {r}: {dup} iteration(s) logged twice by the chief")
    rows[mode].append(row)

def cell(xs, fmt="{:.2f}"):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "n/a"
    return f"{fmt.format(statistics.median(xs))} ({fmt.format(min(xs))}-{fmt.format(max(xs))})"

E, N, R = rows["elastic"], rows["elastic_norestart"], rows["restart"]
print(f"3 workers on loopback (strata-launch), MLP classifier, global batch {batch}, {total} steps, "
      f"{sleep_ms} ms sleep per step; worker 2 SIGKILLed after step {kill_at}+[0,{backup_freq}); "
      f"median (min-max) of {rounds} rounds")
w = 36
print(f"{'':<{w}} {'elastic, worker 2':>24} {'elastic, worker 2':>24} {'whole job restarted':>24}")
print(f"{'':<{w}} {'restarted (joins)':>24} {'not restarted':>24} {f'from backup (every {backup_freq})':>24}")
def line(label, key, fmt="{:.2f}", e=None, n=None, r=None):
    cells = []
    for rows_, over in ((E, e), (N, n), (R, r)):
        cells.append(over if over is not None else cell([x.get(key) for x in rows_], fmt))
    print(f"{label:<{w}} {cells[0]:>24} {cells[1]:>24} {cells[2]:>24}")
line("kill -> next new step (s)", "next")
line("steps redone", "redone", "{:.0f}")
line("kill -> worker 2 training again (s)", "back", n="n/a (left out)",
     r=cell([x.get("first_resumed") for x in R]))
line("kill -> failed job exited (s)", "teardown", e="n/a (goes on)", n="n/a (goes on)")
line("kill -> end of training (s)", "end")
line("chief's iterations at the end", "its", "{:.0f}")
line("final held-out accuracy", "acc", "{:.4f}")
line("job exit status", "rc", "{:.0f}", r="137, then " + cell([x["rc"] for x in R], "{:.0f}"))
print("kill -> next new step: to the chief's first completed step beyond every step completed "
      "before the kill; steps redone: steps completed again after the kill; restart: the same "
      "command started again the moment the failed job exited (no scheduling delay)")
if throughput["elastic"] or throughput["plain"]:
    te, tp = throughput["elastic"], throughput["plain"]
    print(f"no failure, no sleep: steps/s of the chief (steps 20..end), "
          f"elastic {cell(te, '{:.1f}')}, not elastic {cell(tp, '{:.1f}')}"
          + (f"; elastic / not elastic {statistics.median(te) / statistics.median(tp):.2f}x"
             if te and tp else ""))
for p in problems:
    print("PROBLEM:", p)
PY
