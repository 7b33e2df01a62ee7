#!/usr/bin/env bash
# Issue 43's item 3 a third time, one H200, with a control: the no-room LLM service alone; with
# the same training arriving bare (no gshare: it runs out of memory once it allocates, after
# the same process start); under gshare's MPS backend; asking for isolation. The requests are
# paired with the alone run's (llm_pairs.py).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
NOROOM_CASES="alone bare gsmps gsiso" OUT=$OUT/items PACK=0 timeout 230 \
  bash test/bench/share_items.sh dist noroom > "$OUT/items.log" 2>&1
echo "items rc=$?" > "$OUT/times.txt"
cat "$OUT/times.txt" "$OUT/items/summary.txt" > "$OUT/summary.txt" 2>&1
tar -C "$OUT" -czf "$OUT/call_raw.tgz" items items.log 2>/dev/null && rm -rf "$OUT/items"
cat "$OUT/summary.txt"
