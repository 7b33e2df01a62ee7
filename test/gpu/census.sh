#!/usr/bin/env bash
# Census: does every GPU submission of real frameworks pass gshare's gate? For each workload it
# runs `gshare run -- <workload>` with two independent counters in the process:
#   - the shim's own census (GSHARE_CENSUS=<dir>/shim -> <dir>/shim.<pid>: gated calls and
#     synchronizations per export),
#   - test/gpu/cupti_counter.c, preloaded too (GSHARE_CUPTI_OUT=<dir>/cupti -> <dir>/cupti.<pid>:
#     every driver API call CUPTI saw inside the driver, whatever route reached it),
# then test/gpu/census_compare.py prints the per-family table and "escapes: N".
#
#   test/gpu/census.sh GSHARE_BIN [WORKLOAD...]
#
# GSHARE_BIN: the directory holding the built `gshare` and `libgshare.so`.
# WORKLOADs (default: all): torch torch_compile jax cupy triton static static_ptds
# Env:
#   OUT                 results go to $OUT/census/ (default ./out)
#   PYTHON              interpreter for the Python workloads (default python3)
#   CENSUS_TIMEOUT      seconds per workload (default 300)
#   CENSUS_CUPTI_MODE   preload (default: LD_PRELOAD next to libgshare.so) or injection
#                       (CUDA_INJECTION64_PATH: the driver loads the counter in cuInit)
#   GSHARE_RUN_ARGS     extra arguments for `gshare run` (word-split), e.g. "--memory off"
#   CUDA_HOME, NVCC_ARCH (default -arch=sm_90), CENSUS_BUILD (default ${TMPDIR:-/tmp}/gshare-census-build)
# Exit status: census_compare.py's (0 = no escapes, 1 = escapes, 2 = a workload failed or was
# not counted). Runtime on an H100: ~3-6 min for all workloads (torch_compile compiles ~1 min).
set -uo pipefail

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 2; }
[[ $# -ge 1 ]] || usage
[[ "$1" == -h || "$1" == --help ]] && usage

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
gbin="$(cd "$1" 2>/dev/null && pwd)" || { echo "census: no such directory: $1" >&2; exit 2; }
shift
gshare="$gbin/gshare"
libgshare="$gbin/libgshare.so"
[[ -x "$gshare" ]] || { echo "census: $gshare missing or not executable" >&2; exit 2; }
[[ -f "$libgshare" ]] || { echo "census: $libgshare missing" >&2; exit 2; }

out_root="${OUT:-./out}"
mkdir -p "$out_root/census"
out="$(cd "$out_root/census" && pwd)"
python="${PYTHON:-python3}"
tmo="${CENSUS_TIMEOUT:-300}"
mode="${CENSUS_CUPTI_MODE:-preload}"
build="${CENSUS_BUILD:-${TMPDIR:-/tmp}/gshare-census-build}"
arch="${NVCC_ARCH:--arch=sm_90}"
cuda="${CUDA_HOME:-/usr/local/cuda}"
[[ -d "$cuda" ]] || cuda=/usr/local/cuda-13.0
read -r -a run_args <<< "${GSHARE_RUN_ARGS:-}"

all=(torch torch_compile jax cupy triton static static_ptds)
workloads=("$@")
[[ ${#workloads[@]} -gt 0 ]] || workloads=("${all[@]}")

log() { echo "census: $*" | tee -a "$out/census.log" >&2; }

# --- build the independent counter and the static-cudart program ---------------------------------
mkdir -p "$build"
counter="$(timeout 120 "$here/build_cupti_counter.sh" "$build" 2>"$build/cupti_build.err" | tail -1)"
if [[ ! -f "$counter" ]]; then
  cat "$build/cupti_build.err" >&2
  log "could not build the CUPTI counter"
  exit 2
fi
need_static=0
for w in "${workloads[@]}"; do [[ $w == static* ]] && need_static=1; done
if [[ $need_static == 1 ]]; then
  nvcc="$cuda/bin/nvcc"
  command -v "$nvcc" >/dev/null 2>&1 || nvcc=nvcc
  timeout 300 "$nvcc" -O2 -cudart static $arch -o "$build/census_static" "$here/census_static.cu" \
    || { log "nvcc failed (census_static)"; exit 2; }
  timeout 300 "$nvcc" -O2 -cudart static $arch --default-stream per-thread \
    -o "$build/census_static_ptds" "$here/census_static.cu" \
    || { log "nvcc failed (census_static_ptds)"; exit 2; }
fi

# Start the daemon now, without the counter in its environment: a daemon auto-started by the first
# `gshare run` below would inherit LD_PRELOAD and the output paths of that workload.
timeout 30 env -u LD_PRELOAD -u GSHARE_CENSUS -u GSHARE_CUPTI_OUT "$gshare" status \
  >"$out/status_before.txt" 2>&1 || log "gshare status failed before the census (rc $?)"

workload_cmd() {
  case "$1" in
    torch)         cmd=("$python" "$here/census_torch.py") ;;
    torch_compile) cmd=("$python" "$here/census_torch_compile.py") ;;
    jax)           cmd=("$python" "$here/census_jax.py") ;;
    cupy)          cmd=("$python" "$here/census_cupy.py") ;;
    triton)        cmd=("$python" "$here/census_triton.py") ;;
    static)        cmd=("$build/census_static") ;;
    static_ptds)   cmd=("$build/census_static_ptds") ;;
    *) return 1 ;;
  esac
}

for w in "${workloads[@]}"; do
  workload_cmd "$w" || { log "unknown workload '$w' (known: ${all[*]})"; exit 2; }
  dir="$out/$w"
  rm -rf "$dir"
  mkdir -p "$dir"
  envs=(GSHARE_CENSUS="$dir/shim" GSHARE_CUPTI_OUT="$dir/cupti")
  if [[ $mode == injection ]]; then
    envs+=(CUDA_INJECTION64_PATH="$counter")
  else
    # `gshare run` prepends libgshare.so, so the job sees LD_PRELOAD=libgshare.so:<counter>.
    envs+=(LD_PRELOAD="$counter${LD_PRELOAD:+:$LD_PRELOAD}")
  fi
  log "$w: ${cmd[*]}"
  start=$(date +%s.%N)
  # env inside timeout: the counter is preloaded into gshare and the job, not into timeout itself.
  timeout -k 10 "$tmo" env "${envs[@]}" "$gshare" run "${run_args[@]}" -- "${cmd[@]}" \
    >"$dir/stdout" 2>"$dir/stderr"
  rc=$?
  end=$(date +%s.%N)
  echo "$rc" >"$dir/rc"
  printf '%s\n' "${cmd[*]}" >"$dir/cmd"
  secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  log "$w: rc=$rc ${secs}s shim_files=$(ls "$dir" | grep -c '^shim\.') cupti_files=$(ls "$dir" | grep -c '^cupti\.')"
  [[ $rc == 0 ]] || tail -5 "$dir/stderr" | sed "s/^/census: $w stderr: /" >&2
done

timeout 30 env -u LD_PRELOAD "$gshare" status >"$out/status_after.txt" 2>&1 || true
"$python" "$here/census_compare.py" "$out" "${workloads[@]}" --json "$out/report.json" | tee "$out/report.txt"
rc=${PIPESTATUS[0]}
"$python" "$here/census_compare.py" "$out" "${workloads[@]}" --all >"$out/report_all.txt" 2>&1 || true
log "report: $out/report.txt (all driver calls: $out/report_all.txt); exit $rc"
exit "$rc"
