#!/usr/bin/env bash
# Sharing paths on one GPU: the driver's time-slicing, MPS, MPS client priority, gshare, and
# gshare with its jobs as MPS clients, measured side by side in one call (the basis for
# choosing gshare's shared-mode backend: docs/benchmarks.md, "Sharing paths on the H200").
#
#   test/bench/share_paths.sh GSHARE_DIR        (GSHARE_DIR holds gshare and libgshare.so)
#
# PARTS (default "pair service"):
#   pair     two trainings that fit together: GPT-2 small (prio_train.py, STEPS_GPT steps,
#            batch 8 x 1024, bf16 autocast) and ResNet-50 (share_cnn.py, STEPS_CNN steps,
#            batch 128, bf16 autocast). First each alone, bare, one after the other (alone_gpt,
#            alone_cnn: wall seconds, start-up included); then both started at once under each
#            of PAIR_CASES (default "bare mps gshare gmps"):
#              bare    no MPS, no gshare: the driver time-slices the two contexts;
#              mps     an MPS control daemon of our own is up; both are its clients;
#              gshare  both under `gshare run --memory ENGINE` of a fresh daemon (sharing auto,
#                      [mps] off);
#              gmps    the MPS daemon up AND both under `gshare run` ([mps] off: does the shim
#                      work over MPS, and at what speed);
#              gsmps   both under `gshare run` with gshare's MPS backend ([mps] auto).
#            Per case: makespan (both started to the last one's end), each job's wall seconds,
#            its training seconds (first step to last) and rc. PAIR_PREPARED=1: each job (the
#            alone ones too) imports and builds its model on the CPU, then waits for a go
#            (--ready-file/--go-file) given once both are ready (PREPARE_TIMEOUT s, default 90):
#            makespan and walls count from the go, so that the jobs' Python start-up, the same
#            work in every case and seconds apart from run to run, is left out; the CUDA
#            start (through the shim, under gshare) counts. PAIR_ALONE=0 skips the alone runs
#            (no /serial ratio).
#   service  test/bench/priority.sh's service (ResNet-50 fp16, SERVICE_BATCH images a request,
#            one every 12 ms, open loop, SERVICE_SECONDS) beside three GPT-2 small trainings,
#            under each of SERVICE_CASES (default "alone bare mps mpsprio gshare gmps"):
#              alone   the service alone, bare (priority.sh's `alone`);
#              bare    priority.sh's `bare3` (time-slicing);
#              cpustart  `bare3` whose trainings see no GPU (CUDA_VISIBLE_DEVICES empty): each
#                      imports and makes its model on the CPU, then fails at its first CUDA
#                      call; with ARRIVE_AFTER, what an arriving job's start on the CPU alone
#                      costs the service;
#              mps     `bare3` with the MPS daemon up (every process a client, one priority);
#              mpsprio `bare3` with MPS up and the trainings at CUDA_MPS_CLIENT_PRIORITY=1
#                      (below normal; the service at the default 0, normal);
#              mpscap  as mpsprio, and the trainings also at
#                      CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=CAP_PCT (default 25);
#              gshare  priority.sh's `gshare3` (service -p 10, trainings -p 0), [mps] off: the
#                      driver time-slices the jobs and the priority lanes order them;
#              gmps    `gshare3` with an MPS daemon of this script up ([mps] off);
#              gsmps   `gshare3` with gshare's MPS backend ([mps] auto: the daemon's own MPS
#                      control daemon, the trainings its below-normal clients);
#                      Their kernels run on SM_PCT % of the SMs (GSHARE_PRIORITY_SM_PCT; unset:
#                      the shim's default) while the service is busy (lease/sm_partition.h);
#                      GSHARE_CENSUS counts how many launches did (census.<pid>, "#narrowed");
#                      GAP_FILL sets GSHARE_PRIORITY_GAP_FILL (how much of the service's gap
#                      they fill on every SM); BESIDE sets GSHARE_PRIORITY_BESIDE (how many
#                      of them run beside the busy service at once).
#              gsmpswide  as gsmps with GSHARE_PRIORITY_SM_PCT=0: no SM partition, every SM.
#              gsmpsjoin  as gsmps with [mps] join_free_percentage = 0: a training arriving
#                      while the service left no room joins MPS all the same (gshare's
#                      default before the rule: ChooseAtArrival, policy/mps_choice.h).
#              gsmpsout  as gsmps with [mps] join_wait_seconds = 0: a training arriving
#                      while the service left no room runs outside MPS at once, for its life
#                      (gshare's default before the wait for room).
#              gsiso   as gsmps with the service asking for isolation (GSHARE_MPS=0 in its
#                      `gshare run`'s environment): it runs outside MPS, and the trainings,
#                      MPS clients, fill its gaps only (the lanes' gap rule); GAP_FILL and
#                      INFLIGHT_US (GSHARE_PRIORITY_INFLIGHT_US: what they keep queued beyond
#                      the rest of its gap) set that rule's two knobs, for gsmps too.
#              gslowiso  as gsmps with the trainings asking for isolation (GSHARE_MPS=0 in
#                      their `gshare run`'s environment): the service an MPS client, the
#                      trainings outside MPS, time-sliced beside its server, filling its gaps
#                      only: what the service pays for a lower job that waits outside MPS;
#              gsidle  as gsmps with each training only creating its CUDA context at its
#                      arrival and then sleeping (prio_train.py --context-only; needs
#                      ARRIVE_PREPARED): what a second MPS client costs the service when it
#                      holds a context and never asks for memory;
#              gsisosolo  as gsiso without the trainings (priority.sh's `gshare0`): what gshare's
#                      shim and daemon alone cost the isolated service, gsiso's control;
#              gsmpscap   as gsmps, [mps] batch_thread_percentage = CAP_PCT and batch_cap =
#                      "always" (the trainings start before the service: "beside_service"
#                      would not cap them; the default, "never", caps nothing);
#              gsmpsbeside  as gsmps with batch_cap = "beside_service" and
#                      batch_thread_percentage = CAP_PCT: trainings that start while the service
#                      runs (ARRIVE_AFTER) are capped for their life;
#              gsmpsw  as gsmps with batch_thread_percentage = WINDOW_CAP_PCT, batch_cap "always"
#                      (default CAP_PCT; 100: no cap), the trainings with GSHARE_PRIORITY_CONCURRENT_US=CONC_US
#                      (what they keep queued while the service is busy).
#            TRAININGS (default 3) sets the number of trainings of every case but alone.
#            SERVICE=llm runs test/bench/llm_service.py instead (p50/p99 its TTFT; TPOT p99 and
#            its ratio in the table), ARRIVE_AFTER=S starts the trainings S seconds into the
#            service's window (priority.sh says both).
#            PAUSE_PERIOD=S stops and continues the trainings every S s through the service's
#            window (priority.sh): each case then adds a `phases` line, the service beside
#            them and alone within the same window (test/bench/phase_stats.py).
#            Per case priority.sh's line (service p50/p99, the trainings' steps/s during the
#            service's window and before it) and, here, the ratios to `alone` of this call.
#
# MPS: `nvidia-cuda-mps-control -d` with CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY in
# a private folder under /tmp, exported only while an MPS case runs (the gshare daemon, the
# jobs and the service inherit them); stopped with `echo quit | nvidia-cuda-mps-control` after
# the case and on any exit (EXIT trap), then waited for. A case's MPS logs are copied into its
# folder. Nothing else about the GPU is changed (no compute mode, clocks, MIG or persistence).
#
# Env: OUT (results in $OUT/share/; default a new folder under /tmp), PYTHON (default python3),
#   PARTS, PAIR_CASES, SERVICE_CASES, STEPS_GPT (default 350), STEPS_CNN (default 450),
#   CNN_BATCH (default 128), PAIR_TIMEOUT (per job, default 200 s), ENGINE (default swap),
#   SERVICE_BATCH (default 32), SERVICE_SECONDS (default 12), MIN_STEPS (default 10),
#   AFTER_SECONDS (default 3), CAP_PCT (default 25), DEADLINE (seconds since the start after
#   which no new case begins; default 0: none; a skipped case is named in summary.txt).
#   The service part passes priority.sh's own variables on (TRAIN_GPUS and SERVICE_GPU place
#   the jobs on GPUs; SERVICE_CPUS, TRAIN_CPUS, TRAIN_NICE; priority.sh says each).
# Output in $OUT/share/: summary.txt (every case's line, then the ratio tables), pair/<case>/
# (gpt.out/.err/.log, cnn.out/.err/.log, times.txt, mps_*.txt, mps logs, status.json,
# daemon.log), service/<case>/priority/<case>/ (priority.sh's folders) and service/<case>/
# stats.txt (prio_stats.py).
# Cost (H200, defaults): pair ~4 min, service ~45 s a case (alone ~25 s).
# Exit: 0 when every case that ran produced its numbers, 1 otherwise, 2 on usage errors.
set -uo pipefail

