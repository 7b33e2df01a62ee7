#!/usr/bin/env bash
# Priority benchmark: a latency-critical inference service (test/bench/prio_service.py, ResNet-50,
# one request every 12 ms, open loop) beside batch trainings (test/bench/prio_train.py, GPT-2
# small), without gshare and under gshare with the service at a higher priority.
#
#   test/bench/priority.sh GSHARE_DIR          (GSHARE_DIR holds gshare and libgshare.so)
#
# Cases (CASES, in order):
#   alone    the service alone, bare;
#   bareN    N trainings bare, then the service bare once every training has logged MIN_STEPS
#            steps; the driver time-slices them;
#   gshareN  the same under a fresh daemon (sharing SHARING, [memory] engine ENGINE, quantum
#            QUANTUM): the trainings `gshare run --memory ENGINE -p 0 --name trainK`, the service
#            `gshare run --memory ENGINE -p 10 --name service`; `gshare status --json` once in
#            the middle of the service window (status_mid.json) and once after it. gshare0: the
#            service alone under the daemon (an MPS client of its server where [mps] is on).
# With trainings, they keep running AFTER_SECONDS after the service ends, then get SIGTERM
# (prio_train.py ends after its current step). TRAIN_STEPS must outlast that; a warning says
# when a training ended earlier.
# One line per case (stdout, summary.txt, the case's summary.txt):
#   case=<name> p50=<ms> p99=<ms> train_steps_per_s_during=<x> train_steps_per_s_outside=<y>
# p50, p99: the service's nearest-rank latencies (arrival to completion) over its window;
# during: the steps of all trainings whose log time falls in [window_start, window_end], per
# second of that window; outside: the sum over trainings of each one's rate from its 10th step
# to its last step before window_start. `-` where there is nothing to measure (no trainings, a
# run that failed).
#
# Env:
#   OUT             results go to $OUT/priority/<case>/ (default: a new folder
#                   ${TMPDIR:-/tmp}/gshare-priority.XXXXXX, kept and named at the end)
#   PYTHON          interpreter with torch, timm and transformers (default python3)
#   CASES           default "alone bare1 gshare1 bare3 gshare3"
#   SERVICE_SECONDS service window in seconds (default 20)
#   PERIOD_MS       time between the service's requests (default 12)
#   WARMUP          the service's back-to-back warm-up requests (default 50)
#   SERVICE_BATCH   images per request (default 8)
#   TRAIN_STEPS     steps per training (default 1500)
#   TRAIN_BATCH     sequences per training step (default 8: ~12 GiB per training)
#   TRAIN_ARGS      more of prio_train.py's options for every training (e.g. --context-only)
#   MIN_STEPS       steps each training logs before the service starts (default 20)
#   AFTER_SECONDS   how long the trainings run on after the service (default 5)
#   START_TIMEOUT   seconds allowed for the trainings to reach MIN_STEPS (default 240)
#   SERVICE_TIMEOUT seconds allowed to the service (default SERVICE_SECONDS + 180)
#   SHARING         the daemon's [scheduler] sharing (default auto)
#   ENGINE          memory engine (default swap); empty: no --memory and no [memory] table
#   QUANTUM         the daemon's quantum (default 20s)
#   GPU_LIMIT       the daemon's [memory] gpu_limit (default none): below the jobs' sum, the
#                   gshareN cases oversubscribe the GPU (the bareN ones are not limited)
#   IDLE_RELEASE, EARLY_RELEASE, STAGGER, HOST_BUDGET, LOG_LEVEL   written to the daemon's
#                   config when set
#   SERVICE_CPUS, TRAIN_CPUS   CPU lists (taskset -c) the service's and the trainings'
#                   interpreters run on (default: any CPU)
#   TRAIN_NICE      the trainings' nice value (nice -n; default: not changed)
#   TRAIN_GPUS, SERVICE_GPU   GPU indexes: the trainings', one per training in turn (e.g. "0 1":
#                   the first on GPU 0, the second on GPU 1, the third on GPU 0 ...), and the
#                   service's; `gshare run --gpu` in gshareN cases, CUDA_VISIBLE_DEVICES in the
#                   others (default: no GPU named; gshare's queue places the job)
# Output in $OUT/priority/<case>/: times.txt (epoch seconds of each event), service.{out,err},
# latencies.txt (ms per request), detail.txt (per request: latency, wall, CPU and GPU ms,
# prio_service.py --detail-out), train<K>.{out,err,log} (log: `step wall_time loss`),
# summary.txt; gshareN also config.toml, status_mid.json, status_end.json, daemon.log.
#   SERVICE         resnet (default: prio_service.py, SERVICE_BATCH, PERIOD_MS, WARMUP) or llm
#                   (llm_service.py: LLM_RATE requests/s, default 4; LLM_UTIL, its KV pool's
#                   --util, default 0.5; LLM_ARGS, more of its options): p50/p99 are then its
#                   TTFT's, and the line adds ttft_p99, tpot_p50, tpot_p99, itl_p99
#   SERVICE_ARGS    more of prio_service.py's options (resnet), e.g. "--ballast-fraction 0.92
#                   --ballast-free-at 14": the line then adds freed_s (when it gave the ballast
#                   back, s into the window), train_steps_per_s_after_free (the trainings' steps
#                   from 1 s after that to the window's end, per s) and p99_after_free /
#                   n_after_free (the service's requests arriving in that span)
#   ARRIVE_AFTER    when set (seconds), the trainings start that long after the service's
#                   window_start instead of before the service (a training arriving at a busy
#                   service); `outside` is then `-` and the line adds first_step_s, the first
#                   training's wait from its start to its first logged step (`-`: none),
#                   train_steps_per_s_after (the trainings' steps/s from 1 s after the
#                   window's end on, each over its own span, summed), for the ResNet service
#                   p99_before / n_before and p99_beside / n_beside (the p99 of the requests
#                   that arrived before the training did, and of those from its first step
#                   on, and their numbers), and for SERVICE=llm
#                   p99_after_arrival / n_after_arrival: the nearest-rank TTFT p99 (ms) of
#                   the requests sent from the arrival on, and their number
#   ARRIVE_PREPARED 1 (with ARRIVE_AFTER): the trainings start before the service and build
#                   their model on the CPU (prio_train.py --ready-file/--go-file; ~15-20 s of
#                   one CPU), the service starts once all are ready, and ARRIVE_AFTER s into its
#                   window they are let go: the arrival is their first CUDA call, not their
#                   interpreter's start (whose CPU start-up outlasts much of a 25 s window).
#                   times.txt then has train<K>_launch at the launch and train<K>_start at the go
#   PAUSE_PERIOD    when set (seconds), the trainings' processes are stopped (SIGSTOP) and
#                   continued (SIGCONT) in turns every PAUSE_PERIOD s through the service's
#                   window, starting with them running (`pause`/`resume` lines in times.txt), so
#                   that the same service process is measured beside them and alone, interleaved
#                   in one window; test/bench/phase_stats.py then prints a second line,
#                   `phases case=...` (shared and alone p50/p99 and their ratio, the trainings'
#                   rate while running ÷ before the window); `during` counts the stopped time too
# Each case's folder also keeps gpu_samples.csv: the GPU's SM and memory clocks, power, GPU and
# memory temperature, clock event reasons and SM and memory utilization every 250 ms while the
# service runs, gpu_apps.csv: the GPU's compute processes (pid, name, memory) every second
# (nvidia-smi, read only), cpu_topology.txt (which CPUs share a core: lscpu -e) and
# cpu_samples.txt (every 0.5 s, the busiest threads and the CPU each last ran on:
# cpu_sampler.py), since a launch-bound service is as fast as the CPU its thread gets.
# Cost (estimated): alone ~40 s, each bareN or gshareN ~60-90 s (start-ups ~15-25 s, MIN_STEPS,
# the service's start-up and window, AFTER_SECONDS): ~6 min for the default CASES.
# Exit: 0 when every case's service produced its result line, 1 otherwise, 2 on usage errors.
set -uo pipefail

