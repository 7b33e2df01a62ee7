#!/usr/bin/env bash
# Issue 43's item 1 at the one-turn default, one H200: the LLM decode service (rate 2.5/s, KV
# pool at half the GPU, 30 s window, the training stopped and continued every 3 s) alone, beside
# one GPT-2 training time-sliced, under MPS (client priority 1, 25 % cap) and under gshare's MPS
# backend; then the ResNet service beside one and three trainings under gshare (share_items.sh
# service1 service3).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
t0=$SECONDS
OUT=$OUT/llm SERVICE=llm LLM_RATE=2.5 SERVICE_SECONDS=30 PAUSE_PERIOD=3 PARTS=service \
  TRAININGS=1 SERVICE_CASES="alone bare mpscap gsmps" CAP_PCT=25 DEADLINE=250 \
  timeout 330 bash test/bench/share_paths.sh dist > "$OUT/llm.log" 2>&1
echo "llm rc=$? $((SECONDS - t0))s" > "$OUT/times.txt"
t0=$SECONDS
OUT=$OUT/items PACK=0 timeout 200 bash test/bench/share_items.sh dist service1 service3 > "$OUT/items.log" 2>&1
echo "items rc=$? $((SECONDS - t0))s" >> "$OUT/times.txt"
{ cat "$OUT/times.txt"; grep -hE '^(service|phases|llm)' "$OUT/llm.log"
  find "$OUT/llm" -name 'census.*' -path '*gsmps*' -exec grep -hE '^#(beside_denied|behind|narrowed) ' {} + |
    awk '{s[$1]+=$2} END {for (k in s) print "llm trainings " k, s[k]}'
  cat "$OUT/items/summary.txt"
  find "$OUT/items" -name 'census.*' -exec grep -hE '^#beside_denied ' {} + | awk '{s+=$2} END {print "items #beside_denied", s+0}'
} > "$OUT/summary.txt" 2>&1
tar -C "$OUT" -czf "$OUT/call_raw.tgz" llm items llm.log items.log 2>/dev/null && rm -rf "$OUT/llm" "$OUT/items"
cat "$OUT/summary.txt"
