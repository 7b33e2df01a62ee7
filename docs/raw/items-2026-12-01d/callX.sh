#!/usr/bin/env bash
# Issue 43's item 3 in rounds, one H200: the no-room LLM service alone and under gshare's default
# with a training arriving 6 s in, six rounds, round k's requests drawn from seed k; each case's
# TTFT p99 over the pooled requests ÷ alone's, with a bootstrap interval.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
NOROOM_ROUNDS=${ROUNDS:-6} NOROOM_CASES="${CASES:-alone gsmps}" OUT=$OUT/items timeout 560 \
  bash test/bench/share_items.sh dist noroom > "$OUT/items.log" 2>&1
echo "items rc=$?" >> "$OUT/items/summary.txt"
grep -v '^  ' "$OUT/items/summary.txt"
