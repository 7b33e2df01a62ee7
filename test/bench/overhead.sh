#!/usr/bin/env bash
# Solo overhead of gshare: the same training run bare and under `gshare run`, alone on the GPU,
# interleaved (bare, gshare, bare, gshare, ...) so drift in clocks or caches hits both modes alike.
#
#   test/bench/overhead.sh GSHARE_BIN
#
# Times come from the example's own done line: seconds= (process start to end: import, CUDA
# init, data, training) and train_seconds= (first step to last, bracketed by cuda.synchronize).
# Prints mean/min per mode and the overhead in percent; checks that both modes print the same
# losses. Raw lines (`workload mode rep rc seconds train_seconds`) go to $OUT/overhead.txt, the
# summary to $OUT/overhead_summary.txt, each run's output to $OUT/overhead/.
#
# Env:
#   OUT             results directory (default ./out)
#   PYTHON          interpreter (default python3)
#   REPS            runs per mode and workload (default 3)
#   GPT_STEPS       steps of examples/train_gpt.py per run (default 160, ~30 s on an H100)
#   CNN_STEPS       steps of examples/train_cnn.py per run (default 0 = skip; ~2500 for ~30 s)
#   GPT_ARGS, CNN_ARGS   extra arguments for the examples (word-split)
#   WARMUP          1 (default): one short bare run first, not counted (file cache, GPU clocks)
#   BENCH_TIMEOUT   seconds per run (default 240)
#   GSHARE_RUN_ARGS extra arguments for `gshare run` (word-split)
# Runtime: 2 x REPS x ~35 s per workload + warm-up: ~4 min for the defaults.
# Exit: 0 when every run succeeded and losses matched, 1 otherwise, 2 on usage errors.
set -uo pipefail

if [[ $# -ne 1 || "$1" == -h || "$1" == --help ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 2
fi
gbin="$(cd "$1" 2>/dev/null && pwd)" || { echo "overhead: no such directory: $1" >&2; exit 2; }
gshare="$gbin/gshare"
[[ -x "$gshare" ]] || { echo "overhead: $gshare missing or not executable" >&2; exit 2; }

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bench="$root/test/bench"
mkdir -p "${OUT:-./out}"
out="$(cd "${OUT:-./out}" && pwd)"
runs="$out/overhead"
mkdir -p "$runs"
python="${PYTHON:-python3}"
reps="${REPS:-3}"
tmo="${BENCH_TIMEOUT:-240}"
read -r -a run_args <<< "${GSHARE_RUN_ARGS:-}"
read -r -a gpt_args <<< "${GPT_ARGS:-}"
read -r -a cnn_args <<< "${CNN_ARGS:-}"

workloads=()
[[ "${GPT_STEPS:-160}" -gt 0 ]] && workloads+=(gpt)
[[ "${CNN_STEPS:-0}" -gt 0 ]] && workloads+=(cnn)
[[ ${#workloads[@]} -gt 0 ]] || { echo "overhead: GPT_STEPS and CNN_STEPS are both 0" >&2; exit 2; }

example_cmd() {   # $1 = gpt|cnn, $2 = steps
  case "$1" in
    gpt) cmd=("$python" "$root/examples/train_gpt.py" --steps "$2" "${gpt_args[@]}") ;;
    cnn) cmd=("$python" "$root/examples/train_cnn.py" --steps "$2" "${cnn_args[@]}") ;;
  esac
}

raw="$out/overhead.txt"
{
  echo "# overhead.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) host=$(hostname) reps=$reps gshare=$gshare"
  echo "# gpu: $(timeout 20 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "# workload mode rep rc seconds train_seconds"
} >"$raw"

# The daemon is started before the first timed gshare run, so that run does not pay its start-up.
# A daemon left by an earlier run keeps the configuration it started with: start afresh.
timeout 30 "$gshare" daemon stop >/dev/null 2>&1 || true
timeout 30 "$gshare" status >"$runs/status_before.txt" 2>&1 || echo "overhead: gshare status failed (rc $?)" >&2

if [[ "${WARMUP:-1}" == 1 ]]; then
  example_cmd "${workloads[0]}" 10
  echo "overhead: warm-up: ${cmd[*]}" >&2
  timeout -k 10 "$tmo" "${cmd[@]}" >"$runs/warmup.out" 2>&1 || echo "overhead: warm-up failed (rc $?)" >&2
fi

status=0
for w in "${workloads[@]}"; do
  if [[ $w == gpt ]]; then steps="${GPT_STEPS:-160}"; else steps="${CNN_STEPS:-0}"; fi
  example_cmd "$w" "$steps"
  for ((r = 1; r <= reps; r++)); do
    for mode in bare gshare; do
      log="$runs/${w}_${mode}_${r}.out"
      if [[ $mode == bare ]]; then
        timeout -k 10 "$tmo" "${cmd[@]}" >"$log" 2>&1
      else
        timeout -k 10 "$tmo" "$gshare" run "${run_args[@]}" -- "${cmd[@]}" >"$log" 2>&1
      fi
      rc=$?
      read -r secs train _ < <("$python" "$bench/benchlib.py" done "$log")
      echo "$w $mode $r $rc ${secs:--} ${train:--}" >>"$raw"
      echo "overhead: $w $mode rep $r: rc=$rc seconds=${secs:--} train_seconds=${train:--}" >&2
      [[ $rc == 0 ]] || { status=1; tail -3 "$log" | sed 's/^/  | /' >&2; }
    done
    if ! "$python" "$bench/benchlib.py" same-losses "$runs/${w}_bare_${r}.out" "$runs/${w}_gshare_${r}.out" \
        >"$runs/${w}_losses_${r}.txt"; then
      status=1
    fi
    echo "overhead: $w rep $r: $(cat "$runs/${w}_losses_${r}.txt")" >&2
  done
done

"$python" "$bench/benchlib.py" overhead "$raw" | tee "$out/overhead_summary.txt" || status=1
echo "raw: $raw"
exit "$status"
