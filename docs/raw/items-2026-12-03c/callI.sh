#!/usr/bin/env bash
# Issue 43's item 1, the LLM decode service beside one GPT-2 training (as call L of 2026-12-01):
# the low end of the SM partition's trade-off curve. a: alone and the service isolated (gsiso);
# b, c: gshare's default (gsmps) with the training's partition at 10 % and 5 % of the SMs.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
common=(SERVICE=llm LLM_RATE=2.5 SERVICE_SECONDS=30 PAUSE_PERIOD=3 PARTS=service TRAININGS=1)
run_part() {  # run_part NAME LIMIT ENV...
  local name=$1 limit=$2 t0=$SECONDS
  shift 2
  env "${common[@]}" OUT="$OUT/$name" "$@" timeout "$limit" bash test/bench/share_paths.sh dist \
    > "$OUT/$name.log" 2>&1
  echo "$name ($*) rc=$? $((SECONDS - t0))s" >> "$OUT/times.txt"
}
run_part a 200 SERVICE_CASES="alone gsiso"
run_part b 120 SERVICE_CASES=gsmps SM_PCT=10
run_part c 120 SERVICE_CASES=gsmps SM_PCT=5
{ cat "$OUT/times.txt"
  for p in a b c; do echo "== $p"; grep -hE '^(service|phases)' "$OUT/$p.log"
    find "$OUT/$p" -name 'census.*' -path '*gs*' -exec grep -hE '^#(beside_denied|behind|narrowed) ' {} + |
      awk '{s[$1]+=$2} END {for (k in s) print "trainings " k, s[k]}'; done
} > "$OUT/summary.txt" 2>&1
tar -C "$OUT" -czf "$OUT/call_raw.tgz" a b c a.log b.log c.log 2>/dev/null && rm -rf "$OUT/a" "$OUT/b" "$OUT/c"
cat "$OUT/summary.txt"
