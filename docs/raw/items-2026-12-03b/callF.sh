#!/usr/bin/env bash
# Issue 43's item 3 with the service an MPS client of gshare's server (gsmps, gshare's default)
# beside alone, three rounds, round k's requests drawn from seed k, the trainings prepared
# (ARRIVE_PREPARED=1: their first CUDA call is the arrival, at 6 s); the daemon logs at debug.
# Round logs go into logs.tgz, the case folders into raw.tgz.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
LOG_LEVEL=debug ARRIVE_PREPARED=1 NOROOM_ROUNDS=${ROUNDS:-3} NOROOM_CASES="${CASES:-alone gsmps}" \
  OUT=$OUT/items timeout 570 bash test/bench/share_items.sh dist noroom > "$OUT/items.log" 2>&1
echo "items rc=$?" >> "$OUT/items/summary.txt"
(cd "$OUT/items" && tar czf "$OUT/logs.tgz" --remove-files noroom.r*.log)
(cd "$OUT/items" && tar czf "$OUT/raw.tgz" --exclude summary.txt .)
grep -v '^  ' "$OUT/items/summary.txt"
