#!/usr/bin/env bash
# Issue 43's items 2 and 4 at this tree, one H200: the fitting pair (GPT-2 + ResNet-50) under
# gshare, MPS and time-slicing (makespans), then the idle 70 GiB notebook with a 74 GiB training
# arriving, alone and under gshare (each training step traced).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
OUT=$OUT/items PACK=0 timeout 570 bash test/bench/share_items.sh dist pair notebook > "$OUT/items.log" 2>&1
echo "items rc=$?" >> "$OUT/items/summary.txt"
tar -C "$OUT" -czf "$OUT/raw.tgz" --exclude items/summary.txt items items.log
cp "$OUT/items/summary.txt" "$OUT/summary.txt"
rm -rf "$OUT/items"
cat "$OUT/summary.txt"
