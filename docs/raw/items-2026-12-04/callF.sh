#!/usr/bin/env bash
# Issue 43's item 3 (the no-room LLM service, a training arriving; two more rounds, seeds
# 25-26: alone and gshare's default, where the training waits at its first CUDA call for room)
# at this tree, one H200.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
ARRIVE_PREPARED=1 NOROOM_ROUNDS=2 NOROOM_SEED0=24 NOROOM_CASES="alone gsmps" \
  OUT=$OUT/items PACK=0 timeout 280 bash test/bench/share_items.sh dist noroom > "$OUT/items.log" 2>&1
echo "items rc=$?" >> "$OUT/items/summary.txt"
for f in $(find "$OUT/items" -name daemon.log); do
  echo "== $f"; grep -E "MPS client|outside MPS|waits at its first|joins MPS" "$f"
done > "$OUT/placement.txt" 2>&1
tar -C "$OUT" -czf "$OUT/raw.tgz" --exclude items/summary.txt items items.log
cp "$OUT/items/summary.txt" "$OUT/summary.txt"
rm -rf "$OUT/items"
cat "$OUT/summary.txt" "$OUT/placement.txt"
