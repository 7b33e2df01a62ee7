#!/usr/bin/env bash
# Start-up of PyTorch jobs bare and under gshare, alone and two at once: where the seconds
# before a job's first step go (test/bench/startup_probe.py's phases), to tell gshare's own
# cost from the driver's and the host's.
#
#   test/bench/mem_startup.sh GSHARE_DIR       (GSHARE_DIR holds gshare and libgshare.so)
#
# Per round (ROUNDS, default 2), four cases, each job under `timeout`:
#   bare_solo   one probe, no gshare;
#   bare_pair   two probes started at once, no gshare;
#   gshare_solo one probe under `gshare run` (a fresh daemon, default config, [memory] swap);
#   gshare_pair two probes at once under `gshare run` (GIB each: 2 x 30 GiB fit the H100, so
#               the GPU stays in shared mode and only the start-up is measured).
# The gshare cases run with GSHARE_CENSUS, so the shim's per-export counts land in
# <case>/census.<pid> (which synchronization revision the job reached, for one).
#
# Env: OUT (default ./out; results in $OUT/mem_startup/), PYTHON, GIB (default 30), ROUNDS.
# Output: one line per probe in summary.txt: `round=<r> case=<c> startup import=... total=...`.
# Exit: 0 when every probe printed its line, 1 otherwise, 2 on usage errors.
set -uo pipefail

me=mem_startup
source "$(dirname "${BASH_SOURCE[0]}")/mem_common.sh"
mem_setup "$@"

GIB=${GIB:-30}
ROUNDS=${ROUNDS:-2}
out="${OUT:-./out}/mem_startup"
mkdir -p "$out"
summary="$out/summary.txt"
echo "# $me $(date -u +%FT%TZ) gib=$GIB rounds=$ROUNDS gpu: $(gpu_line)" >"$summary"
probe=("$python" "$bench/startup_probe.py" --gib "$GIB")
fails=0

run_case() {  # run_case ROUND CASE N [gshare]: N probes at once, then their lines
  local r=$1 c=$2 n=$3 dir="$out/r$1/$2" i
  mkdir -p "$dir"
  for ((i = 0; i < n; i++)); do
    if [[ ${4:-} == gshare ]]; then
      job_start "$c$i" "$dir/p$i.out" 120 env GSHARE_CENSUS="$dir/census" \
        "$gshare" --config "$daemon_cfg" run -J "p$i" -- "${probe[@]}"
    else
      job_start "$c$i" "$dir/p$i.out" 120 "${probe[@]}"
    fi
  done
  jobs_wait "r${r}_$c" "$out/times.txt"
  for ((i = 0; i < n; i++)); do
    if grep -q '^startup ' "$dir/p$i.out"; then
      echo "round=$r case=$c $(grep '^startup ' "$dir/p$i.out")" | tee -a "$summary"
    else
      say "round $r $c probe $i printed no line: $(tail -2 "$dir/p$i.err" | tr '\n' ' ')"
      fails=$((fails + 1))
    fi
  done
}

for ((r = 1; r <= ROUNDS; r++)); do
  run_case "$r" bare_solo 1
  run_case "$r" bare_pair 2
  run_dir="$work/r$r"
  mkdir -p "$run_dir"
  ENGINE=swap write_config "$run_dir/config.toml" "$run_dir" 20s
  daemon_up "$run_dir/config.toml" || { fails=$((fails + 1)); continue; }
  run_case "$r" gshare_solo 1 gshare
  run_case "$r" gshare_pair 2 gshare
  daemon_down
done
((fails == 0)) || { say "$fails probe(s) failed"; exit 1; }
say "OK"
