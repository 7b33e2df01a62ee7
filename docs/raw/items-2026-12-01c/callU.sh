#!/usr/bin/env bash
# Issue 43's item 1, one H200: the LLM decode service beside three GPT-2 trainings alone, under
# gshare with every training capped at 25 % of the threads (gsmpscap) and isolated (gsiso); then
# the ResNet service beside eight trainings at gshare's defaults.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
t0=$SECONDS
LLM_CASES="alone gsmpscap gsiso" OUT=$OUT/items PACK=0 timeout 220 \
  bash test/bench/share_items.sh dist llm3 > "$OUT/items.log" 2>&1
echo "llm3 rc=$? $((SECONDS - t0))s" > "$OUT/times.txt"
t0=$SECONDS
OUT=$OUT/eight PACK=0 timeout 150 bash test/bench/share_items.sh dist service8 > "$OUT/eight.log" 2>&1
echo "service8 rc=$? $((SECONDS - t0))s" >> "$OUT/times.txt"
{ cat "$OUT/times.txt"; echo "== llm3"; cat "$OUT/items/summary.txt"
  echo "== service8"; cat "$OUT/eight/summary.txt"; } > "$OUT/summary.txt" 2>&1
tar -C "$OUT" -czf "$OUT/call_raw.tgz" items items.log eight eight.log 2>/dev/null &&
  rm -rf "$OUT/items" "$OUT/eight"
cat "$OUT/summary.txt"