me=share_paths
# shellcheck source=mem_common.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/mem_common.sh"
mem_setup "$@"

parts="${PARTS:-pair service}"
pair_cases="${PAIR_CASES:-bare mps gshare gmps}"
service_cases="${SERVICE_CASES:-alone bare mps mpsprio gshare gmps}"
steps_gpt="${STEPS_GPT:-350}"
steps_cnn="${STEPS_CNN:-450}"
cnn_batch="${CNN_BATCH:-128}"
pair_tmo="${PAIR_TIMEOUT:-200}"
pair_prepared="${PAIR_PREPARED:-}"
prepare_tmo="${PREPARE_TIMEOUT:-90}"
[[ -z $pair_prepared || $pair_prepared == 1 ]] || { say "PAIR_PREPARED must be 1 or unset"; exit 2; }
ENGINE="${ENGINE-swap}"
cap_pct="${CAP_PCT:-25}"
conc_us="${CONC_US:-1000}"
window_cap="${WINDOW_CAP_PCT:-$cap_pct}"
[[ $window_cap == 100 ]] && window_cap=""
trainings="${TRAININGS:-3}"
deadline="${DEADLINE:-0}"
for c in $pair_cases; do
  [[ $c =~ ^(bare|mps|gshare|gmps|gsmps)$ ]] || { say "unknown pair case '$c'"; exit 2; }
