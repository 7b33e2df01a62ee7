#!/usr/bin/env bash
# Issue 43's items 1 (the ResNet service beside one and three trainings under gshare's default;
# beside one time-sliced and under MPS, the peers) and 4 (the idle 70 GiB notebook, a 74 GiB
# training arriving) at this tree, one H200.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
OUT=$OUT/items PACK=0 timeout 580 bash test/bench/share_items.sh dist service1 service3 notebook peers1 \
  > "$OUT/items.log" 2>&1
echo "items rc=$?" >> "$OUT/items/summary.txt"
tar -C "$OUT" -czf "$OUT/raw.tgz" --exclude items/summary.txt items items.log
cp "$OUT/items/summary.txt" "$OUT/summary.txt"
rm -rf "$OUT/items"
cat "$OUT/summary.txt"
