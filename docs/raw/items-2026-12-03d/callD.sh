#!/usr/bin/env bash
# Item 3 with gslowiso as meant: calls B and C set the training's GSHARE_MPS=0 inside its
# `gshare run` (the daemon did not see it: the training was an MPS client, as in gsmps); now
# its `gshare run` has it (TRAIN_RUN_ENV). One round, seed 15: alone, gsmps, gslowiso.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
LOG_LEVEL=debug ARRIVE_PREPARED=1 NOROOM_ROUNDS=1 NOROOM_CASES="${CASES:-alone gsmps gslowiso}" \
  LLM_ARGS="--seed 15" OUT=$OUT/items timeout 185 bash test/bench/share_items.sh dist noroom > "$OUT/items.log" 2>&1
echo "items rc=$?" >> "$OUT/items/summary.txt"
(cd "$OUT/items" && tar czf "$OUT/raw.tgz" --remove-files --exclude summary.txt .)
grep -v '^  ' "$OUT/items/summary.txt"