done
for c in $service_cases; do
  [[ $c =~ ^(alone|bare|mps|mpsprio|mpscap|cpustart|gshare|gmps|gsmps|gsmpswide|gsmpsjoin|gsmpsout|gsmpscap|gsmpsbeside|gsmpsw|gsiso|gslowiso|gsidle|gsisosolo)$ ]] ||
    { say "unknown service case '$c'"; exit 2; }
done
mem_flag=()
[[ -n $ENGINE ]] && mem_flag=(--memory "$ENGINE")

if [[ -n ${OUT:-} ]]; then
  mkdir -p "$OUT/share" && res="$(cd "$OUT/share" && pwd)" || exit 2
else
  res="$(mktemp -d "${TMPDIR:-/tmp}/gshare-share.XXXXXX")" || exit 2
fi
summary="$res/summary.txt"
{
  echo "# share_paths.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) host=$(hostname) gshare=$gshare"
  echo "# gpu: $(gpu_line)"
  echo "# parts=$parts pair_cases=$pair_cases service_cases=$service_cases"
  echo "# steps_gpt=$steps_gpt steps_cnn=$steps_cnn cnn_batch=$cnn_batch engine=${ENGINE:-none} service_batch=${SERVICE_BATCH:-32} service_seconds=${SERVICE_SECONDS:-12} cap_pct=$cap_pct"
} >"$summary"

