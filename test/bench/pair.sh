#!/usr/bin/env bash
# The main demo: two real trainings share one GPU under gshare and compute exactly what they
# compute alone.
#   1. examples/train_cnn.py and examples/train_gpt.py bare, one after the other (serial time,
#      reference losses);
#   2. both at once, `gshare run -J cnn -- ...  &  gshare run -J gpt -- ... &`, with `gshare status`
#      captured every STATUS_EVERY seconds while they run;
#   3. the losses of each shared run compared line by line with its bare run (identical required),
#      then each job's turnaround, the makespan and makespan/serial.
#
#   test/bench/pair.sh GSHARE_BIN
#
# Env:
#   OUT               results go to $OUT/pair/ (default ./out)
#   PYTHON            interpreter (default python3)
#   CNN_ARGS, GPT_ARGS  extra arguments for the examples (word-split), e.g. GPT_ARGS="--steps 200"
#   PAIR_TIMEOUT      seconds allowed to each run (default 400)
#   STATUS_EVERY      seconds between `gshare status` snapshots (default 5)
#   GSHARE_RUN_ARGS   extra arguments for both `gshare run`s (word-split)
# Output in $OUT/pair/: bare_{cnn,gpt}.out, shared_{cnn,gpt}.out, status.log, times.txt,
# summary.txt. Runtime with the default sizes: ~2.5 min serial + ~2.5 min shared on an H100.
# Exit: 0 when all four runs succeed and the losses are identical, 1 otherwise, 2 on usage errors.
set -uo pipefail

if [[ $# -ne 1 || "$1" == -h || "$1" == --help ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 2
fi
gbin="$(cd "$1" 2>/dev/null && pwd)" || { echo "pair: no such directory: $1" >&2; exit 2; }
gshare="$gbin/gshare"
[[ -x "$gshare" ]] || { echo "pair: $gshare missing or not executable" >&2; exit 2; }

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mkdir -p "${OUT:-./out}/pair"
out="$(cd "${OUT:-./out}/pair" && pwd)"
python="${PYTHON:-python3}"
tmo="${PAIR_TIMEOUT:-400}"
every="${STATUS_EVERY:-5}"
read -r -a run_args <<< "${GSHARE_RUN_ARGS:-}"
read -r -a cnn_args <<< "${CNN_ARGS:-}"
read -r -a gpt_args <<< "${GPT_ARGS:-}"
cnn=("$python" "$root/examples/train_cnn.py" "${cnn_args[@]}")
gpt=("$python" "$root/examples/train_gpt.py" "${gpt_args[@]}")

now() { date +%s.%N; }
say() { echo "pair: $*" >&2; }
rm -f "$out"/*.out "$out/times.txt" "$out/status.log" "$out/summary.txt"
echo "# key value [rc]  (bare_*: wall seconds; shared_*: epoch seconds)" >"$out/times.txt"
{
  echo "# pair.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) host=$(hostname) gshare=$gshare"
  echo "# cnn: ${cnn[*]}"
  echo "# gpt: ${gpt[*]}"
  echo "# gpu: $(timeout 20 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
} >"$out/summary.txt"

# 1. Serial, bare.
for job in cnn gpt; do
  if [[ $job == cnn ]]; then cmd=("${cnn[@]}"); else cmd=("${gpt[@]}"); fi
  say "bare $job: ${cmd[*]}"
  t0=$(now)
  timeout -k 10 "$tmo" "${cmd[@]}" >"$out/bare_$job.out" 2>"$out/bare_$job.err"
  rc=$?
  t1=$(now)
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
  echo "bare_$job $wall $rc" >>"$out/times.txt"
  say "bare $job: rc=$rc ${wall}s"
done

# 2. Both at once under gshare. The daemon is up before the clock starts.
# A daemon left by an earlier run keeps the configuration it started with: start afresh.
timeout 30 "$gshare" daemon stop >/dev/null 2>&1 || true
timeout 30 "$gshare" status >"$out/status_before.txt" 2>&1 || say "gshare status failed (rc $?)"
(
  # Snapshots until pair.sh kills this loop; each bounded so a hung daemon cannot stall it.
  while :; do
    echo "=== $(date +%T.%N | cut -c1-12)"
    timeout 10 "$gshare" status 2>&1
    sleep "$every"
  done
) >"$out/status.log" 2>&1 &
poller=$!

pids=()
start=$(now)
echo "shared_start $start" >>"$out/times.txt"
say "shared: cnn and gpt under gshare run"
for job in cnn gpt; do
  if [[ $job == cnn ]]; then cmd=("${cnn[@]}"); else cmd=("${gpt[@]}"); fi
  (
    timeout -k 10 "$tmo" "$gshare" run -J "$job" "${run_args[@]}" -- "${cmd[@]}" \
      >"$out/shared_$job.out" 2>"$out/shared_$job.err"
    rc=$?
    echo "shared_${job}_end $(now) $rc" >>"$out/times.txt"
  ) &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
kill "$poller" 2>/dev/null
wait "$poller" 2>/dev/null
timeout 30 "$gshare" status >"$out/status_after.txt" 2>&1 || true

# 3. Compare and summarize.
"$python" "$root/test/bench/benchlib.py" pair "$out" | tee -a "$out/summary.txt"
rc=${PIPESTATUS[0]}
say "results in $out (summary.txt, status.log)"
exit "$rc"
