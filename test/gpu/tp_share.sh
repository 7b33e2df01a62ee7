#!/usr/bin/env bash
# A tensor-parallel LLM decode (test/gpu/tp_decode.py: vLLM's TP=2 shape, one all-reduce per layer
# over NCCL or over a custom all-reduce on legacy CUDA IPC) under gshare on a machine with 2 GPUs:
# bare, under gshare's memory engines, and beside a 1-GPU training on GPU 0 (a gang lease of two
# GPUs against a job on one of them). Every run under gshare must print its bare run's digest.
#
#   test/gpu/tp_share.sh GSHARE_DIR          (GSHARE_DIR holds gshare and libgshare.so)
#
# Cases (CASES, default all five, in this order): `torchrun --standalone --nproc_per_node 2
# test/gpu/tp_decode.py --allreduce MODE $TP_ARGS` with NCCL_CUMEM_ENABLE and
# NCCL_CUMEM_HOST_ENABLE removed from the environment and then set as the case says:
#   nccl_cumem1        nccl, NCCL_CUMEM_ENABLE=1 (NCCL's buffers are cuMem handles)
#   nccl_cumem0        nccl, NCCL_CUMEM_ENABLE=0 (cudaMalloc buffers shared by legacy CUDA IPC)
#   nccl_cumem1_host1  nccl, NCCL_CUMEM_ENABLE=1 NCCL_CUMEM_HOST_ENABLE=1
#   nccl_host0         nccl, NCCL_CUMEM_HOST_ENABLE=0
#   ipc                ipc (cudaMalloc, cudaIpcGetMemHandle, cudaIpcOpenMemHandle, as vLLM)
# Steps (STEPS, default "bare gshare beside": any of them, in this order):
#   bare:   each case without gshare, CUDA_VISIBLE_DEVICES=0,1: the reference digests
#           (bare_CASE.json and .rc; the later steps read them from this run or an earlier one
#           with the same OUT, so runs may be split across time limits).
#   gshare: for each ENGINE in ENGINES (default "swap off"), a fresh daemon (private socket and
#           state, [memory] engine = ENGINE), each case as `gshare run --gpus 2 --gpu $TP_GPU
#           --memory ENGINE -J tp-CASE -- torchrun ...`; its digest against the bare one.
#   beside: a fresh daemon with its default engine ([memory] engine = BESIDE_ENGINE when set);
#           for nccl_cumem1 and ipc (those in CASES): first a training, `gshare run --gpu 0 -J
#           train -- python3 examples/train_gpt.py --steps TRAIN_STEPS`; once it printed its
#           first `step` line, the case as in the gshare step (neither job gets --memory unless
#           BESIDE_ENGINE is set),
#           with `status --json` every POLL_EVERY s (beside_CASE_status.jsonl); then the training
#           is stopped (SIGINT to its `gshare run`, SIGTERM 30 s later if still there) and
#           waited for. A TP job or training that does not end in time (a gang lease that never
#           comes) is cut by its timeout: the case reports digest=hang.
# One line per run (summary.txt and stdout):
#   case=<name> engine=<e|-|default> where=<bare|gshare|beside> digest=<hex16|hang|none>
#   same_as_bare=yes|no|- tpot_p50=<ms> tpot_p99=<ms> rc=<n>
# (tpot from tp_decode.py's JSON, rank 0's decode steps; rc the command's exit status: 124 or
# 137 when its timeout ended it; 125 when gshare refused it or its daemon did not start).
# Legacy IPC under the memory engines: swap-engine memory is shared through gshare's own handles
# (docs/memory.md, "Legacy IPC of engine memory"), so `ipc` and nccl_cumem0 run under swap as
# bare; under managed they end rc=1 with `ipc: cudaIpcGetMemHandle failed: 801 ...`.
# Env: OUT (default ./out; results in $OUT/tp_share/), PYTHON (default python3), TORCHRUN
# (default: torchrun next to $PYTHON), TP_ARGS (tp_decode.py's further arguments, word-split,
# default "--steps 200"), TP_GPU (--gpu of the TP jobs, default 0,1; empty: the queue places
# them), RUN_TIMEOUT (seconds per run, default 180; the training gets 2 x RUN_TIMEOUT + 60),
# TRAIN_STEPS (default 400), QUANTUM (default 20s), POLL_EVERY (default 0.5), CASES, ENGINES,
# BESIDE_ENGINE; as mem_common.sh reads them: DAEMON_START_TIMEOUT, LOG_LEVEL, SHARING
# (`exclusive`: one job per GPU at a time, so that beside the gang lease must take GPU 0 from the
# training; by default the two fit together and share it), IDLE_RELEASE, HOST_BUDGET.
# TP_ARGS="--steps 200 --extra-gib 120" makes the TP job too big to share a GPU with the training.
# Files in $OUT/tp_share/: bare_CASE.{out,err,json,rc}, gshare_ENGINE_CASE.{out,err,json},
# beside_CASE.{out,err,json}, beside_CASE_train.{out,err,txt}, beside_CASE_status.jsonl,
# daemon_ENGINE.log, daemon_beside.log, summary.txt.
# Cost on 2 H200s (an estimate, nothing measured yet): a run is mostly start-up (torchrun, two
# imports of torch, CUDA and NCCL set-up, ~20-30 s; the 210 decode steps take ~1 s), so bare
# ~2-2.5 min, gshare ~5 min for two engines (plus each daemon's start), beside ~2 min (the
# training's start-up ~15-20 s per case): ~10 min in all; split it with STEPS (and CASES) to stay
# within a 10-minute call.
# Exit: 0 when every run's rc is 0 and every gshare and beside digest equals its bare one, 1
# otherwise, 2 on usage errors.
set -uo pipefail