# shellcheck source=mps_common.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/mps_common.sh"

# mps_view FILE: the MPS servers and the GPU's compute processes now (is each job a client?).
mps_view() {
  {
    echo "# $(now)"
    if [[ -n $mps_dir ]]; then
      echo "get_server_list: $(echo get_server_list | timeout 10 nvidia-cuda-mps-control 2>&1 | tr '\n' ' ')"
    fi
    timeout 10 nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader 2>&1
    timeout 10 nvidia-smi 2>&1 | sed -n '/Processes:/,$p'
  } >"$1"
}

trap 'mem_cleanup; mps_down' EXIT   # mem_setup's trap; MPS stopped once the jobs are gone

late() {   # late CASE: true (and recorded) when DEADLINE has passed
  if ((deadline > 0 && SECONDS >= deadline)); then
    echo "skipped $1 (DEADLINE ${deadline} s passed at ${SECONDS} s)" | tee -a "$summary" >&2
    return 0
  fi
  return 1
}

# prep_args DIR KEY: with PAIR_PREPARED, the arguments that make job KEY wait for DIR/go.
prep_args() { [[ -n $pair_prepared ]] && echo --ready-file "$1/$2.ready" --go-file "$1/go"; }
gpt_cmd() { echo "$python" "$bench/prio_train.py" --steps "$steps_gpt" --batch 8 --seed 1 --log "$1/gpt.log" "$(prep_args "$1" gpt)"; }
cnn_cmd() { echo "$python" "$bench/share_cnn.py" --steps "$steps_cnn" --batch "$cnn_batch" --log "$1/cnn.log" "$(prep_args "$1" cnn)"; }

# pair_go DIR KEY...: with PAIR_PREPARED, waits until every job KEY is ready (at most
# PREPARE_TIMEOUT s), then gives the go; echoes the start time (now, without PAIR_PREPARED).
pair_go() {
  local d=$1 k waited=0
  shift
  if [[ -n $pair_prepared ]]; then
    for k in "$@"; do
      while [[ ! -e $d/$k.ready ]] && ((waited < prepare_tmo * 10)); do sleep 0.1; ((waited++)); done
    done
    for k in "$@"; do [[ -e $d/$k.ready ]] || say "$k in $d was not ready after ${prepare_tmo}s; go anyway"; done
    echo "go $(now)" >>"$d/times.txt"
    touch "$d/go"
  fi
  now
}

# pair_job KEY DIR PREFIX... -- CMD...: one job in the background; its end goes to DIR/times.txt.
pair_job() {
  local key=$1 d=$2
  shift 2
  (
    timeout -k 10 "$pair_tmo" "$@" >"$d/$key.out" 2>"$d/$key.err"
    echo "${key}_end $(now) $?" >>"$d/times.txt"
  ) &
  job_pids+=("$!")
  job_keys+=("$key")
}

pair_alone() {
  local key=$1 d="$res/pair/alone_$1" t0 cmd
  mkdir -p "$d"
  echo "# key epoch_seconds [rc]" >"$d/times.txt"
  if [[ $key == gpt ]]; then read -r -a cmd <<<"$(gpt_cmd "$d")"
  else read -r -a cmd <<<"$(cnn_cmd "$d")"; fi
  echo "start $(now)" >>"$d/times.txt"
  pair_job "$key" "$d" "${cmd[@]}"
  t0=$(pair_go "$d" "$key")
  jobs_wait "alone" "$d/times.txt"
  pair_line "alone_$key" "$d" "$t0" "$key"
}

