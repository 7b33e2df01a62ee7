#!/usr/bin/env bash
# Issue 43's items 1 (the ResNet service beside eight trainings under gshare's default; beside three
# time-sliced and under MPS, the peers) and 2 (the fitting pair under gshare, MPS and
# time-slicing) at this tree, one H200.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
OUT=$OUT/items PACK=0 timeout 580 bash test/bench/share_items.sh dist service8 peers3 pair \
  > "$OUT/items.log" 2>&1
echo "items rc=$?" >> "$OUT/items/summary.txt"
tar -C "$OUT" -czf "$OUT/raw.tgz" --exclude items/summary.txt items items.log
cp "$OUT/items/summary.txt" "$OUT/summary.txt"
rm -rf "$OUT/items"
cat "$OUT/summary.txt"
