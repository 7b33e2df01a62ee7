#!/usr/bin/env bash
# Microbenchmarks of the lease on the GPU machine (docs/benchmarks.md):
#   1. gated fast path: ns per cuLaunchKernel call, bare vs under `gshare run` (3 each,
#      interleaved), for real launches and for launches the driver rejects (the shim alone)
#   2. re-grant latency: us from a launch after an idle release to its return
#   3. release latency with the GPU busy: a holder keeps DEPTH 1-ms kernels in flight; a
#      higher-priority job's first launch waits for the holder's drain (us)
# Usage: test/bench/micro.sh GSHARE_BIN     (results on stdout and in $OUT/micro.txt)
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
gbin="$(cd "$1" && pwd)"
out="${OUT:-./out}"
mkdir -p "$out"
exe="${TMPDIR:-/tmp}/lease_bench"
g++ -O2 -std=c++20 -o "$exe" "$here/lease_bench.cc" -ldl || exit 2
cfg="${TMPDIR:-/tmp}/gshare-micro.toml"
printf '[scheduler]\nidle_release = "100ms"\nquantum = "60s"\n' > "$cfg"
gs() { timeout 120 "$gbin/gshare" --config "$cfg" run "$@"; }
timeout 30 "$gbin/gshare" daemon stop >/dev/null 2>&1 || true  # start with this config
{
  echo "# micro.sh $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
  for i in 1 2 3; do
    echo "fastpath bare run $i"; timeout 120 "$exe" fastpath 200000
    echo "fastpath gshare run $i"; gs -J fast -- "$exe" fastpath 200000
  done
  for i in 1 2 3; do
    echo "gate bare run $i"; timeout 120 "$exe" gate 2000000
    echo "gate gshare run $i"; gs -J gate -- "$exe" gate 2000000
  done
  echo "regrant bare (launch after 300 ms sleep)"; timeout 120 "$exe" grant 30 300
  echo "regrant gshare (idle release 100 ms, then launch after 300 ms)"; gs -J grant -- "$exe" grant 30 300
  [ "${MICRO_GATE_ONLY:-0}" = 1 ] && exit 0
  # 4. drains under round robin: two jobs of equal priority, quantum 1 s, each keeping 256
  #    1-ms kernels queued; with the in-flight window (64 launches) and without it.
  rr="${TMPDIR:-/tmp}/gshare-micro-rr.toml"
  printf '[scheduler]\nquantum = "1s"\n' > "$rr"
  for window in 64 0; do
    echo "round robin drains, GSHARE_INFLIGHT_LAUNCHES=$window"
    timeout 30 "$gbin/gshare" daemon stop >/dev/null 2>&1
    for j in a b; do
      GSHARE_INFLIGHT_LAUNCHES=$window timeout 120 "$gbin/gshare" --config "$rr" run -J "rr$j" -- \
        "$exe" hog 8 256 1000 > /dev/null &
    done
    wait
    timeout 30 "$gbin/gshare" --config "$rr" status --json | python3 -c '
import json, sys
g = json.load(sys.stdin)["gpus"][0]
print("drains %d\nlast_drain_ms %.1f\nmax_drain_ms %.1f" % (g["drains"], g["last_drain_ms"], g["max_drain_ms"]))'
  done
  timeout 30 "$gbin/gshare" daemon stop >/dev/null 2>&1
  for depth in 1 16 64; do
    echo "release with GPU busy: holder keeps $depth x 1 ms kernels in flight"
    gs -J hog -- "$exe" hog 9 "$depth" 1000 > /dev/null &
    hog=$!
    sleep 3
    for i in 1 2 3 4 5; do gs -J probe -p 5 -- "$exe" probe; sleep 0.5; done
    wait "$hog"
  done
} 2>&1 | tee "$out/micro.txt"
