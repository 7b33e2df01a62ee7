#!/usr/bin/env bash
# Start-up of PyTorch jobs bare and under gshare, alone and two at once: where the seconds
# before a job's first step go (test/bench/startup_probe.py's phases), to tell gshare's own
# cost from the driver's and the host's.
#
#   test/bench/mem_startup.sh GSHARE_DIR       (GSHARE_DIR holds gshare and libgshare.so)
#
# Per round (ROUNDS, default 2), the cases of CASES (default all four), each job under `timeout`:
#   bare_solo   one probe, no gshare;
#   bare_pair   two probes started at once, no gshare;
#   gshare_solo one probe under `gshare run` (a fresh daemon, default config, [memory] swap);
#   gshare_pair two probes at once under `gshare run` (GIB each: 2 x 30 GiB fit the H100, so
#               the GPU stays in shared mode and only the start-up is measured).
# The gshare cases run with GSHARE_CENSUS, so the shim's per-export counts land in
# <case>/census.<pid> (which synchronization revision the job reached, for one).
#
# Env: OUT (default ./out; results in $OUT/mem_startup/), PYTHON, GIB (default 30), ROUNDS, CASES.
# Output: one line per probe in summary.txt: `round=<r> case=<c> startup import=... total=...
# ... free=<s> ... pre=<s> post=<s>`: pre from the launch (`gshare run` or the bare interpreter)
# to the probe's first line, post from its last line to the launched process's exit
# (interpreter and CUDA teardown; under gshare also the shim's and the client's). The probe
# gives its GIB back before its line (free=: the cuMemFree of GIB, bare or through the shim's
# memory engine), so post holds no free of it.
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
  local launch=()
  for ((i = 0; i < n; i++)); do
    launch+=("$(now)")
    if [[ ${4:-} == gshare ]]; then
      job_start "$c$i" "$dir/p$i.out" 120 env GSHARE_CENSUS="$dir/census" \
        "$gshare" --config "$daemon_cfg" run -J "p$i" -- "${probe[@]}"
    else
      job_start "$c$i" "$dir/p$i.out" 120 "${probe[@]}"
    fi
  done
  jobs_wait "r${r}_$c" "$out/times.txt"
  local line end
  for ((i = 0; i < n; i++)); do
    if grep -q '^startup ' "$dir/p$i.out"; then
      line=$(grep '^startup ' "$dir/p$i.out")
      end=$(awk -v k="r${r}_${c}_${c}${i}_end" '$1 == k { print $2 }' "$out/times.txt" | tail -1)
      line+=$(awk -v l="$line" -v a="${launch[$i]}" -v e="$end" 'BEGIN {
        n = split(l, f, " "); for (j = 1; j <= n; j++) { split(f[j], kv, "="); v[kv[1]] = kv[2] }
        printf " pre=%.3f post=%.3f", v["t0"] - a, e - v["t1"] }')
      echo "round=$r case=$c $line" | tee -a "$summary"
    else
      say "round $r $c probe $i printed no line: $(tail -2 "$dir/p$i.err" | tr '\n' ' ')"
      fails=$((fails + 1))
    fi
  done
}

CASES=${CASES:-bare_solo bare_pair gshare_solo gshare_pair}
has() { [[ " $CASES " == *" $1 "* ]]; }
for ((r = 1; r <= ROUNDS; r++)); do
  has bare_solo && run_case "$r" bare_solo 1
  has bare_pair && run_case "$r" bare_pair 2
  has gshare_solo || has gshare_pair || continue
  run_dir="$work/r$r"
  mkdir -p "$run_dir"
  ENGINE=swap write_config "$run_dir/config.toml" "$run_dir" 20s
  daemon_up "$run_dir/config.toml" || { fails=$((fails + 1)); continue; }
  has gshare_solo && run_case "$r" gshare_solo 1 gshare
  has gshare_pair && run_case "$r" gshare_pair 2 gshare
  daemon_down
done
((fails == 0)) || { say "$fails probe(s) failed"; exit 1; }
say "OK"
