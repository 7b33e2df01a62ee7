#!/usr/bin/env bash
# Issue 43's items 2 and 1, one H200: the fitting pair (GPT-2 + ResNet-50) under gshare, MPS and
# time-slicing; then the LLM decode service (rate 2.5/s, KV pool at half the GPU, 30 s window,
# the trainings stopped and continued every 3 s) beside eight GPT-2 trainings: alone,
# time-sliced, gshare's default and the service isolated.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
t0=$SECONDS
OUT=$OUT/items PACK=0 timeout 290 bash test/bench/share_items.sh dist pair > "$OUT/items.log" 2>&1
echo "items rc=$? $((SECONDS - t0))s" > "$OUT/times.txt"
t0=$SECONDS
OUT=$OUT/llm8 SERVICE=llm LLM_RATE=2.5 SERVICE_SECONDS=30 PAUSE_PERIOD=3 PARTS=service \
  TRAININGS=8 SERVICE_CASES="alone bare gsmps gsiso" DEADLINE=200 \
  timeout 250 bash test/bench/share_paths.sh dist > "$OUT/llm8.log" 2>&1
echo "llm8 rc=$? $((SECONDS - t0))s" >> "$OUT/times.txt"
{ cat "$OUT/times.txt" "$OUT/items/summary.txt"; echo "== llm8"; grep -hE '^(service|phases)' "$OUT/llm8.log"
  for c in gsmps gsiso; do
    find "$OUT/llm8" -name 'census.*' -path "*$c*" -exec grep -hE '^#(beside_denied|behind|narrowed) ' {} + |
      awk -v c="$c" '{s[$1]+=$2} END {for (k in s) print c " trainings " k, s[k]}'
  done
} > "$OUT/summary.txt" 2>&1
tar -C "$OUT" -czf "$OUT/call_raw.tgz" items items.log llm8 llm8.log 2>/dev/null && rm -rf "$OUT/items" "$OUT/llm8"
cat "$OUT/summary.txt"
