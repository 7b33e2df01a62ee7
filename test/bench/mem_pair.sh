#!/usr/bin/env bash
# Memory benchmark "big pair" / "small pair" (the thesis's big_90, big_50, small_90, small_50 on
# an H100): two test/bench/mem_train.py jobs, A and B, whose GPU working sets together exceed the
# GPU (big) or fit in it (small, SMALL=1), under gshare's memory engine at several time quanta.
#
#   test/bench/mem_pair.sh GSHARE_DIR          (GSHARE_DIR holds gshare and libgshare.so)
#
# For one configuration:
#   1. A, then B, bare: the serial time, the reference losses, and each job's cpu_ms (CPU time
#      per step, from its measured GPU step time and CPU_FRACTION), which every later run of the
#      job gets as --cpu-ms, so that all runs do the same CPU work;
#   2. SMALL=1 only: A and B bare at the same time, without gshare (the driver time-slices
#      them): the small pair's baseline;
#   3. for each TQ in QUANTA: a fresh daemon (quantum TQ, [memory] engine ENGINE), A and B at once
#      under `gshare run --memory $ENGINE --quantum ${TQ}s`, `gshare status --json` every 0.5 s;
#      the makespan, the losses against step 1, the hand-offs from the daemon log (or from the
#      status samples when the log has none).
# One line per TQ (in summary.txt and on stdout):
#   tq=<s> makespan=<s> serial=<s> ratio=<makespan/serial> handoffs=<n> mean_handoff_ms=<x>
#   losses=identical|DIFFER runs=ok|FAILED(<rc of A and B>)
# With SMALL=1, ratio is makespan / (makespan of step 2), and `together=<s> baseline=together`
# is added. Every run is bounded by `timeout`; the daemon is stopped on exit, whatever happens.
#
# Env:
#   OUT             results go to $OUT/mem_pair/<NAME>/ (default ./out)
#   PYTHON          interpreter with torch (default python3)
#   SMALL           0: big pair (default), 1: small pair
#   GIB_A, GIB_B    working sets in GiB (default 45 and 45; SMALL=1: 30 and 30)
#   CPU_FRACTION    CPU share of a job's solo time: 0.1 (90/10, default) or 0.5 (50/50)
#   QUANTA          time quanta in seconds (default "5 10 20 60")
#   ENGINE          memory engine (default swap); empty: no --memory and no [memory] table
#   STEPS           steps per job (default: mem_train.py's estimate for TARGET_SECONDS)
#   TARGET_SECONDS  solo training time each job aims at on an H100 (default 30)
#   NAME            configuration name (default e.g. big_90_45x45, small_50_30x30)
#   GPU_LIMIT, HOST_BUDGET, IDLE_RELEASE, EARLY_RELEASE, STAGGER   written to the daemon's
#                   config when set
#   TRAIN_ARGS      extra arguments for both mem_train.py jobs (word-split)
#   HOST_WARM_GIB   host memory touched once before the runs (default 100, 0: none; host_warm.py)
#   RUN_TIMEOUT     seconds allowed to each run (default 300)
#   POLL_EVERY      seconds between status polls (default 0.5)
#   PRIME_IMPORT    1: `import torch` once, untimed, before every run (bare, together and each
#                   TQ), so that no run starts from a page cache the host warm-up or an earlier
#                   run emptied (start-ups then differ by less than the 2-10 s seen without)
#   LOCK_STEP       1: A and B begin their first step at the same instant (mem_train.py
#                   --barrier) in the together run and each TQ run: a pair in lock step, as
#                   identical jobs started together fall into (docs/memory.md "Phase staggering")
#   GSHARE_TRACE_SWAP  set: the jobs' shims trace each eviction, swap-in and pin-ahead on
#                   stderr, and timeline.txt lists them
# Output in $OUT/mem_pair/<NAME>/: times.txt, bare_{A,B}.{out,err}, together_{A,B}.{out,err}
# (SMALL=1), tq<TQ>/{config.toml,A.out,B.out,*.err,status.jsonl,status_end.json,daemon.log,
# timeline.txt (test/bench/pair_timeline.py: where the makespan went)}, summary.txt.
# Cost on an H100 80 GB (mem_train.py measured there: 0.23 s per step, ~11 s of start-up per
# job, reserved 44.3 GiB at --gib 45 and 30.2 at 30; hand-offs estimated: 2 x 44 GiB at
# 50-75 GB/s, ~1.3-1.9 s): with TARGET_SECONDS=30 each job trains ~26 s, ~37 s solo, so
#   big_90 (45+45 GiB): serial ~75 s; TQ 5 ~80-85 s (~10 hand-offs), 10 ~72, 20 ~68, 60 ~65:
#                        ~6 min in all, plus each daemon's start and stop;
#   big_50: the same (the holder keeps the lease through its CPU phases: ~230 ms is shorter
#           than two handoffs, so no early release); with TRAIN_ARGS="--accum 16"
#           TARGET_SECONDS=60 (3.25 s phases) serial ~132 s and TQ 20 ~80-84 s, a handoff at
#           each CPU phase (early release);
#   small_90 / small_50 (30+30 GiB): serial ~75 s, together ~55-60 s, each TQ ~55-60 s: ~6 min.
# The jobs pin host memory for the swapped data when the GPU turns exclusive (~0.2-0.5 s/GiB
# in this VM, mostly without holding the job up); drop quanta (QUANTA="5 20") to stay within a 10-minute call.
# Exit: 0 when every run succeeded and all losses are identical, 1 otherwise, 2 on usage errors.
set -uo pipefail