me=tp_share
# shellcheck source=../bench/mem_common.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/../bench/mem_common.sh"
mem_setup "$@"

all_cases="nccl_cumem1 nccl_cumem0 nccl_cumem1_host1 nccl_host0 ipc"
steps_run=" ${STEPS:-bare gshare beside} "
for s in $steps_run; do
  [[ $s == bare || $s == gshare || $s == beside ]] || { say "unknown step $s in STEPS"; exit 2; }
done
read -r -a cases <<<"${CASES:-$all_cases}"
for c in "${cases[@]}"; do
  [[ " $all_cases " == *" $c "* ]] || { say "unknown case $c in CASES (known: $all_cases)"; exit 2; }
done
engines=${ENGINES:-swap off}
for e in $engines; do
  [[ $e =~ ^(swap|managed|checkpoint|off)$ ]] || { say "unknown engine $e in ENGINES"; exit 2; }
done
beside_engine=${BESIDE_ENGINE:-}
[[ -z $beside_engine || $beside_engine =~ ^(swap|managed|checkpoint|off)$ ]] ||
  { say "unknown engine $beside_engine in BESIDE_ENGINE"; exit 2; }
read -r -a tp_args <<<"${TP_ARGS-"--steps 200"}"
tp_gpu=${TP_GPU-0,1}
tmo=${RUN_TIMEOUT:-180}
[[ $tmo =~ ^[0-9]+$ && $tmo -gt 0 ]] || { say "RUN_TIMEOUT must be a whole number of seconds"; exit 2; }
train_steps=${TRAIN_STEPS:-400}
quantum=${QUANTUM:-20s}
torchrun=${TORCHRUN:-$(dirname "$python")/torchrun}
[[ -x $torchrun ]] || { say "no torchrun at $torchrun (set TORCHRUN)"; exit 2; }
tp_py="$root/test/gpu/tp_decode.py"
train_py="$root/examples/train_gpt.py"
out="${OUT:-./out}/tp_share"
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
# Every run carries TP_SHARE_MARK=<mark>.<run> in its environment (never exported here, so the
# daemon and its MPS servers have none): what a timeout left behind is found by it and killed.
mark="tpshare$$x$(date +%s)"

reap() {  # PATTERN: SIGKILL our processes whose TP_SHARE_MARK matches PATTERN (a regex, anchored)
  local p n=0
  for p in /proc/[0-9]*; do
    grep -qzx "TP_SHARE_MARK=$1" "$p/environ" 2>/dev/null || continue
    kill -KILL "${p#/proc/}" 2>/dev/null && n=$((n + 1))
  done
  ((n == 0)) || say "killed $n leftover process(es) marked $1"
}

tp_cleanup() {
  mem_cleanup            # TERMs the runs still going (their timeouts pass it on), stops the daemon
  reap "$mark\..*"
}
trap tp_cleanup EXIT

# tp_cmd CASE RUN: sets envp (env -u ... VAR=... for CASE, with the mark of RUN) and tp (the
# torchrun command line).
tp_cmd() {
  local mode=nccl
  envp=(env -u NCCL_CUMEM_ENABLE -u NCCL_CUMEM_HOST_ENABLE -u CUDA_VISIBLE_DEVICES
        "TP_SHARE_MARK=$mark.$2")
  case $1 in
    nccl_cumem1) envp+=(NCCL_CUMEM_ENABLE=1) ;;
    nccl_cumem0) envp+=(NCCL_CUMEM_ENABLE=0) ;;
    nccl_cumem1_host1) envp+=(NCCL_CUMEM_ENABLE=1 NCCL_CUMEM_HOST_ENABLE=1) ;;
    nccl_host0) envp+=(NCCL_CUMEM_HOST_ENABLE=0) ;;
    ipc) mode=ipc ;;
  esac
  tp=("$torchrun" --standalone --nproc_per_node 2 "$tp_py" --allreduce "$mode" "${tp_args[@]}")
}

