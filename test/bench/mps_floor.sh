#!/usr/bin/env bash
# What being an MPS client costs a chain of small kernels or an LLM decode step (mps_floor.py),
# in one call, case by case, each run at the shapes of SHAPES (default "400:2048 40:2048
# 64:8192"): KERNELS:HIDDEN, a chain, so that a cost per kernel is told from a fixed one and
# latency-bound kernels from bandwidth-bound ones; decode:B, one decode step of B lanes of
# llm_service.py's model, whose kernels are profiled (--profile) and compared with bare's:
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
#   case=<c> shape=chain|decode kernels=<n> hidden=<h> batch=<b> graph_ms_p50=.. graph_ms_p99=..
#   io_ms_p50=.. io_ms_p99=.. eager_ms_p50=.. eager_ms_p99=.. graph_us_per_kernel=..
#   eager_us_per_kernel=..
# then, for each decode shape and case other than bare, `compare <case> decode:<B>` and the
# kernels whose GPU time per replay grew the most (mps_floor.py --compare, bare as a); each
# run's output in $OUT/mps_floor/<case>_<a>_<b>.out. Exit 0 when every run gave its line.
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

# one CASE A B PREFIX...: runs mps_floor.py at shape A:B (N kernels of width H, or decode of B
# lanes) behind PREFIX; appends its line.
one() {
  local c=$1 n=$2 h=$3 out="$res/${1}_$2_$3.out"
  shift 3
  local -a shape_args=(--kernels "$n" --hidden "$h")
  [[ $n == decode ]] && shape_args=(--decode "$h" --profile)
  bounded 180 "$@" "$python" "$bench/mps_floor.py" "${shape_args[@]}" \
    --replays "${REPLAYS:-300}" >"$out" 2>&1
  "$python" - "$c" "$out" >>"$summary" <<'EOF' || { echo "case=$c kernels=$n hidden=$h failed" >>"$summary"; return 1; }
import json, sys
case, path = sys.argv[1:3]
line = next(l for l in open(path) if l.startswith('{"kind": "mps_floor"'))
d = json.loads(line)
keys = ["shape", "kernels", "hidden", "batch", "graph_ms_p50", "graph_ms_p99", "io_ms_p50", "io_ms_p99",
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
    say "$c: shape ${shape}"
    one "$c" "${shape%%:*}" "${shape##*:}" "${pre[@]}" || fails=$((fails + 1))
  done
  mps_down
  if [[ $c == gs* ]]; then
    daemon_down
    cp "$work/$c/state/daemon.log" "$res/${c}_daemon.log" 2>/dev/null
  fi
done
for shape in "${shapes[@]}"; do
  [[ $shape == decode:* && -s $res/bare_decode_${shape#decode:}.out ]] || continue
  for c in "${cases[@]}"; do
    [[ $c != bare && -s $res/${c}_decode_${shape#decode:}.out ]] || continue
    echo "compare $c $shape"
    "$python" "$bench/mps_floor.py" --compare "$res/bare_decode_${shape#decode:}.out" \
      "$res/${c}_decode_${shape#decode:}.out" 12
  done
done >>"$summary"
cat "$summary"
((fails == 0))