me=mem_pair
# shellcheck source=mem_common.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/mem_common.sh"
mem_setup "$@"

small="${SMALL:-0}"
if [[ $small == 1 ]]; then kind=small def_gib=30; else kind=big def_gib=45; fi
gib_a="${GIB_A:-$def_gib}"
gib_b="${GIB_B:-$def_gib}"
frac="${CPU_FRACTION:-0.1}"
quanta="${QUANTA:-5 10 20 60}"
ENGINE="${ENGINE-swap}"
tmo="${RUN_TIMEOUT:-300}"
pct=$(awk -v f="$frac" 'BEGIN { printf "%d", 100 - 100 * f + 0.5 }')
name="${NAME:-${kind}_${pct}_${gib_a}x${gib_b}}"
read -r -a train_args <<< "${TRAIN_ARGS:-}"
for tq in $quanta; do
  [[ $tq =~ ^[0-9]+$ && $tq -gt 0 ]] || { say "QUANTA must be whole seconds > 0, not '$tq'"; exit 2; }
done

mkdir -p "${OUT:-./out}/mem_pair/$name"
out="$(cd "${OUT:-./out}/mem_pair/$name" && pwd)"
rm -rf "${out:?}"/*
times="$out/times.txt"
echo "# key value [rc]  (bare_*: wall seconds; *_start, *_end: epoch seconds)" >"$times"

train() {   # train A|B [--cpu-ms X]: the job's command line
  local gib seed
  if [[ $1 == A ]]; then gib=$gib_a seed=1; else gib=$gib_b seed=2; fi
  shift
  cmd=("$python" "$bench/mem_train.py" --gib "$gib" --cpu-fraction "$frac" --seed "$seed"
       --target-seconds "${TARGET_SECONDS:-30}" --trace)
  [[ -n ${STEPS:-} ]] && cmd+=(--steps "$STEPS")
  cmd+=("${train_args[@]}" "$@")
}
mem_flag=()
[[ -n $ENGINE ]] && mem_flag=(--memory "$ENGINE")

train A; cmd_a=("${cmd[@]}")
train B; cmd_b=("${cmd[@]}")
{
  echo "# mem_pair.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) host=$(hostname) gshare=$gshare config=$name"
  echo "# gpu: $(gpu_line)"
  echo "# A: ${cmd_a[*]}"
  echo "# B: ${cmd_b[*]}"
  echo "# engine=${ENGINE:-none} quanta=$quanta gpu_limit=${GPU_LIMIT:-default} host_budget=${HOST_BUDGET:-default} idle_release=${IDLE_RELEASE:-default} early_release=${EARLY_RELEASE:-default} stagger=${STAGGER:-default} lock_step=${LOCK_STEP:-0} prime_import=${PRIME_IMPORT:-0}"
} >"$out/summary.txt"

# A daemon left by an earlier run with the default configuration is not ours to use: stop it.
timeout 30 "$gshare" daemon stop >/dev/null 2>&1 || true
echo "# $(host_warm)" >>"$out/summary.txt"

# PRIME_IMPORT=1: reads torch's libraries into the page cache before a run (untimed).
prime_cache() {
  [[ ${PRIME_IMPORT:-0} == 1 ]] || return 0
  bounded 120 "$python" -c "import torch, torch.nn" >/dev/null 2>&1 || say "prime: import torch failed"
}

# 1. Bare, one after the other.
declare -A cpu_ms
for j in A B; do
  if [[ $j == A ]]; then c=("${cmd_a[@]}"); else c=("${cmd_b[@]}"); fi
  prime_cache
  say "bare $j: ${c[*]}"
  t0=$(now)
  bounded "$tmo" "${c[@]}" >"$out/bare_$j.out" 2>"$out/bare_$j.err"
  rc=$?
  wall=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }')
  echo "bare_$j $wall $rc" >>"$times"
  cpu_ms[$j]=$("$python" "$bench/benchlib.py" done-get "$out/bare_$j.out" cpu_ms)
  say "bare $j: rc=$rc ${wall}s cpu_ms=${cpu_ms[$j]} $(grep -o 'reserved_gib=[^ ]*' "$out/bare_$j.out")"
  [[ $rc == 0 ]] || tail -3 "$out/bare_$j.err" | sed 's/^/  | /' >&2
done
cpu_args() {   # the --cpu-ms of job $1 measured bare (none if that run failed)
  if [[ ${cpu_ms[$1]} != - ]]; then echo "--cpu-ms ${cpu_ms[$1]}"; fi
}
read -r -a extra_a <<< "$(cpu_args A)"
read -r -a extra_b <<< "$(cpu_args B)"

lock_args() {   # lock_args DIR: with LOCK_STEP=1, mem_train.py's --barrier DIR:2 in ${lock[@]}
  lock=()
  if [[ ${LOCK_STEP:-0} == 1 ]]; then lock=(--barrier "$1:2"); fi
}

# 2. Small pair: both bare at once, no gshare.
if [[ $small == 1 ]]; then
  prime_cache
  say "together without gshare"
  echo "together_start $(now)" >>"$times"
  lock_args "$work/barrier-together"
  job_start A "$out/together_A.out" "$tmo" "${cmd_a[@]}" "${extra_a[@]}" "${lock[@]}"
  job_start B "$out/together_B.out" "$tmo" "${cmd_b[@]}" "${extra_b[@]}" "${lock[@]}"
  jobs_wait together "$times"
fi

# 3. Under gshare, one fresh daemon per quantum.
for tq in $quanta; do
  d="$out/tq$tq"
  mkdir -p "$d" "$work/tq$tq"
  write_config "$d/config.toml" "$work/tq$tq" "${tq}s" "${GPU_LIMIT:-}"
  if ! daemon_up "$d/config.toml"; then
    echo "tq${tq}_start - daemon-failed" >>"$times"
    continue
  fi
  poll_start "$d/status.jsonl"
  say "tq=$tq: A and B under gshare run ${mem_flag[*]} --quantum ${tq}s"
  g=("$gshare" --config "$d/config.toml" run "${mem_flag[@]}" --quantum "${tq}s")
  prime_cache
  echo "tq${tq}_start $(now)" >>"$times"
  lock_args "$work/barrier-tq$tq"
  job_start A "$d/A.out" "$tmo" "${g[@]}" -J A -- "${cmd_a[@]}" "${extra_a[@]}" "${lock[@]}"
  job_start B "$d/B.out" "$tmo" "${g[@]}" -J B -- "${cmd_b[@]}" "${extra_b[@]}" "${lock[@]}"
  jobs_wait "tq$tq" "$times"
  poll_stop
  status_json >"$d/status_end.json"
  daemon_down
  cp "$work/tq$tq/state/daemon.log" "$d/daemon.log" 2>/dev/null || say "tq=$tq: no daemon log"
  "$python" "$bench/benchlib.py" mem-pair "$out" 2>/dev/null | grep "^tq=$tq " >&2
  "$python" "$bench/pair_timeline.py" "$d" --events >"$d/timeline.txt" 2>&1 || true
done

"$python" "$bench/benchlib.py" mem-pair "$out" | tee -a "$out/summary.txt"
rc=${PIPESTATUS[0]}
say "results in $out"
exit "$rc"
