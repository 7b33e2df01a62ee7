#!/usr/bin/env bash
# Hand-off cost of gshare's swap engine: two jobs of N GiB each take turns on one GPU with a
# short quantum; each hand-off moves the old holder's memory out to pinned host memory and the
# new holder's back in. Measured per hand-off by the daemon: total_ms, from the DROP sent to the
# old holder until the new holder has its memory back and may run its first kernel, and the
# rate (evicted + swapped-in bytes) / total_ms.
#
#   test/bench/mem_handoff.sh GSHARE_DIR       (GSHARE_DIR holds gshare and libgshare.so)
#
# Per size N in SIZES: a fresh daemon (quantum QUANTUM, gpu_limit GPU_LIMIT so that the two jobs
# cannot be resident together), two jobs under `gshare run --memory $ENGINE`, `gshare status
# --json` every 0.5 s; once HANDOFFS hand-offs happened (or HOLD_SECONDS passed since the jobs
# started) a stop file ends the jobs. The jobs (JOB):
#   stress (default): test/bench/mem_stress.py --gib N --gap-ms 0: always busy, short kernels
#     (the drain is short), and it checks its data bit for bit after every swap;
#   train: test/bench/mem_train.py --gib N --cpu-fraction 0 (~HOLD_SECONDS/2 of training each;
#     ends by itself; drains wait for a ~0.27 s step).
# Hand-offs come from the daemon log (`handoff <gpu>: job A -> job B: ...`), else from the
# status samples' last_handoff. Never uses managed memory.
#
# Env:
#   OUT            results go to $OUT/mem_handoff/ (default ./out)
#   PYTHON         interpreter with torch (default python3)
#   SIZES          GiB per job, whole numbers >= 2 (default "8 16 24 35")
#   QUANTUM        the lease's quantum (default 3s)
#   HANDOFFS       hand-offs to collect per size (default 10)
#   HOLD_SECONDS   at most this long per size after the jobs start (default 45)
#   GPU_LIMIT      auto (default): 3N/2 GiB (one job fits, two do not), or "0" (the whole GPU)
#                  once 3N/2 >= 76; or a size used for every N
#   ENGINE         memory engine (default swap)
#   JOB            stress (default) or train
#   JOB_ARGS       extra arguments for both jobs (word-split; e.g. "--device cpu --gib 0.01"
#                  to try the plumbing without a GPU)
#   HOST_BUDGET, IDLE_RELEASE   written to the daemon's config when set
#   RUN_TIMEOUT    seconds allowed to each job (default HOLD_SECONDS + 120)
#   HOST_WARM_GIB  host memory touched once before the runs (default 100, 0: none; host_warm.py)
# Output in $OUT/mem_handoff/: times.txt, size<N>/{config.toml,A.out,B.out,*.err,status.jsonl,
# daemon.log}, summary.txt: per size the number of hand-offs, total_ms median/min/max, GB/s
# median/min/max, median drain_ms and swap-in ms, median GiB moved per hand-off.
# Runtime on an H100: per size ~10 s of start-up (torch, filling N GiB) + 30-45 s of hand-offs
# (3 s quantum + 0.3-1.5 s per hand-off at 50-75 GB/s) + stop: ~4 min for the defaults, plus
# the daemon's host-memory pinning if it pins at start or on first use (0.8 s/GiB in this VM).
# Exit: 0 when every size got hand-offs and every job ended well (no mismatch), 1 otherwise,
# 2 on usage errors.
set -uo pipefail

me=mem_handoff
# shellcheck source=mem_common.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/mem_common.sh"
mem_setup "$@"

sizes="${SIZES:-8 16 24 35}"
quantum="${QUANTUM:-3s}"
want="${HANDOFFS:-10}"
hold="${HOLD_SECONDS:-45}"
ENGINE="${ENGINE-swap}"
job="${JOB:-stress}"
tmo="${RUN_TIMEOUT:-$((hold + 120))}"
read -r -a job_args <<< "${JOB_ARGS:-}"
[[ $job == stress || $job == train ]] || { say "JOB must be stress or train"; exit 2; }
for n in $sizes; do
  [[ $n =~ ^[0-9]+$ && $n -ge 2 ]] || { say "SIZES must be whole GiB >= 2, not '$n'"; exit 2; }
done
mkdir -p "${OUT:-./out}/mem_handoff"
out="$(cd "${OUT:-./out}/mem_handoff" && pwd)"
rm -rf "${out:?}"/*
times="$out/times.txt"
echo "# key value [rc]  (epoch seconds)" >"$times"
{
  echo "# mem_handoff.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) host=$(hostname) gshare=$gshare"
  echo "# gpu: $(gpu_line)"
  echo "# sizes=$sizes quantum=$quantum job=$job engine=${ENGINE:-none} gpu_limit=${GPU_LIMIT:-auto}"
} >"$out/summary.txt"
mem_flag=()
[[ -n $ENGINE ]] && mem_flag=(--memory "$ENGINE")
timeout 30 "$gshare" daemon stop >/dev/null 2>&1 || true
echo "# $(host_warm)" >>"$out/summary.txt"

job_cmd() {   # job_cmd N SEED STOPFILE
  if [[ $job == stress ]]; then
    cmd=("$python" "$bench/mem_stress.py" --gib "$1" --seed "$2" --cycles 0 --stop-file "$3"
         --gap-ms 0 --small 200 --full-every 10)
  else
    cmd=("$python" "$bench/mem_train.py" --gib "$1" --seed "$2" --cpu-fraction 0
         --target-seconds $((hold / 2)))
  fi
  cmd+=("${job_args[@]}")
}

for n in $sizes; do
  d="$out/size$n"
  run="$work/size$n"
  mkdir -p "$d" "$run"
  limit="${GPU_LIMIT:-auto}"
  if [[ $limit == auto ]]; then
    limit="$((n * 3 / 2))GiB"
    ((n * 3 / 2 >= 76)) && limit=0
  fi
  write_config "$d/config.toml" "$run" "$quantum" "$limit"
  daemon_up "$d/config.toml" || continue
  poll_start "$d/status.jsonl"
  stop="$run/stop"
  g=("$gshare" --config "$d/config.toml" run "${mem_flag[@]}" --quantum "$quantum")
  say "size $n GiB: two $job jobs, gpu_limit $limit"
  echo "size${n}_start $(now)" >>"$times"
  job_cmd "$n" 1 "$stop"
  job_start A "$d/A.out" "$tmo" "${g[@]}" -J A -- "${cmd[@]}"
  job_cmd "$n" 2 "$stop"
  job_start B "$d/B.out" "$tmo" "${g[@]}" -J B -- "${cmd[@]}"
  t0=$SECONDS
  while (($(jobs_alive) > 0)); do
    count=$(status_json | "$python" "$bench/benchlib.py" handoff-count 2>/dev/null)
    if [[ ! -e $stop ]] && ((${count:-0} >= want || SECONDS - t0 >= hold)); then
      say "size $n GiB: ${count:-0} hand-offs after $((SECONDS - t0)) s: stopping the jobs"
      touch "$stop"
    fi
    sleep 1
  done
  touch "$stop"
  jobs_wait "size$n" "$times"
  poll_stop
  status_json >"$d/status_end.json"
  daemon_down
  cp "$run/state/daemon.log" "$d/daemon.log" 2>/dev/null || say "size $n: no daemon log"
done

"$python" "$bench/benchlib.py" mem-handoff "$out" | tee -a "$out/summary.txt"
rc=${PIPESTATUS[0]}
say "results in $out"
exit "$rc"
