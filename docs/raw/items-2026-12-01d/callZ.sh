#!/usr/bin/env bash
# Issue 43's item 3 in rounds, one H200, at the tree that accounts a swap-in's wait for room:
# the no-room LLM service alone and asking for isolation (gsiso), a training arriving 6 s in,
# three rounds, round k's requests drawn from seed k (Y's seeds 1-3); each case's pooled TTFT
# p99 ÷ alone's, and the handoffs' parts.
# The round logs go into logs.tgz: a call returns at most eight files.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
NOROOM_ROUNDS=${ROUNDS:-3} NOROOM_CASES="${CASES:-alone gsiso}" OUT=$OUT/items timeout 560 \
  bash test/bench/share_items.sh dist noroom > "$OUT/items.log" 2>&1
echo "items rc=$?" >> "$OUT/items/summary.txt"
(cd "$OUT/items" && tar czf "$OUT/logs.tgz" --remove-files noroom.r*.log)
grep -v '^  ' "$OUT/items/summary.txt"
