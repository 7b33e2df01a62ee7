#!/usr/bin/env bash
# Correctness stress of gshare's swap engine: test/bench/mem_stress.py jobs, one per PyTorch
# allocator in BACKENDS (native caching allocator, cudaMallocAsync, caching allocator with
# expandable segments, i.e. cuMemCreate/cuMemMap done by PyTorch), GIB each, under a daemon
# whose gpu_limit lets only one of them be resident and whose quantum is short, so that almost
# every turn swaps one job out and another in. Each job checks its tensors (512 B .. 1 GiB) bit for bit every
# cycle (and by checksums). Runs until the daemon reports CYCLES swaps in for each job (from
# `gshare status --json`), or STRESS_SECONDS pass, or a job ends; then creates the stop file, and
# each job checks everything a last time and exits.
#
#   test/bench/mem_stress.sh GSHARE_DIR        (GSHARE_DIR holds gshare and libgshare.so)
#
# PASS: every job exits 0 with mismatches=0, the async job really ran on cudaMallocAsync, the
# expandable one really had expandable segments, and each job was swapped in at least MIN_SWAPS
# times (reaching CYCLES is reported, not required).
#
# Env:
#   OUT             results go to $OUT/mem_stress/ (default ./out)
#   PYTHON          interpreter with torch (default python3)
#   BACKENDS        the jobs' allocators (default "native async expandable")
#   GIB             data per job in GiB (default 3; each job uses ~0.1 GiB more for its checks)
#   GPU_LIMIT       the daemon's gpu_limit (default 5GiB: one job fits, two do not)
#   QUANTUM         the lease's quantum (default 200ms)
#   CYCLES          swaps in per job to reach before stopping (default 1000)
#   MIN_SWAPS       swaps in per job required to pass (default 100)
#   STRESS_SECONDS  stop after this long in any case (default 450)
#   GAP_MS          each job's sleep between cycles (default 20; below idle_release, so turns
#                   end by the quantum's DROP while the job has work in flight)
#   ENGINE          memory engine (default swap)
#   STRESS_ARGS     extra arguments for both jobs (word-split)
#   HOST_BUDGET, IDLE_RELEASE   written to the daemon's config when set
#   RUN_TIMEOUT     seconds allowed to each job (default STRESS_SECONDS + 120)
# Output in $OUT/mem_stress/: config.toml, times.txt, <backend>.{out,err}, status.jsonl
# (every 0.5 s), progress.txt (swaps in per job every second), daemon.log, summary.txt.
# Runtime on an H100: a cycle of a 3 GiB job (1022 tensors) takes ~0.13 s alone (measured: it
# is bound by Python's launches); a turn is the 200 ms quantum plus a hand-off moving ~3 GiB out
# and ~3 GiB in (~0.1-0.15 s at 50-75 GB/s, estimated); with two jobs each is swapped in on
# every second hand-off: ~0.65-0.7 s per swap-in, so 1000 take ~11 min (three jobs: ~1 s per
# swap-in). Within one 10-minute device call the default STRESS_SECONDS=450 ends the run at
# ~650-700 per job with two jobs.
# Exit: 0 on PASS, 1 on FAIL, 2 on usage errors.
set -uo pipefail

me=mem_stress
# shellcheck source=mem_common.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/mem_common.sh"
mem_setup "$@"

gib="${GIB:-3}"
target="${CYCLES:-1000}"
min_swaps="${MIN_SWAPS:-100}"
limit_s="${STRESS_SECONDS:-450}"
ENGINE="${ENGINE-swap}"
tmo="${RUN_TIMEOUT:-$((limit_s + 120))}"
read -r -a stress_args <<< "${STRESS_ARGS:-}"
read -r -a backends <<< "${BACKENDS:-native async expandable}"
mkdir -p "${OUT:-./out}/mem_stress"
out="$(cd "${OUT:-./out}/mem_stress" && pwd)"
rm -rf "${out:?}"/*
times="$out/times.txt"
echo "# key value [rc]  (epoch seconds)" >"$times"
{
  echo "# mem_stress.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) host=$(hostname) gshare=$gshare"
  echo "# gpu: $(gpu_line)"
  echo "# gib=$gib gpu_limit=${GPU_LIMIT:-5GiB} quantum=${QUANTUM:-200ms} cycles=$target min_swaps=$min_swaps stress_seconds=$limit_s engine=${ENGINE:-none}"
} >"$out/summary.txt"
mem_flag=()
[[ -n $ENGINE ]] && mem_flag=(--memory "$ENGINE")
timeout 30 "$gshare" daemon stop >/dev/null 2>&1 || true

run="$work/stress"
mkdir -p "$run"
write_config "$out/config.toml" "$run" "${QUANTUM:-200ms}" "${GPU_LIMIT:-5GiB}"
daemon_up "$out/config.toml" || exit 1
poll_start "$out/status.jsonl"
stop="$run/stop"
g=("$gshare" --config "$out/config.toml" run "${mem_flag[@]}" --quantum "${QUANTUM:-200ms}")
echo "start $(now)" >>"$times"
seed=1
for backend in "${backends[@]}"; do
  job_start "$backend" "$out/$backend.out" "$tmo" "${g[@]}" -J "stress-$backend" -- \
    "$python" "$bench/mem_stress.py" --gib "$gib" --alloc-backend "$backend" --seed "$seed" \
    --cycles 0 --stop-file "$stop" --gap-ms "${GAP_MS:-20}" "${stress_args[@]}"
  seed=$((seed + 1))
done

t0=$SECONDS
while (($(jobs_alive) > 0)); do
  read -r -a swaps < <(status_json |
    "$python" "$bench/benchlib.py" swaps-in "${backends[@]/#/stress-}" 2>/dev/null)
  echo "$((SECONDS - t0)) ${swaps[*]:--}" >>"$out/progress.txt"
  if [[ ! -e $stop ]]; then
    why="" reached=1
    for n in "${swaps[@]:--}"; do [[ $n =~ ^[0-9]+$ ]] && ((n >= target)) || reached=0; done
    ((${#swaps[@]} == ${#backends[@]} && reached)) && why="all reached $target swaps in"
    ((SECONDS - t0 >= limit_s)) && why="$limit_s s passed"
    (($(jobs_alive) < ${#backends[@]})) && why="a job ended"
    if [[ -n $why ]]; then
      say "$why (${backends[*]}: ${swaps[*]:--}): stopping the jobs"
      touch "$stop"
    fi
  fi
  sleep 1
done
touch "$stop"
jobs_wait stress "$times"      # stress_<backend>_end
poll_stop
status_json >"$out/status_end.json"
daemon_down
cp "$run/state/daemon.log" "$out/daemon.log" 2>/dev/null || say "no daemon log"

"$python" "$bench/benchlib.py" mem-stress "$out" "$min_swaps" "$target" | tee -a "$out/summary.txt"
rc=${PIPESTATUS[0]}
say "results in $out"
exit "$rc"