gpu_opt=()
[[ -n $tp_gpu ]] && gpu_opt=(--gpu "$tp_gpu")

# json_fields FILE: "digest p50 p99" of tp_decode.py's JSON line in FILE ("none - -" without one).
json_fields() {
  "$python" - "$1" <<'EOF' 2>/dev/null || echo "none - -"
import json, sys
try:
    d = json.loads(open(sys.argv[1]).read())
except (OSError, ValueError):
    print("none - -")
    sys.exit(0)
print(d.get("digest") or "none", d.get("tpot_ms_p50", "-"), d.get("tpot_ms_p99", "-"))
EOF
}

# bare_ref CASE: the bare digest of CASE (empty when no successful bare run is on file).
bare_ref() {
  [[ $(cat "$out/bare_$1.rc" 2>/dev/null) == 0 ]] || return 0
  local d _
  read -r d _ < <(json_fields "$out/bare_$1.json")
  [[ $d =~ ^[0-9a-f]{16}$ ]] && echo "$d"
}

ok=1
lines=()
# record WHERE ENGINE CASE BASE RC: the summary line of a run whose output is BASE.out (its JSON
# line goes to BASE.json); clears ok when the run failed or its digest is not the bare one.
record() {
  local where=$1 engine=$2 c=$3 base=$4 rc=$5 dig p50 p99 same=- ref
  grep '^{' "$base.out" 2>/dev/null | tail -1 >"$base.json"
  read -r dig p50 p99 < <(json_fields "$base.json")
  [[ $rc == 124 || $rc == 137 ]] && dig=hang
  if [[ $where != bare ]]; then
    ref=$(bare_ref "$c")
    same=no
    [[ -n $ref && $dig == "$ref" ]] && same=yes
    [[ -n $ref ]] || say "$c: no successful bare run in $out to compare with (STEPS=bare first)"
    [[ $same == yes ]] || ok=0
  fi
  [[ $rc == 0 ]] || ok=0
  local line="case=$c engine=$engine where=$where digest=$dig same_as_bare=$same tpot_p50=$p50"
  line+=" tpot_p99=$p99 rc=$rc"
  lines+=("$line")
  say "$line"
  if [[ $rc != 0 ]]; then
    say "  $base.err: $(grep -E 'tp_decode: rank|gshare:|Error|error' "$base.err" 2>/dev/null | tail -2 | tr '\n' ' ')"
  fi
  if [[ $rc == 124 || $rc == 137 ]]; then reap "$mark\.$where\.$engine\.$c"; fi
}

# run_tp WHERE ENGINE CASE BASE GSHARE_OPTS...: one TP run (bare when no options are given: then
# on CUDA_VISIBLE_DEVICES=0,1), recorded.
run_tp() {
  local where=$1 engine=$2 c=$3 base=$4 rc
  shift 4
  tp_cmd "$c" "$where.$engine.$c"
  if [[ $where == bare ]]; then
    bounded "$tmo" "${envp[@]}" CUDA_VISIBLE_DEVICES=0,1 "${tp[@]}" >"$base.out" 2>"$base.err"
  else
    bounded "$tmo" "${envp[@]}" "$gshare" --config "$daemon_cfg" run "$@" -J "tp-$c" -- "${tp[@]}" \
      >"$base.out" 2>"$base.err"
  fi
  rc=$?
  record "$where" "$engine" "$c" "$base" "$rc"
  [[ $where != bare ]] || echo "$rc" >"$base.rc"
}

# no_daemon WHERE ENGINE CASE...: the lines of cases that could not run (daemon did not start).
no_daemon() {
  local where=$1 engine=$2 c
  shift 2
  for c in "$@"; do
    lines+=("case=$c engine=$engine where=$where digest=none same_as_bare=no tpot_p50=- tpot_p99=- rc=125")
    say "${lines[-1]} (the daemon did not start)"
  done
  ok=0
}

say "GPUs: $(timeout 20 nvidia-smi --query-gpu=index,name,uuid,memory.total --format=csv,noheader 2>/dev/null | tr '\n' ';')"
say "cases: ${cases[*]}; TP_ARGS: ${tp_args[*]}; torchrun: $torchrun"

if [[ $steps_run == *" bare "* ]]; then
  t_step=$(now)
  for c in "${cases[@]}"; do
    run_tp bare - "$c" "$out/bare_$c"
  done
  say "step bare: $(awk -v a="$t_step" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s"
fi

