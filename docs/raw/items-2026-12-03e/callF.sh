#!/usr/bin/env bash
# Item 3 with the arrival rule ([mps] join_free_percentage, default 15): two rounds (seeds
# 18-19): alone, gsmps (gshare's default: the training arriving while the service left ~7 % of
# the GPU free runs outside MPS) and gsmpsjoin (the rule off: it joins, as before).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
LOG_LEVEL=debug ARRIVE_PREPARED=1 NOROOM_ROUNDS=${ROUNDS:-2} NOROOM_SEED0=${SEED0:-17} \
  NOROOM_CASES="${CASES:-alone gsmps gsmpsjoin}" \
  OUT=$OUT/items timeout ${ITEMS_TMO:-480} bash test/bench/share_items.sh dist noroom > "$OUT/items.log" 2>&1
echo "items rc=$?" >> "$OUT/items/summary.txt"
cp "$OUT/items/summary.txt" "$OUT/summary.txt"
# Where each job ran: the daemon's placement lines and nvidia-smi's process types (M+C: an MPS
# client; C: outside).
for f in $(find "$OUT/items" -name daemon.log); do
  echo "== $f"; grep -E "MPS client|outside MPS" "$f"
done > "$OUT/placement.txt" 2>&1
for f in $(find "$OUT/items" -name mps_view.txt); do
  echo "== $f"; grep -E "M\+C|  C  " "$f" | head -8
done >> "$OUT/placement.txt" 2>&1
(cd "$OUT/items" && tar czf "$OUT/raw.tgz" --exclude summary.txt .) && rm -rf "$OUT/items"
grep -v '^  ' "$OUT/summary.txt"
cat "$OUT/placement.txt"
