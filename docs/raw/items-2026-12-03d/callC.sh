#!/usr/bin/env bash
# Item 1's ResNet service beside one and three trainings again (call A's ran on a cold machine
# and call B's service1 on a host whose CPUs slowed), then item 3's round with seed 14 that call
# B's time limit cut (alone, gsmps, gslowiso), the daemon logs at debug.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
OUT=$OUT/s PACK=1 timeout 190 bash test/bench/share_items.sh dist service1 service3 > "$OUT/s.log" 2>&1
echo "services rc=$?" >> "$OUT/s/summary.txt"
mv "$OUT/s/raw.tgz" "$OUT/s.raw.tgz" 2>/dev/null
cp "$OUT/s/summary.txt" "$OUT/s.summary.txt"; rm -rf "$OUT/s"; cat "$OUT/s.summary.txt"
LOG_LEVEL=debug ARRIVE_PREPARED=1 NOROOM_ROUNDS=1 NOROOM_CASES="alone gsmps gslowiso" \
  LLM_ARGS="--seed 14" OUT=$OUT/items timeout 235 bash test/bench/share_items.sh dist noroom > "$OUT/items.log" 2>&1
echo "items rc=$?" >> "$OUT/items/summary.txt"
(cd "$OUT/items" && tar czf "$OUT/raw.tgz" --remove-files --exclude summary.txt .)
grep -v '^  ' "$OUT/items/summary.txt"