if [[ $steps_run == *" gshare "* ]]; then
  for engine in $engines; do
    t_step=$(now)
    dir="$work/$engine"
    mkdir -p "$dir"
    ENGINE=$engine write_config "$dir/config.toml" "$dir" "$quantum"
    if ! daemon_up "$dir/config.toml"; then
      no_daemon gshare "$engine" "${cases[@]}"
      continue
    fi
    for c in "${cases[@]}"; do
      run_tp gshare "$engine" "$c" "$out/gshare_${engine}_$c" --gpus 2 "${gpu_opt[@]}" --memory "$engine"
    done
    daemon_down
    cp "$dir/state/daemon.log" "$out/daemon_$engine.log" 2>/dev/null
    say "step gshare $engine: $(awk -v a="$t_step" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s"
  done
fi

# stop_train: SIGINT to the training's `gshare run` (the child of its timeout), SIGTERM to the
# timeout (passed on) when it is still there 30 s later, then waits (bounded by its timeout).
stop_train() {
  local tpid=${job_pids[0]:-} g i
  [[ -n $tpid ]] || return 0
  g=$(pgrep -P "$tpid" 2>/dev/null | head -1)
  kill -INT "${g:-$tpid}" 2>/dev/null
  for ((i = 0; i < 150; i++)); do kill -0 "$tpid" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$tpid" 2>/dev/null; then
    say "training still running 30 s after SIGINT: SIGTERM"
    kill -TERM "$tpid" 2>/dev/null
  fi
  jobs_wait train "$1"
}

if [[ $steps_run == *" beside "* ]]; then
  t_step=$(now)
  beside_cases=()
  for c in nccl_cumem1 ipc; do [[ " ${cases[*]} " == *" $c "* ]] && beside_cases+=("$c"); done
  mem_opt=()
  [[ -n $beside_engine ]] && mem_opt=(--memory "$beside_engine")
  engine_name=${beside_engine:-default}
  dir="$work/beside"
  mkdir -p "$dir"
  ENGINE=$beside_engine write_config "$dir/config.toml" "$dir" "$quantum"
  if ((${#beside_cases[@]})) && ! daemon_up "$dir/config.toml"; then
    no_daemon beside "$engine_name" "${beside_cases[@]}"
  elif ((${#beside_cases[@]})); then
    for c in "${beside_cases[@]}"; do
      base="$out/beside_$c"
      : >"$work/train_$c.times"
      # The training: on GPU 0 only, started first.
      job_start train "${base}_train.out" $((2 * tmo + 60)) env -u CUDA_VISIBLE_DEVICES \
        "TP_SHARE_MARK=$mark.train.$c" "$gshare" --config "$daemon_cfg" run --gpu 0 "${mem_opt[@]}" \
        -J train -- "$python" "$train_py" --steps "$train_steps"
      started=no
      for ((i = 0; i < tmo * 5; i++)); do
        grep -q '^step ' "${base}_train.out" 2>/dev/null && { started=yes; break; }
        (($(jobs_alive) > 0)) || break
        sleep 0.2
      done
      state=$(status_json | "$python" -c 'import json, sys
print(next((j["state"] for j in json.load(sys.stdin).get("jobs", [])
            if j.get("name") == "train" and j.get("state") == "RUNNING"), "not-running"))' 2>/dev/null)
      say "beside $c: training first step: $started (status: ${state:-unknown})"
      if [[ $started != yes ]]; then
        say "beside $c: the training did not start within $tmo s: the case does not run beside it"
        ok=0
      fi
      : >"${base}_status.jsonl"
      poll_start "${base}_status.jsonl"
      run_tp beside "$engine_name" "$c" "$base" --gpus 2 "${gpu_opt[@]}" "${mem_opt[@]}"
      poll_stop
      alive=no
      (($(jobs_alive) > 0)) && alive=yes
      stop_train "$work/train_$c.times"
      train_rc=$(awk '$1 == "train_train_end" { print $3 }' "$work/train_$c.times")
      nsteps=$(grep -c '^step ' "${base}_train.out" 2>/dev/null)
      {
        echo "training_started=$started training_alive_at_tp_end=$alive train_rc=${train_rc:--}"
        echo "step_lines=${nsteps:-0}"
        grep '^step \|^done' "${base}_train.out" 2>/dev/null
      } >"${base}_train.txt"
      say "beside $c: training alive when the TP job ended: $alive; $nsteps step lines; rc ${train_rc:--}"
      [[ $alive == yes ]] || say "beside $c: the training ended before the TP job (raise TRAIN_STEPS)"
    done
    daemon_down
    cp "$dir/state/daemon.log" "$out/daemon_beside.log" 2>/dev/null
  fi
  say "step beside: $(awk -v a="$t_step" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s"
fi

if ((${#lines[@]})); then
  printf '%s\n' "${lines[@]}" | tee "$out/summary.txt"
else
  say "nothing ran"
  : >"$out/summary.txt"
fi
((ok))
