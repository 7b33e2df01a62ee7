#!/usr/bin/env bash
# What being an MPS client costs a chain of small kernels (mps_floor.py), in one call, case by
# case, each run at the shapes of SHAPES (KERNELS:HIDDEN pairs, default "400:2048 40:2048
# 64:8192"): a cost per kernel is told from a fixed one, and latency-bound kernels from
# bandwidth-bound ones:
#   bare        the process alone on the GPU
#   mps         a client of a private MPS control daemon of this script (mps_common.sh)
#   mpsconn1    the same with CUDA_DEVICE_MAX_CONNECTIONS=1 in the client
#   mpsconn32   the same with CUDA_DEVICE_MAX_CONNECTIONS=32
#   gsiso       under `gshare run -p 10` of a daemon with [mps] auto, the job asking for
#               isolation (GSHARE_MPS=0): the shim's cost alone, no MPS
#   gsmps       under `gshare run -p 10` with [mps] auto: a client of gshare's own MPS server
#
#   test/bench/mps_floor.sh GSHARE_DIR        (GSHARE_DIR holds gshare and libgshare.so)
#
# Knobs: CASES (default all six, in that order), SHAPES, REPLAYS (default 300).
# Output: $OUT/mps_floor/summary.txt, one line per case and shape:
#   case=<c> kernels=<n> hidden=<h> graph_ms_p50=.. graph_ms_p99=.. io_ms_p50=.. io_ms_p99=..
#   eager_ms_p50=.. eager_ms_p99=.. graph_us_per_kernel=.. eager_us_per_kernel=..
# and each run's output in $OUT/mps_floor/<case>_<n>_<h>.out. Exit 0 when every run gave its
# line.
# Needs the GPU machine, bash >= 5.1 and a python with torch (PYTHON, default python3).
set -uo pipefail
me=mps_floor
# shellcheck source=mem_common.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/mem_common.sh"
mem_setup "$@"
# shellcheck source=mps_common.sh source-path=SCRIPTDIR
source "$bench/mps_common.sh"
trap 'mem_cleanup; mps_down' EXIT

res="${OUT:-./out}/mps_floor"
mkdir -p "$res"
summary="$res/summary.txt"
read -r -a cases <<<"${CASES:-bare mps mpsconn1 mpsconn32 gsiso gsmps}"
read -r -a shapes <<<"${SHAPES:-400:2048 40:2048 64:8192}"
echo "# mps_floor.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) host=$(hostname) gshare=$gshare" >"$summary"
echo "# cases=${cases[*]} shapes=${shapes[*]} replays=${REPLAYS:-300}" >>"$summary"

# one CASE N H PREFIX...: runs mps_floor.py at N kernels of width H behind PREFIX; appends its
# line.
one() {
  local c=$1 n=$2 h=$3 out="$res/${1}_$2_$3.out"
  shift 3
  bounded 120 "$@" "$python" "$bench/mps_floor.py" --kernels "$n" --replays "${REPLAYS:-300}" \
    --hidden "$h" >"$out" 2>&1
  "$python" - "$c" "$out" >>"$summary" <<'EOF' || { echo "case=$c kernels=$n hidden=$h failed" >>"$summary"; return 1; }
import json, sys
case, path = sys.argv[1:3]
line = next(l for l in open(path) if l.startswith('{"kind": "mps_floor"'))
d = json.loads(line)
keys = ["kernels", "hidden", "graph_ms_p50", "graph_ms_p99", "io_ms_p50", "io_ms_p99",
        "eager_ms_p50", "eager_ms_p99", "graph_us_per_kernel", "eager_us_per_kernel"]
print(f"case={case} " + " ".join(f"{k}={d[k]}" for k in keys))
EOF
}

fails=0
for c in "${cases[@]}"; do
  pre=()
  case $c in
    bare) ;;
    mps | mpsconn1 | mpsconn32)
      mps_up "$res" || { echo "case=$c mps_failed" >>"$summary"; fails=$((fails + 1)); continue; }
      [[ $c == mpsconn* ]] && pre=(env "CUDA_DEVICE_MAX_CONNECTIONS=${c#mpsconn}") ;;
    gsiso | gsmps)
      mkdir -p "$work/$c"
      MPS_MODE=auto write_config "$work/$c/config.toml" "$work/$c" 200ms
      daemon_up "$work/$c/config.toml" || { echo "case=$c daemon_failed" >>"$summary"; fails=$((fails + 1)); continue; }
      pre=("$gshare" --config "$work/$c/config.toml" run -p 10 --name floor --)
      [[ $c == gsiso ]] && pre=(env GSHARE_MPS=0 "${pre[@]}") ;;
    *) say "unknown case $c"; exit 2 ;;
  esac
  for shape in "${shapes[@]}"; do
    say "$c: ${shape%%:*} kernels of width ${shape##*:}"
    one "$c" "${shape%%:*}" "${shape##*:}" "${pre[@]}" || fails=$((fails + 1))
  done
  mps_down
  if [[ $c == gs* ]]; then
    daemon_down
    cp "$work/$c/state/daemon.log" "$res/${c}_daemon.log" 2>/dev/null
  fi
done
cat "$summary"
((fails == 0))