pair_case() {
  local c=$1 d="$res/pair/$1" t0 pre=() g=() n=()
  mkdir -p "$d"
  echo "# key epoch_seconds [rc]" >"$d/times.txt"
  if [[ $c == mps || $c == gmps ]]; then mps_up "$d" || { echo "pair case=$c mps_failed" | tee -a "$summary"; return 1; }; fi
  if [[ $c == gshare || $c == gmps || $c == gsmps ]]; then
    mkdir -p "$work/pair_$c"
    MPS_MODE=$([[ $c == gsmps ]] && echo auto || echo off) \
      write_config "$d/config.toml" "$work/pair_$c" 20s
    if ! daemon_up "$d/config.toml"; then
      echo "pair case=$c daemon_failed" | tee -a "$summary"
      mps_down
      return 1
    fi
    pre=("$gshare" --config "$d/config.toml" run "${mem_flag[@]}")
  fi
  read -r -a g <<<"$(gpt_cmd "$d")"
  read -r -a n <<<"$(cnn_cmd "$d")"
  echo "start $(now)" >>"$d/times.txt"
  if ((${#pre[@]})); then
    pair_job gpt "$d" "${pre[@]}" --name gpt -- "${g[@]}"
    pair_job cnn "$d" "${pre[@]}" --name cnn -- "${n[@]}"
  else
    pair_job gpt "$d" "${g[@]}"
    pair_job cnn "$d" "${n[@]}"
  fi
  t0=$(pair_go "$d" gpt cnn)
  # A look in the middle: are both MPS clients, does the daemon see both?
  ( sleep 15; mps_view "$d/mps_view.txt" ) &
  local viewer=$!
  if [[ $c == gshare || $c == gmps || $c == gsmps ]]; then ( sleep 16; status_json >"$d/status.json" ) & fi
  jobs_wait "$c" "$d/times.txt"
  kill "$viewer" 2>/dev/null
  wait 2>/dev/null
  if [[ $c == gshare || $c == gmps || $c == gsmps ]]; then
    daemon_down
    cp "$work/pair_$c/state/daemon.log" "$d/daemon.log" 2>/dev/null
    cp "$work/pair_$c/state/mps/0/log/"*.log "$d/" 2>/dev/null
  fi
  mps_down
  pair_line "$c" "$d" "$t0" gpt cnn
}

# pair_line CASE DIR T0 KEY...: `pair case=... makespan=... <key>_wall=... <key>_train=... <key>_rc=...`
pair_line() {
  "$python" - "$@" <<'EOF' | tee -a "$summary"
import json, sys
case, d, t0, keys = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]
ends, rcs = {}, {}
for line in open(f"{d}/times.txt"):
    f = line.split()
    if len(f) == 3 and f[0].endswith("_end"):
        ends[f[0][:-4]], rcs[f[0][:-4]] = float(f[1]), f[2]
out = [f"pair case={case}"]
if all(k in ends for k in keys):
    out.append(f"makespan={max(ends[k] for k in keys) - t0:.2f}")
for k in keys:
    train = steps = "-"
    try:
        for line in open(f"{d}/{k}.out"):
            if line.startswith("{"):
                j = json.loads(line)
                train, steps = f"{j['seconds']:.2f}", j["steps"]
    except (OSError, ValueError, KeyError):
        pass
    wall = f"{ends[k] - t0:.2f}" if k in ends else "-"
    out.append(f"{k}_wall={wall} {k}_train={train} {k}_steps={steps} {k}_rc={rcs.get(k, '-')}")
print(" ".join(out))
EOF
}

service_case() {
  local c=$1 d="$res/service/$1" pc tenv=""
  mkdir -p "$d"
  local mode=off threads="" cap="" join="" join_wait=""
  case $c in
    alone) pc=alone ;;
    bare | mps | mpsprio | mpscap | cpustart) pc=bare$trainings ;;
    gshare | gmps) pc=gshare$trainings ;;
    gsmps | gsmpswide | gsiso | gslowiso | gsidle) pc=gshare$trainings mode=auto ;;
    gsmpsjoin) pc=gshare$trainings mode=auto join=0 ;;
    gsmpsout) pc=gshare$trainings mode=auto join_wait=0 ;;
    gsisosolo) pc=gshare0 mode=auto ;;
    gsmpscap) pc=gshare$trainings mode=auto threads=$cap_pct cap=always ;;
    gsmpsbeside) pc=gshare$trainings mode=auto threads=$cap_pct cap=beside_service ;;
    gsmpsw) pc=gshare$trainings mode=auto threads=$window_cap cap=${window_cap:+always} ;;
  esac
  [[ $c == mpsprio ]] && tenv="CUDA_MPS_CLIENT_PRIORITY=1"
  [[ $c == cpustart ]] && tenv="CUDA_VISIBLE_DEVICES="
  [[ $c == mpscap ]] && tenv="CUDA_MPS_CLIENT_PRIORITY=1 CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$cap_pct"
  [[ $c == gsmpsw ]] && tenv="GSHARE_PRIORITY_CONCURRENT_US=$conc_us"
  [[ $c == gsmps || $c == gsiso || $c == gsmpsjoin || $c == gsmpsout ]] &&
    tenv="GSHARE_CENSUS=$d/census${SM_PCT:+ GSHARE_PRIORITY_SM_PCT=$SM_PCT}${GAP_FILL:+ GSHARE_PRIORITY_GAP_FILL=$GAP_FILL}${BESIDE:+ GSHARE_PRIORITY_BESIDE=$BESIDE}${INFLIGHT_US:+ GSHARE_PRIORITY_INFLIGHT_US=$INFLIGHT_US}"
  [[ $c == gsmpswide ]] && tenv="GSHARE_CENSUS=$d/census GSHARE_PRIORITY_SM_PCT=0"
  [[ $c == gslowiso || $c == gsidle ]] && tenv="GSHARE_CENSUS=$d/census"
  local targs=""
  [[ $c == gsidle ]] && targs="--context-only"
  local trun=""  # the trainings' `gshare run`'s environment (the daemon's choice at launch)
  [[ $c == gslowiso ]] && trun="GSHARE_MPS=0"
  local senv=""
  [[ $c == gsiso || $c == gsisosolo ]] && senv="GSHARE_MPS=0"
  [[ $c == gsmps || $c == gslowiso || $c == gsidle || $c == gsmpsjoin || $c == gsmpsout ]] && senv="GSHARE_CENSUS=$d/service_census"  # its #behind: backlogs
  if [[ $c == mps* || $c == gmps ]]; then
    mps_up "$d" || { echo "service case=$c mps_failed" | tee -a "$summary"; return 1; }
  fi
  local line rc more
  OUT="$d" CASES="$pc" TRAIN_ENV="$tenv" TRAIN_RUN_ENV="$trun" TRAIN_ARGS="$targs" SERVICE_ENV="$senv" MPS_MODE="$mode" MPS_THREADS="$threads" MPS_CAP="$cap" MPS_JOIN_FREE="$join" MPS_JOIN_WAIT="$join_wait" \
    SERVICE_BATCH="${SERVICE_BATCH:-32}" \
    SERVICE_SECONDS="${SERVICE_SECONDS:-12}" MIN_STEPS="${MIN_STEPS:-10}" \
    AFTER_SECONDS="${AFTER_SECONDS:-3}" ENGINE="$ENGINE" \
    timeout -k 10 300 bash "$bench/priority.sh" "$gbin" >"$d/priority.txt" 2>"$d/priority.err" &
  fg_pid=$!
  ( sleep 25; mps_view "$d/mps_view.txt" ) &
  local viewer=$!
  wait "$fg_pid"
  rc=$?
  fg_pid=""
  kill "$viewer" 2>/dev/null
  wait 2>/dev/null
  mps_down
  "$python" "$bench/prio_stats.py" "$d/priority/$pc" >"$d/stats.txt" 2>&1
  line=$(grep '^case=' "$d/priority.txt" | tail -1)
  more=$("$python" -c '
import json, sys
for l in open(sys.argv[1]):
    if l.startswith("{"):
        j = json.loads(l)
        print("p90=%s mean=%s max=%s busy=%s" % (j["p90_ms"], j["mean_ms"], j["max_ms"], j["busy_fraction"]))
' "$d/priority/$pc/service.out" 2>/dev/null)
  echo "service case=$c ${line#case="$pc" } ${more} rc=$rc [${pc}; mps=$mode${threads:+ threads=$threads}${tenv:+; trainings $tenv}${trun:+; their gshare run $trun}]" |
    tee -a "$summary"
  grep '^phases ' "$d/priority.txt" | sed "s/^phases case=[^ ]*/phases case=$c/" | tee -a "$summary"
  [[ -n $line && $line != *" p50=- "* ]]
}

