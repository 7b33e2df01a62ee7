#!/usr/bin/env bash
# Issue 43's item 3 in rounds as callB.sh, at the tree where a service stays resident through its
# idle gaps (its memory on the GPU counts, SharingMode::OnGpu);
# the daemon logs at debug (each lease request and release). The trainings prepared (ARRIVE_PREPARED=1): they
# build their model on the CPU before the service starts and are let go at 6 s, so the arrival
# is the training's first CUDA call. Cases alone, gsiso, gsmps; three rounds, round k's requests
# drawn from seed k. The round logs go into logs.tgz and the case folders into raw.tgz: a call
# returns at most eight files.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
LOG_LEVEL=debug ARRIVE_PREPARED=1 NOROOM_ROUNDS=${ROUNDS:-3} NOROOM_CASES="${CASES:-alone gsiso gsmps}" \
  OUT=$OUT/items timeout 560 bash test/bench/share_items.sh dist noroom > "$OUT/items.log" 2>&1
echo "items rc=$?" >> "$OUT/items/summary.txt"
(cd "$OUT/items" && tar czf "$OUT/logs.tgz" --remove-files noroom.r*.log)
(cd "$OUT/items" && tar czf "$OUT/raw.tgz" --exclude summary.txt .)
grep -v '^  ' "$OUT/items/summary.txt"
