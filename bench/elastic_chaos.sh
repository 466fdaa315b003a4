#!/usr/bin/env bash
# Chaos test of elastic MultiWorkerMirroredStrategy (issue 28): a job of about DURATION seconds
# on 3 workers (strata-launch --workers 3: worker 0 is the chief, hosts the coordination service
# and is never killed) with --elastic_min_workers 2 --max_restarts 50, and KILLS SIGKILLs of
# worker 1 or worker 2 at random moments spread over the run; the launcher starts each killed
# worker again and it joins the running job. Before it, the same job without failures (same
# command, same steps) gives the reference. PASS when:
#   - the chaotic job exits 0;
#   - the chief's final held-out accuracy is within 0.5 points of the reference's;
#   - the chief's optimizer iterations equal the job's steps, and its step log holds every
#     iteration 1..steps exactly once (no step applied twice, none lost);
#   - every worker still running at the end finished with the chief's accuracy and iterations.
# A kill never takes the job below 2 members: worker w is a candidate only while the other
# non-chief worker is in the job (its current process has completed a step); so a worker still
# joining after its restart is the one killed when the next kill comes before it is in: about
# JOIN_KILL_PCT (25) percent of the kills follow the one before within 0.2-1.5 s for that.
#   bench/elastic_chaos.sh                       # ~3 minutes of chaos, 20 kills
#   DURATION=60 KILLS=6 bench/elastic_chaos.sh   # a short one
# Settings: DURATION (180 s), KILLS (20), JOIN_KILL_PCT (25), SLEEP_MS (50 ms of sleep per step), STEPS_PER_EPOCH
# (100), BATCH (96), MAX_RESTARTS (50), SEED (1: the kill times and targets), BENCH_ARGS (more
# strata_elastic_bench flags), LOG_DIR (keeps the outputs and step logs).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${STRATA_BUILD_DIR:-build}
BENCH=$BUILD/bench/strata_elastic_bench
LAUNCH=$BUILD/apps/strata_launch/strata-launch
DURATION=${DURATION:-180}
KILLS=${KILLS:-20}
SLEEP_MS=${SLEEP_MS:-50}
STEPS_PER_EPOCH=${STEPS_PER_EPOCH:-100}
BATCH=${BATCH:-96}
MAX_RESTARTS=${MAX_RESTARTS:-50}
JOIN_KILL_PCT=${JOIN_KILL_PCT:-25}
SEED=${SEED:-1}
PYTHON=${PYTHON:-python3}
[ -x "$BENCH" ] && [ -x "$LAUNCH" ] ||
  flock /tmp/strata-build.lock env STRATA_TARGET="strata_elastic_bench strata-launch" scripts/build
work=$(mktemp -d)
logs=${LOG_DIR:-$work}
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
MARKER=elastic_chaos.$$  # on every task's command line: finds what this script started
export STRATA_NUM_THREADS=1 OMP_NUM_THREADS=1

