#!/usr/bin/env bash
# Issue 43's items 2, 1 and 3 once more, one H200: the fitting pair; the ResNet service beside
# eight trainings at gshare's defaults; the no-room service alone and under gshare's default.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
t0=$SECONDS
NOROOM_CASES="alone gsmps" OUT=$OUT/items PACK=0 timeout 400 \
  bash test/bench/share_items.sh dist pair service8 noroom > "$OUT/items.log" 2>&1
echo "items rc=$? $((SECONDS - t0))s" > "$OUT/times.txt"
cat "$OUT/times.txt" "$OUT/items/summary.txt" > "$OUT/summary.txt" 2>&1
tar -C "$OUT" -czf "$OUT/call_raw.tgz" items items.log 2>/dev/null && rm -rf "$OUT/items"
cat "$OUT/summary.txt"
