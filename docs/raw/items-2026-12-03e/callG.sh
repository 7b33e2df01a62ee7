#!/usr/bin/env bash
# The arrival rule's placement as the driver sees it (test/bench/mps_arrival.sh: nvidia-smi's
# process type of a batch job arriving beside a service that holds 90 % of the free memory, and
# after it), then item 3 one more round (seed 20): alone, gsmps (the rule), gsmpsjoin (off).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
OUT=$OUT/arrival timeout 120 bash test/bench/mps_arrival.sh dist > "$OUT/arrival.txt" 2>&1
echo "arrival rc=$?" >> "$OUT/arrival.txt"
cat "$OUT/arrival.txt"
LOG_LEVEL=debug ARRIVE_PREPARED=1 NOROOM_ROUNDS=1 LLM_ARGS="--seed 20" \
  NOROOM_CASES="${CASES:-alone gsmps gsmpsjoin}" \
  OUT=$OUT/items timeout ${ITEMS_TMO:-300} bash test/bench/share_items.sh dist noroom > "$OUT/items.log" 2>&1
echo "items rc=$?" >> "$OUT/items/summary.txt"
cp "$OUT/items/summary.txt" "$OUT/summary.txt"
(cd "$OUT/items" && tar czf "$OUT/raw.tgz" --exclude summary.txt .) && rm -rf "$OUT/items"
grep -v '^  ' "$OUT/summary.txt"