runner=""
cleanup() {
  local p
  [ -z "$runner" ] || kill -TERM "$runner" 2>/dev/null || true
  sleep 1
  for p in $(pgrep -f -- "--marker $MARKER" || true); do kill -KILL "$p" 2>/dev/null || true; done
  [ -n "${LOG_DIR:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }
now_ms() { date +%s%3N; }

worker_pid() {  # LAUNCHER INDEX: the pid of that worker's current process, or nothing
  local c
  for c in $(pgrep -P "$1" || true); do
    if tr '\0' '\n' <"/proc/$c/environ" 2>/dev/null | grep -Eq "^TF_CONFIG=.*\"index\": *$2[,}]"; then
      echo "$c"
      return
    fi
  done
}

last_iteration() {
  local it
  it=$(tail -n 1 "$1" 2>/dev/null | awk 'NF >= 6 {print $4}')
  echo "${it:-0}"
}

# start_job NAME EPOCHS [LAUNCHER FLAGS...]: the elastic job in the background (under timeout);
# sets runner and launcher.
start_job() {
  local name=$1 epochs=$2
  shift 2
  timeout -k 10 "$run_timeout" "$LAUNCH" --workers 3 --elastic_min_workers 2 "$@" -- "$BENCH" \
    --elastic_min_workers 2 --epochs "$epochs" --steps_per_epoch "$STEPS_PER_EPOCH" \
    --batch_size "$BATCH" --step_sleep_ms "$SLEEP_MS" --step_log "$logs/$name.steps.{task}" \
    --marker "$MARKER" ${BENCH_ARGS:-} >"$logs/$name.out" 2>&1 &
  runner=$!
  launcher=""
  local i=0
  while [ -z "$launcher" ] && ((i++ < 500)); do
    launcher=$(pgrep -P "$runner" -x strata-launch || true)
    [ -n "$launcher" ] || sleep 0.01
  done
  [ -n "$launcher" ] || { echo "strata-launch did not start ($name)" >&2; exit 1; }
}

wait_job() {
  rc=0
  wait "$runner" || rc=$?
  runner=""
}

chief_result() {  # FIELD OUT
  sed -n "s/^\[worker 0\] RESULT .*[ ]$1=\([^ ]*\).*/\1/p" "$2" | tail -1
}

# Steps/s of the chief over a step log, past its first 10 steps.
rate_of() {
  awk 'NF >= 6 && $5 == "worker0" {n++; if (n == 11) t0 = $1; if (n > 11) {t1 = $1; k = n - 11}}
       END {if (k > 0) printf "%.3f\n", k / (t1 - t0); else print 0}' "$1"
}

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
# 1. Calibration: how many steps make DURATION seconds on this machine now.
run_timeout=300
start_job calibrate 1
wait_job
[ "$rc" -eq 0 ] || { echo "the calibration job failed ($rc):" >&2; tail -20 "$logs/calibrate.out" >&2; exit 1; }
rate=$(rate_of "$logs/calibrate.steps.worker0")
epochs=$("$PYTHON" -c "import sys; print(max(1, round($DURATION * $rate / $STEPS_PER_EPOCH)))")
steps=$((epochs * STEPS_PER_EPOCH))
run_timeout=$((DURATION * 4 + 300))
echo "calibration: $rate steps/s -> $epochs epochs x $STEPS_PER_EPOCH steps = $steps steps" >&2

# 2. The reference: the same job without failures.
t0=$(now)
start_job reference "$epochs"
wait_job
ref_seconds=$("$PYTHON" -c "print(f'{$(now) - $t0:.1f}')")
[ "$rc" -eq 0 ] || { echo "the reference job failed ($rc):" >&2; tail -20 "$logs/reference.out" >&2; exit 1; }
ref_acc=$(chief_result accuracy "$logs/reference.out")
ref_its=$(chief_result iterations "$logs/reference.out")
echo "reference: exit 0 in $ref_seconds s, accuracy $ref_acc, iterations $ref_its" >&2

# 3. The chaotic job.
kills=$logs/kills
: >"$kills"
t0=$(now)
start_job chaos "$epochs" --max_restarts "$MAX_RESTARTS"
chief_log=$logs/chaos.steps.worker0
# Kill i at a random moment of the i-th of KILLS equal slices of 90% of the expected run.
RANDOM=$SEED
t0_ms=$("$PYTHON" -c "print(int($t0 * 1000))")
span_ms=$("$PYTHON" -c "print(int($ref_seconds * 900))")
joined() {  # WORKER PID: that process has completed a step
  [ -n "$2" ] && grep -q " $2\$" "$logs/chaos.steps.worker$1" 2>/dev/null
}
done_kills=0
prev_kill_ms=0
for ((i = 0; i < KILLS; i++)); do
  at_ms=$((t0_ms + span_ms * (i * 32768 + 3277 + 8 * RANDOM / 10) / 32768 / KILLS))
  # Some kills follow the one before within 0.2-1.5 s: the restarted worker is then still
  # starting or joining (a kill mid-join).
  if ((i > 0 && RANDOM % 100 < JOIN_KILL_PCT)); then
    at_ms=$((prev_kill_ms + 200 + RANDOM % 1300))
  fi
  while (($(now_ms) < at_ms)); do
    kill -0 "$runner" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$runner" 2>/dev/null || { echo "the job ended before kill $((i + 1))" >&2; break; }
  target=""
  deadline=$((SECONDS + 60))
  while [ -z "$target" ] && ((SECONDS < deadline)); do
    p1=$(worker_pid "$launcher" 1)
    p2=$(worker_pid "$launcher" 2)
    candidates=()
    if joined 2 "$p2" && [ -n "$p1" ]; then candidates+=(1); fi
    if joined 1 "$p1" && [ -n "$p2" ]; then candidates+=(2); fi
    if ((${#candidates[@]} > 0)); then
      target=${candidates[$((RANDOM % ${#candidates[@]}))]}
    else
      sleep 0.1
      kill -0 "$runner" 2>/dev/null || break
    fi
  done
  [ -n "$target" ] || { echo "kill $((i + 1)): no worker can be killed (neither is in the job)" >&2; continue; }
  if [ "$target" = 1 ]; then pid=$p1; else pid=$p2; fi
  state=member
  joined "$target" "$pid" || state=joining
  kill_time=$(now)
  prev_kill_ms=$(now_ms)
  kill -KILL "$pid" 2>/dev/null || { echo "kill $((i + 1)): worker $target (pid $pid) was gone" >&2; continue; }
  done_kills=$((done_kills + 1))
  it=$(last_iteration "$chief_log")
  echo "$kill_time $target $pid $state $it" >>"$kills"
  printf '   kill %2d at %6.1f s: worker %s (pid %s, %s), chief at iteration %s\n' "$((i + 1))" \
    "$("$PYTHON" -c "print($kill_time - $t0)")" "$target" "$pid" "$state" "$it" >&2
done
wait_job
chaos_seconds=$("$PYTHON" -c "print(f'{$(now) - $t0:.1f}')")
echo "chaos job: exit $rc in $chaos_seconds s" >&2
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

"$PYTHON" - "$logs" "$rc" "$steps" "$ref_acc" "$ref_its" "$ref_seconds" "$chaos_seconds" "$KILLS" \
  "$done_kills" <<'PY'
import re, statistics, sys
logs, rc, steps, ref_acc, ref_its, ref_s, chaos_s, kills, done_kills = sys.argv[1:]
rc, steps, ref_its, kills, done_kills = int(rc), int(steps), int(ref_its), int(kills), int(done_kills)
ref_acc, ref_s, chaos_s = float(ref_acc), float(ref_s), float(chaos_s)
out = open(f"{logs}/chaos.out").read()
results = {}
for m in re.finditer(r"^\[worker (\d)\] RESULT (.*)$", out, re.M):
    results.setdefault(int(m.group(1)), []).append(dict(kv.split("=") for kv in m.group(2).split()))
restarts = len(re.findall(r"restarting it \(restart", out))

def steps_of(path):
    rows = []
    try:
        for line in open(path):
            f = line.split()
            if len(f) >= 6:
                rows.append((float(f[0]), int(f[3]), int(f[5])))
    except FileNotFoundError:
        pass
    return rows

chief = steps_of(f"{logs}/chaos.steps.worker0")
its = [it for _, it, _ in chief]
dups = sorted({i for i in its if its.count(i) > 1}) if len(its) < 200000 else []
missing = sorted(set(range(1, steps + 1)) - set(its))
kill_rows = [l.split() for l in open(f"{logs}/kills")]
recover, joins = [], []
for t, w, pid, state, _ in kill_rows:
    t = float(t)
    nxt = [s for s, _, _ in chief if s > t]
    if nxt:
        recover.append(nxt[0] - t)
    back = [s for s, _, p in steps_of(f"{logs}/chaos.steps.worker{w}") if s > t and p != int(pid)]
    if back:
        joins.append(back[0] - t)
gaps = [b[0] - a[0] for a, b in zip(chief, chief[1:])]
c = results.get(0, [{}])[-1]
acc = float(c["accuracy"]) if "accuracy" in c else None
iterations = int(c["iterations"]) if "iterations" in c else None

def med(xs):
    return f"median {statistics.median(xs):.2f} s, max {max(xs):.2f} s" if xs else "n/a"

print(f"elastic chaos: 3 workers (worker 0 the chief), --elastic_min_workers 2 --max_restarts 50, "
      f"{steps} steps of global batch; reference {ref_s:.0f} s, chaotic job {chaos_s:.0f} s")
print(f"kills: {done_kills} of {kills} done "
      f"({sum(1 for r in kill_rows if r[3] == 'joining')} of a worker still joining), "
      f"{restarts} restarts by strata-launch; chief: reformations={c.get('reformations')} "
      f"synchronizations={c.get('synchronizations')} taken_over={c.get('taken_over')} "
      f"steps={c.get('steps')}")
print(f"kill -> chief's next step: {med(recover)}; kill -> the restarted worker's first step: "
      f"{med(joins)} ({len(joins)} of {len(kill_rows)}); longest pause between chief steps "
      f"{max(gaps) if gaps else 0:.2f} s")
checks = []
checks.append((rc == 0, f"job exit status {rc} (want 0)"))
checks.append((acc is not None and abs(acc - ref_acc) <= 0.005,
               f"final accuracy {acc} vs failure-free {ref_acc:.4f} "
               f"(difference {abs(acc - ref_acc) * 100 if acc is not None else float('nan'):.2f} points, "
               f"want <= 0.5)"))
checks.append((iterations == steps and ref_its == steps,
               f"optimizer iterations {iterations} (reference {ref_its}), steps {steps}"))
checks.append((not dups and not missing and len(its) == steps,
               f"chief's step log: {len(its)} steps, {len(dups)} iteration(s) logged twice"
               f"{' ' + str(dups[:10]) if dups else ''}, {len(missing)} missing"
               f"{' ' + str(missing[:10]) if missing else ''}"))
others = []
ok = True
for w in (1, 2):
    r = results.get(w)
    if not r:
        others.append(f"worker {w}: no RESULT")
        ok = False
        continue
    last = r[-1]
    same = last.get("iterations") == str(steps) and last.get("accuracy") == c.get("accuracy")
    ok = ok and same
    others.append(f"worker {w}: accuracy {last.get('accuracy')} iterations {last.get('iterations')}")
checks.append((ok, "final workers agree with the chief: " + "; ".join(others)))
checks.append((done_kills == kills, f"{done_kills} of {kills} kills done"))
for good, text in checks:
    print(("PASS " if good else "FAIL ") + text)
sys.exit(0 if all(g for g, _ in checks) else 1)
PY