me=priority
# shellcheck source=mem_common.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/mem_common.sh"
mem_setup "$@"

cases="${CASES:-alone bare1 gshare1 bare3 gshare3}"
seconds="${SERVICE_SECONDS:-20}"
period="${PERIOD_MS:-12}"
warmup="${WARMUP:-50}"
service_batch="${SERVICE_BATCH:-8}"
train_steps="${TRAIN_STEPS:-1500}"
train_batch="${TRAIN_BATCH:-8}"
min_steps="${MIN_STEPS:-20}"
after="${AFTER_SECONDS:-5}"
start_tmo="${START_TIMEOUT:-240}"
SHARING="${SHARING:-auto}"
ENGINE="${ENGINE-swap}"
quantum="${QUANTUM:-20s}"
service="${SERVICE:-resnet}"
[[ $service == resnet || $service == llm ]] || { say "SERVICE is resnet or llm, not '$service'"; exit 2; }
arrive_after="${ARRIVE_AFTER:-}"
[[ -z $arrive_after || $arrive_after =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
  { say "ARRIVE_AFTER must be a number of seconds, not '$arrive_after'"; exit 2; }
arrive_prepared="${ARRIVE_PREPARED:-}"
[[ -z $arrive_prepared || ($arrive_prepared == 1 && -n $arrive_after) ]] ||
  { say "ARRIVE_PREPARED is 1 and needs ARRIVE_AFTER"; exit 2; }
pause_period="${PAUSE_PERIOD:-}"
[[ -z $pause_period || $pause_period =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
  { say "PAUSE_PERIOD must be a number of seconds, not '$pause_period'"; exit 2; }
read -r -a llm_args <<<"${LLM_ARGS:-}"
read -r -a service_args <<<"${SERVICE_ARGS:-}"
for v in seconds min_steps after start_tmo train_steps train_batch warmup service_batch; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { say "$v must be a whole number, not '${!v}'"; exit 2; }
done
for c in $cases; do
  [[ $c == alone || $c =~ ^(bare[1-9][0-9]*|gshare(0|[1-9][0-9]*))$ ]] ||
    { say "unknown case '$c' (alone, bareN, gshareN)"; exit 2; }
done
svc_tmo="${SERVICE_TIMEOUT:-$((seconds + 180))}"
train_tmo=$((start_tmo + svc_tmo + after + 60))   # a safety net: the driver stops them earlier
mem_flag=()
[[ -n $ENGINE ]] && mem_flag=(--memory "$ENGINE")
read -r -a train_env <<<"${TRAIN_ENV:-}"
read -r -a service_env <<<"${SERVICE_ENV:-}"
# TRAIN_ENV is the trainings' own environment (inside `gshare run`: the shim's knobs);
# TRAIN_RUN_ENV their `gshare run`'s, which the daemon reads at launch (GSHARE_MPS=0).
read -r -a train_run_env <<<"${TRAIN_RUN_ENV:-}"
read -r -a train_args <<<"${TRAIN_ARGS:-}"
((${#train_env[@]})) && train_env=(env "${train_env[@]}")
((${#train_run_env[@]})) && train_run_env=(env "${train_run_env[@]}")
((${#service_env[@]})) && service_env=(env "${service_env[@]}")
svc_prefix=() train_prefix=()
for v in SERVICE_CPUS TRAIN_CPUS; do
  [[ -z ${!v:-} || ${!v} =~ ^[0-9][0-9,-]*$ ]] || { say "$v must be a CPU list, not '${!v}'"; exit 2; }
done
[[ -n ${SERVICE_CPUS:-} ]] && svc_prefix=(taskset -c "$SERVICE_CPUS")
[[ -n ${TRAIN_CPUS:-} ]] && train_prefix=(taskset -c "$TRAIN_CPUS")
[[ -z ${TRAIN_NICE:-} || ${TRAIN_NICE} =~ ^-?[0-9]+$ ]] || { say "TRAIN_NICE must be a number, not '$TRAIN_NICE'"; exit 2; }
[[ -n ${TRAIN_NICE:-} ]] && train_prefix=(nice -n "$TRAIN_NICE" "${train_prefix[@]}")

if [[ -n ${OUT:-} ]]; then
  mkdir -p "$OUT/$me" && res="$(cd "$OUT/$me" && pwd)" || exit 2
else
  res="$(mktemp -d "${TMPDIR:-/tmp}/gshare-priority.XXXXXX")" || exit 2
fi
{
  echo "# priority.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) host=$(hostname) gshare=$gshare"
  echo "# gpu: $(gpu_line)"
  echo "# cases=$cases service_seconds=$seconds period_ms=$period warmup=$warmup service_batch=$service_batch train_steps=$train_steps train_batch=$train_batch min_steps=$min_steps after_s=$after"
  echo "# train_env=${TRAIN_ENV:-} train_run_env=${TRAIN_RUN_ENV:-} train_args=${TRAIN_ARGS:-} service_env=${SERVICE_ENV:-} service_cpus=${SERVICE_CPUS:-any} train_cpus=${TRAIN_CPUS:-any} train_nice=${TRAIN_NICE:-unchanged}"
  echo "# service=$service llm_rate=${LLM_RATE:-4} llm_util=${LLM_UTIL:-0.5} llm_args=${LLM_ARGS:-} arrive_after=${arrive_after:-none}"
  echo "# daemon: sharing=$SHARING engine=${ENGINE:-none} quantum=$quantum gpu_limit=${GPU_LIMIT:-none} idle_release=${IDLE_RELEASE:-default} early_release=${EARLY_RELEASE:-default} stagger=${STAGGER:-default}"
} >"$res/summary.txt"

# A daemon left by an earlier run with the default configuration is not ours to use: stop it.
timeout 30 "$gshare" daemon stop >/dev/null 2>&1 || true

snooze() { sleep "$1" & wait "$!"; }   # a sleep that a TERM or INT cuts short

log_steps() { [[ -f $1 ]] && wc -l <"$1" || echo 0; }

# train_pids: the trainings' interpreters (the processes running prio_train.py whose executable
# is a python; not their `timeout` or `gshare run`).
train_pids() {
  local p
  for p in $(pgrep -f "$bench/prio_train.py"); do
    [[ $(readlink -f "/proc/$p/exe" 2>/dev/null) == *python* ]] && echo "$p"
  done
}

# signal_trainings SIG: sends SIG to the trainings' interpreters.
signal_trainings() {
  local pids
  mapfile -t pids < <(train_pids)
  ((${#pids[@]})) && kill "-$1" "${pids[@]}" 2>/dev/null
  return 0
}

# pause_turns PERIOD SERVICE_PID TIMES: stops and continues the trainings every PERIOD s while
# the service runs, logging `pause`/`resume`; they run again when it ends (or on TERM).
pause_turns() {
  local period=$1 svc=$2 times=$3 stopped=0
  trap 'signal_trainings CONT; exit 0' TERM
  while kill -0 "$svc" 2>/dev/null; do
    snooze "$period"
    kill -0 "$svc" 2>/dev/null || break
    if ((stopped)); then
      signal_trainings CONT
      echo "resume $(now)" >>"$times"
      stopped=0
    else
      signal_trainings STOP
      echo "pause $(now)" >>"$times"
      stopped=1
    fi
  done
  signal_trainings CONT
}

job_forget() {   # job_forget PID: drops an already waited-for job from job_pids/job_keys
  local i
  for i in "${!job_pids[@]}"; do
    [[ ${job_pids[$i]} == "$1" ]] && unset 'job_pids[i]' 'job_keys[i]'
  done
  job_pids=("${job_pids[@]}")
  job_keys=("${job_keys[@]}")
}

# summarize CASE DIR N: the case's summary line, from service.out and train1..N.log.
summarize() {
  BENCH_DIR="$bench" SERVICE_PERIOD_MS="$period" "$python" - "$@" <<'EOF'
import json, os, sys

sys.path.insert(0, os.environ["BENCH_DIR"])
from phase_stats import rate_before  # noqa: E402  (this folder's: the trainings' rate before)
from prio_service import nearest_rank  # noqa: E402  (this folder's percentile)

case, d, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
svc, marks = None, {}
try:
    for line in open(f"{d}/service.out"):
        if line.startswith("{"):
            try:
                svc = json.loads(line)
            except ValueError:
                pass
        elif line.startswith(("window_start ", "window_end ", "ballast_freed ")):
            key, value = line.split()
            marks[key] = float(value)
except OSError:
    pass
if svc:
    marks.update(window_start=svc["window_start"], window_end=svc["window_end"])
ws, we, freed = marks.get("window_start"), marks.get("window_end"), marks.get("ballast_freed")


def steps(k):
    out = []
    try:
        for line in open(f"{d}/train{k}.log"):
            f = line.split()
            if len(f) == 3:
                out.append((int(f[0]), float(f[1])))
    except (OSError, ValueError):
        pass
    return out


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


during = outside = None
if n > 0 and ws is not None and we is not None and we > ws:
    logs = [steps(k) for k in range(1, n + 1)]
    during = sum(1 for log in logs for _, t in log if ws <= t <= we) / (we - ws)
    outside = rate_before(logs, ws)
extra = ""
if svc and svc.get("shape") == "llm":
    extra += "".join(f" {k}={fmt(svc.get(k + '_ms'))}" for k in ("ttft_p99", "tpot_p50", "tpot_p99", "itl_p99"))
    extra += f" free_rose={svc.get('free_rose')}"
def p99_of(vals):
    return nearest_rank(sorted(vals), 99) if vals else None

if len(sys.argv) > 4 and n > 0:  # trainings that arrived after the service: their wait
    log = steps(1)
    extra += f" first_step_s={fmt(log[0][1] - float(sys.argv[4]) if log else None)}"
    # Their rate once the service has ended (from 1 s after its window on, each training's
    # steps over its own span, summed): what a cap fixed at their start still costs them.
    rates = []
    for lg in (steps(k) for k in range(1, n + 1)):
        late = [t for _, t in lg if we is not None and t >= we + 1.0]
        if len(late) >= 2 and late[-1] > late[0]:
            rates.append((len(late) - 1) / (late[-1] - late[0]))
    extra += f" train_steps_per_s_after={fmt(sum(rates) if rates else None)}"
    # The LLM service's requests from the trainings' arrival on (its detail.txt: arrival s
    # since the window's start, TTFT ms, TPOT ms): what the arrival can have changed.
    # The ResNet service's requests before the training arrived and from its first step on
    # (request i arrives i periods after the window's start): the same process alone and
    # beside a running training.
    if svc and svc.get("shape") != "llm" and log and ws is not None:
        period_s = float(os.environ["SERVICE_PERIOD_MS"]) / 1000.0
        try:
            lat = [float(x) for x in open(f"{d}/latencies.txt") if x.strip()]
        except (OSError, ValueError):
            lat = []
        beside = [v for i, v in enumerate(lat) if ws + i * period_s >= log[0][1]]
        before = [v for i, v in enumerate(lat) if ws + i * period_s < float(sys.argv[4])]
        extra += (f" p99_before={fmt(p99_of(before))} n_before={len(before)}"
                  f" p99_beside={fmt(p99_of(beside))} n_beside={len(beside)}")
    after = []
    try:
        if not (svc and svc.get("shape") == "llm"):
            raise OSError("no arrival times")
        for line in open(f"{d}/detail.txt"):
            f = line.split()
            if len(f) >= 2 and ws is not None and float(f[0]) >= float(sys.argv[4]) - ws:
                after.append(float(f[1]))
    except (OSError, ValueError):
        after = []
    extra += f" p99_after_arrival={fmt(p99_of(after))} n_after_arrival={len(after)}"
if freed is not None and we is not None and we > freed + 1.0 and ws is not None:
    # The service gave its ballast back at `freed` (SERVICE_ARGS --ballast-free-at): from 1 s
    # later to the window's end, the trainings' steps/s and the service's p99 (request i
    # arrives i periods after the window's start).
    lo = freed + 1.0
    late_steps = sum(1 for k in range(1, n + 1) for _, t in steps(k) if lo <= t <= we)
    period_s = float(os.environ["SERVICE_PERIOD_MS"]) / 1000.0
    try:
        lat = [float(x) for x in open(f"{d}/latencies.txt") if x.strip()]
    except (OSError, ValueError):
        lat = []
    late_lat = [v for i, v in enumerate(lat) if ws + i * period_s >= lo]
    extra += (f" freed_s={fmt(freed - ws)} train_steps_per_s_after_free="
              f"{fmt(late_steps / (we - lo))} p99_after_free={fmt(p99_of(late_lat))}"
              f" n_after_free={len(late_lat)}")
print(f"case={case} p50={fmt(svc and svc['p50_ms'])} p99={fmt(svc and svc['p99_ms'])} "
      f"train_steps_per_s_during={fmt(during)} train_steps_per_s_outside={fmt(outside)}{extra}")
EOF
}

# run_case CASE: one case, its line on stdout. Returns 1 when the service gave no result.
run_case() {
  local c=$1 n=0 mode=bare k d times svc_pid rc i alive line
  case $c in
    alone) ;;
    bare*) n=${c#bare} ;;
    gshare*) n=${c#gshare} mode=gshare ;;
  esac
  d="$res/$c"
  mkdir -p "$d"
  rm -rf "${d:?}"/*
  times="$d/times.txt"
  echo "# key epoch_seconds [rc]" >"$times"

  local tpre=() spre=()
  if [[ $mode == gshare ]]; then
    mkdir -p "$work/$c"
    write_config "$d/config.toml" "$work/$c" "$quantum" "${GPU_LIMIT:-}"
    if ! daemon_up "$d/config.toml"; then
      echo "daemon_failed $(now)" >>"$times"
      summarize "$c" "$d" "$n" | tee "$d/summary.txt" | tee -a "$res/summary.txt"
      return 1
    fi
    tpre=("$gshare" --config "$d/config.toml" run "${mem_flag[@]}" -p 0)
    spre=("$gshare" --config "$d/config.toml" run "${mem_flag[@]}" -p 10 --name service --)
  fi

  start_trainings() {
    local k name gpus g
    read -r -a gpus <<<"${TRAIN_GPUS:-}"
    for ((k = 1; k <= n; k++)); do
      name=()
      [[ $mode == gshare ]] && name=(--name "train$k" --)
      if ((${#gpus[@]})); then
        g=${gpus[$(((k - 1) % ${#gpus[@]}))]}
        if [[ $mode == gshare ]]; then
          name=(--gpu "$g" "${name[@]}")
        else
          name=(env CUDA_VISIBLE_DEVICES="$g")
        fi
      fi
      local prep=()
      [[ -n $arrive_prepared ]] && prep=(--ready-file "$d/train$k.ready" --go-file "$d/go")
      echo "train${k}_${arrive_prepared:+launch}${arrive_prepared:-start} $(now)" >>"$times"
      job_start "train$k" "$d/train$k.out" "$train_tmo" "${train_run_env[@]}" "${tpre[@]}" "${name[@]}" \
        "${train_env[@]}" "${train_prefix[@]}" "$python" "$bench/prio_train.py" --steps "$train_steps" --batch "$train_batch" \
        --seed "$k" --log "$d/train$k.log" "${prep[@]}" "${train_args[@]}"
    done
  }
  [[ -z $arrive_after || -n $arrive_prepared ]] && start_trainings

  # The service starts once every training has logged MIN_STEPS steps, or, for prepared
  # arrivals, has built its model.
  training_ready() {
    if [[ -n $arrive_prepared ]]; then
      [[ -e $d/train$1.ready ]]
    else
      (($(log_steps "$d/train$1.log") >= min_steps))
    fi
  }
  if ((n > 0)) && [[ -z $arrive_after || -n $arrive_prepared ]]; then
    local what="logged $min_steps steps" mark=trainings_ready
    [[ -n $arrive_prepared ]] && what="built its model" mark=trainings_prepared
    say "$c: $n training(s) started; waiting until each has $what"
    local deadline=$((SECONDS + start_tmo)) ready
    while :; do
      ready=0
      for ((k = 1; k <= n; k++)); do training_ready "$k" && ready=$((ready + 1)); done
      ((ready == n)) && break
      if (($(jobs_alive) < n)) || ((SECONDS >= deadline)); then
        say "$c: only $ready of $n trainings $what; case skipped"
        for p in "${job_pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
        jobs_wait "$c" "$times"
        [[ $mode == gshare ]] && { daemon_down; cp "$work/$c/state/daemon.log" "$d/" 2>/dev/null; }
        summarize "$c" "$d" "$n" | tee "$d/summary.txt" | tee -a "$res/summary.txt"
        return 1
      fi
      snooze 0.5
    done
    echo "$mark $(now)" >>"$times"
  fi

  say "$c: service (${seconds} s, a request every ${period} ms)"
  echo "service_start $(now)" >>"$times"
  local scmd=("${svc_prefix[@]}" "$python" "$bench/prio_service.py" --period-ms "$period"
    --warmup "$warmup" --batch "$service_batch" "${service_args[@]}")
  [[ $service == llm ]] && scmd=("${svc_prefix[@]}" "$python" "$bench/llm_service.py"
    --rate "${LLM_RATE:-4}" --util "${LLM_UTIL:-0.5}" "${llm_args[@]}")
  # SERVICE_ENV before `gshare run`: the job's environment is the one `gshare run` has.
  if [[ -n ${SERVICE_GPU:-} ]]; then
    if [[ $mode == gshare ]]; then
      spre=("${spre[@]:0:${#spre[@]}-1}" --gpu "$SERVICE_GPU" --)
    else
      scmd=(env CUDA_VISIBLE_DEVICES="$SERVICE_GPU" "${scmd[@]}")
    fi
  fi
  job_start service "$d/service.out" "$svc_tmo" "${service_env[@]}" "${spre[@]}" "${scmd[@]}" \
    --seconds "$seconds" --out "$d/latencies.txt" --detail-out "$d/detail.txt"
  svc_pid=${job_pids[-1]}
  # What the GPU's clocks did meanwhile (read only): a slow stretch of the service that its
  # neighbours do not explain may be the GPU slowing itself down (power, heat).
  timeout "$svc_tmo" nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,temperature.memory,clocks_event_reasons.active,utilization.gpu,utilization.memory \
    --format=csv,noheader,nounits -lms 250 >"$d/gpu_samples.csv" 2>&1 &
  local sampler=$!
  # Which processes hold a context meanwhile: one outside the MPS server time-slices with all of
  # its clients at once.
  timeout "$svc_tmo" nvidia-smi --query-compute-apps=timestamp,pid,process_name,used_memory \
    --format=csv,noheader,nounits -l 1 >"$d/gpu_apps.csv" 2>&1 &
  local apps_sampler=$!
  lscpu -e >"$d/cpu_topology.txt" 2>&1
  timeout "$svc_tmo" "$python" "$bench/cpu_sampler.py" --period 0.5 >"$d/cpu_samples.txt" 2>&1 &
  local cpu_sampler=$!
  while kill -0 "$svc_pid" 2>/dev/null && ! grep -q '^window_start ' "$d/service.out"; do
    snooze 0.2
  done
  local arrived="" turns=""
  if [[ -n $pause_period ]] && ((n > 0)) && [[ -z $arrive_after ]]; then
    pause_turns "$pause_period" "$svc_pid" "$times" &
    turns=$!
  fi
  if [[ -n $arrive_after ]] && ((n > 0)) && kill -0 "$svc_pid" 2>/dev/null; then
    snooze "$arrive_after"
    arrived=$(now)
    say "$c: $n training(s) arrive ${arrive_after} s into the service's window"
    if [[ -n $arrive_prepared ]]; then
      : >"$d/go"
      for ((k = 1; k <= n; k++)); do echo "train${k}_start $arrived" >>"$times"; done
    else
      start_trainings
    fi
  fi
  if [[ $mode == gshare ]] && kill -0 "$svc_pid" 2>/dev/null; then
    snooze "$(awk -v s="$seconds" -v a="${arrive_after:-0}" 'BEGIN { print (s - a) / 2 }')"
    status_json >"$d/status_mid.json"
    timeout 10 "$gshare" --config "$daemon_cfg" queue >"$d/queue_mid.txt" 2>&1
    echo "status_mid $(now)" >>"$times"
  fi
  wait "$svc_pid"
  rc=$?
  echo "service_end $(now) $rc" >>"$times"
  job_forget "$svc_pid"
  kill "$sampler" "$apps_sampler" "$cpu_sampler" 2>/dev/null
  wait "$sampler" "$apps_sampler" "$cpu_sampler" 2>/dev/null
  if [[ -n $turns ]]; then
    kill -TERM "$turns" 2>/dev/null
    wait "$turns" 2>/dev/null
    signal_trainings CONT
  fi
  ((rc == 0)) || { say "$c: service exit $rc"; tail -3 "$d/service.err" | sed 's/^/  | /' >&2; }

  if ((n > 0)); then
    snooze "$after"
    alive=$(jobs_alive)
    ((alive == n)) || say "$c: warning: $((n - alive)) training(s) ended before the service's end + ${after} s (raise TRAIN_STEPS)"
    echo "trainings_stop $(now)" >>"$times"
    for i in "${job_pids[@]}"; do kill -TERM "$i" 2>/dev/null; done
    jobs_wait "$c" "$times"
  fi
  if [[ $mode == gshare ]]; then
    status_json >"$d/status_end.json"
    daemon_down
    cp "$work/$c/state/daemon.log" "$d/daemon.log" 2>/dev/null || say "$c: no daemon log"
    cp "$work/$c/state/mps/0/log/"*.log "$d/" 2>/dev/null
    for i in "$work/$c/state/mps/"*/; do   # the other GPUs' servers, in mps<index>/
      [[ $(basename "$i") != 0 && -d $i/log ]] || continue
      mkdir -p "$d/mps$(basename "$i")" && cp "$i/log/"*.log "$d/mps$(basename "$i")/" 2>/dev/null
    done
  fi

  line=$(summarize "$c" "$d" "$n" ${arrived:+"$arrived"})
  echo "$line" | tee "$d/summary.txt" | tee -a "$res/summary.txt"
  if [[ -n $turns ]]; then
    "$python" "$bench/phase_stats.py" "$d" --period-ms "$period" | tee -a "$d/summary.txt" "$res/summary.txt"
  fi
  [[ $line != *" p50=- "* ]]
}

status=0
for c in $cases; do
  run_case "$c" || status=1
done
say "results in $res"
exit "$status"
