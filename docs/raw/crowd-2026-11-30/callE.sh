#!/usr/bin/env bash
# Call E: the fitting pair (GPT-2 + ResNet-50, item 2) under gshare's MPS backend, under MPS and
# time-sliced (share_items.sh pair).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin
nvidia-smi --query-gpu=name,memory.used,memory.total,clocks.sm,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
OUT=$OUT/e timeout 320 bash test/bench/share_items.sh dist pair
cp "$OUT/e/summary.txt" "$OUT/summary.txt"; mv "$OUT/e/raw.tgz" "$OUT/call_all.tgz"; rm -rf "$OUT/e"
cat "$OUT/summary.txt"
