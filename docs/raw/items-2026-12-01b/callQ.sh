#!/usr/bin/env bash
# Issue 43's items 3 and 1, one H200: the no-room LLM service again (alone, gshare's MPS backend,
# the service asking for isolation); then the LLM decode service (rate 2.5/s, KV pool at half
# the GPU, 30 s window, the trainings stopped and continued every 3 s) beside three GPT-2
# trainings: alone, time-sliced, MPS (client priority 1, 25 % cap), gshare's default and the
# service isolated.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
t0=$SECONDS
NOROOM_CASES="alone gsmps gsiso" OUT=$OUT/items PACK=0 timeout 200 \
  bash test/bench/share_items.sh dist noroom > "$OUT/items.log" 2>&1
echo "items rc=$? $((SECONDS - t0))s" > "$OUT/times.txt"
t0=$SECONDS
OUT=$OUT/llm3 SERVICE=llm LLM_RATE=2.5 SERVICE_SECONDS=30 PAUSE_PERIOD=3 PARTS=service \
  TRAININGS=3 SERVICE_CASES="alone bare mpscap gsmps gsiso" CAP_PCT=25 DEADLINE=300 \
  timeout 340 bash test/bench/share_paths.sh dist > "$OUT/llm3.log" 2>&1
echo "llm3 rc=$? $((SECONDS - t0))s" >> "$OUT/times.txt"
{ cat "$OUT/times.txt" "$OUT/items/summary.txt"; echo "== llm3"; grep -hE '^(service|phases)' "$OUT/llm3.log"
  for c in gsmps gsiso; do
    find "$OUT/llm3" -name 'census.*' -path "*$c*" -exec grep -hE '^#(beside_denied|behind|narrowed) ' {} + |
      awk -v c="$c" '{s[$1]+=$2} END {for (k in s) print c " trainings " k, s[k]}'
  done
} > "$OUT/summary.txt" 2>&1
tar -C "$OUT" -czf "$OUT/call_raw.tgz" items items.log llm3 llm3.log 2>/dev/null && rm -rf "$OUT/items" "$OUT/llm3"
cat "$OUT/summary.txt"
