#!/usr/bin/env bash
# Idle LLM-shaped services pooled on one GPU (issue 45 item 5; docs/benchmarks.md): SERVICES
# services (test/bench/pool_services.py serve: WEIGHTS_GIB GiB of weights and KV_GIB GiB of KV
# pool each, together more than the GPU), requests arriving at random to one at a time for
# RUN_SECONDS (think time THINK seconds, uniform); TTFT after a switch to another service.
#
#   pool_services.sh GSHARE_DIR      (GSHARE_DIR holds gshare and libgshare.so)
#
# CASES (default "alone gshare"):
#   alone    one service bare, the same requests: its TTFT while resident (the reference)
#   gshare   SERVICES services under gshare (swap engine, host_budget HOST_BUDGET, the services
#            of one user sharing one host pool), started one after another
# Knobs: SERVICES (4), WEIGHTS_GIB (26), KV_GIB (27), RUN_SECONDS (90), ALONE_SECONDS (30),
# THINK ("2,4"),
# HOST_BUDGET (96GiB), HOST_WARM_GIB (100), GSHARE_HOST_POOL (unset: shared; "process": a pool
# per process). Output: one `result` JSON line per case; the requests and the services' output
# in OUT (default a scratch folder); `meminfo` lines (Shmem: the shared pool's populated bytes)
# every 5 s in <case>_meminfo.txt.
me=pool_services
. "$(dirname "${BASH_SOURCE[0]}")/mem_common.sh"
mem_setup "$@"
out="${OUT:-$work/out}"
mkdir -p "$out"
SERVICES=${SERVICES:-4} WEIGHTS_GIB=${WEIGHTS_GIB:-26} KV_GIB=${KV_GIB:-27} RUN_SECONDS=${RUN_SECONDS:-90} ALONE_SECONDS=${ALONE_SECONDS:-30}
THINK=${THINK:-2,4}
export ENGINE=swap HOST_BUDGET=${HOST_BUDGET:-96GiB}
svc_args() { echo --weights-gib "$WEIGHTS_GIB" --kv-gib "$KV_GIB" --seed "$1" --sock "$2"; }

meminfo_start() {
  ( trap 'exit 0' TERM
    while :; do
      echo "meminfo $(date +%s) $(awk '/^(MemAvailable|Shmem|Mlocked):/ {printf "%s=%d ", $1, $2/1048576}' /proc/meminfo)GiB"
      sleep 5
    done ) >>"$1" &
  meminfo_pid=$!
}
meminfo_stop() { [[ -n ${meminfo_pid:-} ]] && kill "$meminfo_pid" 2>/dev/null; meminfo_pid=""; }

wait_ready() {  # FILE: until the service started last printed `ready` (or it died)
  local pid=${job_pids[-1]}
  until grep -q '^ready' "$1" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || { say "the service died: $(tail -2 "${1%.out}.err")"; return 1; }
    sleep 0.5
  done
}

echo "# $(date -u +%FT%TZ) gpu: $(gpu_line)"
host_warm
for c in ${CASES:-alone gshare}; do
  case $c in
    alone)
      job_start svc0 "$out/alone_svc0.out" 600 "$python" "$bench/pool_services.py" serve $(svc_args 0 "$work/alone0.sock")
      wait_ready "$out/alone_svc0.out" || continue
      bounded 600 "$python" "$bench/pool_services.py" drive --socks "$work/alone0.sock" \
        --seconds "$ALONE_SECONDS" --think "$THINK" --check >"$out/alone_drive.out" 2>"$out/alone_drive.err"
      jobs_wait alone "$out/alone_times"
      echo "result alone $(tail -1 "$out/alone_drive.out")"
      ;;
    gshare)
      write_config "$work/g.toml" "$work/g" 2s
      daemon_up "$work/g.toml" || continue
      poll_start "$out/gshare_status.jsonl"
      meminfo_start "$out/gshare_meminfo.txt"
      socks=""
      t0=$(now)
      for ((k = 0; k < SERVICES; k++)); do
        job_start "svc$k" "$out/gshare_svc$k.out" 1200 "$gshare" --config "$work/g.toml" run -J "svc$k" -- \
          "$python" "$bench/pool_services.py" serve $(svc_args "$k" "$work/svc$k.sock")
        wait_ready "$out/gshare_svc$k.out" || break
        say "service $k ready after $(awk "BEGIN { print $(now) - $t0 }") s"
        socks+="${socks:+,}$work/svc$k.sock"
      done
      status_json >"$out/gshare_status_before.json"
      bounded 900 "$python" "$bench/pool_services.py" drive --socks "$socks" \
        --seconds "$RUN_SECONDS" --think "$THINK" --check >"$out/gshare_drive.out" 2>"$out/gshare_drive.err"
      status_json >"$out/gshare_status_after.json"
      jobs_wait gshare "$out/gshare_times"
      meminfo_stop
      poll_stop
      find "$work/g" -name '*.log' -exec cp {} "$out/" \; 2>/dev/null
      daemon_down
      echo "result gshare startup_s=$(awk "BEGIN { print $(now) - $t0 }") $(tail -1 "$out/gshare_drive.out")"
      ;;
    *) say "unknown case $c" ;;
  esac
done