status=0
for part in $parts; do
  case $part in
    pair)
      mkdir -p "$res/pair"
      if [[ ${PAIR_ALONE:-1} == 1 ]]; then
        for k in gpt cnn; do late "alone_$k" || pair_alone "$k" || status=1; done
      fi
      for c in $pair_cases; do late "pair_$c" || pair_case "$c" || status=1; done
      ;;
    service)
      mkdir -p "$res/service"
      for c in $service_cases; do late "service_$c" || service_case "$c" || status=1; done
      ;;
    *) say "unknown part '$part'"; status=2 ;;
  esac
done

# The ratio tables: pair makespans against bare and mps; service against alone.
"$python" - "$summary" <<'EOF' | tee -a "$summary"
import re, sys
pairs, svc = {}, {}
for line in open(sys.argv[1]):
    kv = dict(re.findall(r"(\w+)=([^\s]+)", line))
    if line.startswith("pair case="):
        pairs[kv["case"]] = kv
    elif line.startswith("service case="):
        svc[kv["case"]] = kv
def f(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None
if pairs:
    a = [f(pairs.get(f"alone_{k}", {}).get(f"{k}_wall")) for k in ("gpt", "cnn")]
    serial = sum(a) if all(a) else None
    bare, mps = (f(pairs.get(c, {}).get("makespan")) for c in ("bare", "mps"))
    print("\n# pair: makespan s, / serial, / bare (time-slicing), / mps")
    if serial:
        print(f"serial (alone_gpt + alone_cnn) {serial:.2f}")
    for c, kv in pairs.items():
        m = f(kv.get("makespan"))
        if m is None or c.startswith("alone_"):
            continue
        r = lambda b: f"{m / b:.3f}" if b else "-"  # noqa: E731
        print(f"{c:8s} makespan={m:.2f} /serial={r(serial)} /bare={r(bare)} /mps={r(mps)}")
if svc:
    al = svc.get("alone", {})
    p50a, p99a = f(al.get("p50")), f(al.get("p99"))
    bare_out = f(svc.get("bare", {}).get("train_steps_per_s_outside"))
    print("\n# service: p50, p99 ms and their ratio to alone; trainings' steps/s during the window /"
          " before it (kept), and during / bare's before it")
    for c, kv in svc.items():
        p50, p99 = f(kv.get("p50")), f(kv.get("p99"))
        du, ou = f(kv.get("train_steps_per_s_during")), f(kv.get("train_steps_per_s_outside"))
        r50 = f"{p50 / p50a:.2f}x" if p50 and p50a else "-"
        r99 = f"{p99 / p99a:.2f}x" if p99 and p99a else "-"
        kept = f"{du / ou:.0%}" if du is not None and ou else "-"
        kb = f"{du / bare_out:.0%}" if du is not None and bare_out else "-"
        tp, tpa = f(kv.get("tpot_p99")), f(al.get("tpot_p99"))
        llm = f" tpot_p99={kv.get('tpot_p99')} ({tp / tpa:.2f}x)" if tp and tpa else ""
        print(f"{c:8s} p50={kv.get('p50')} ({r50}) p99={kv.get('p99')} ({r99}){llm} "
              f"during={kv.get('train_steps_per_s_during')} outside={kv.get('train_steps_per_s_outside')} "
              f"kept={kept} of_bare={kb}")
EOF
say "results in $res"
exit "$status"
