#!/usr/bin/env bash
# Item 3: what a waiting MPS client costs the decode step. Two rounds (seeds 16-17): alone,
# gsmps (the training an MPS client, waiting for memory), gsidle (a second MPS client that only
# creates its context: no memory asked, no wait), gslowiso (the training outside MPS).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
LOG_LEVEL=debug ARRIVE_PREPARED=1 NOROOM_ROUNDS=${ROUNDS:-2} NOROOM_SEED0=${SEED0:-15} \
  NOROOM_CASES="${CASES:-alone gsmps gsidle gslowiso}" \
  OUT=$OUT/items timeout ${ITEMS_TMO:-480} bash test/bench/share_items.sh dist noroom > "$OUT/items.log" 2>&1
echo "items rc=$?" >> "$OUT/items/summary.txt"
cp "$OUT/items/summary.txt" "$OUT/summary.txt"
(cd "$OUT/items" && tar czf "$OUT/raw.tgz" --exclude summary.txt .) && rm -rf "$OUT/items"
grep -v '^  ' "$OUT/summary.txt"
