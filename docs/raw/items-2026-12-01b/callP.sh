#!/usr/bin/env bash
# Issue 43's items 3, 2 and 4 at 8b28b90's tree, one H200: the no-room LLM service (KV pool at
# 92 % of the GPU, a training arriving 6 s into its 25 s window) alone, under gshare's MPS
# backend and asking for isolation (GSHARE_MPS=0); the fitting pair (GPT-2 + ResNet-50) under
# gshare, MPS and time-slicing; the idle 70 GiB notebook and a 74 GiB training.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
NOROOM_CASES="alone gsmps gsiso" OUT=$OUT/items PACK=0 timeout 540 \
  bash test/bench/share_items.sh dist noroom pair notebook > "$OUT/items.log" 2>&1
echo "items rc=$?" > "$OUT/times.txt"
cat "$OUT/times.txt" "$OUT/items/summary.txt" > "$OUT/summary.txt" 2>&1
tar -C "$OUT" -czf "$OUT/call_raw.tgz" items items.log 2>/dev/null && rm -rf "$OUT/items"
cat "$OUT/summary.txt"
