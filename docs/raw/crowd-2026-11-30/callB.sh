#!/usr/bin/env bash
# Runs on 31d252f with crowded.patch (this folder) applied: the gsmpscrowd case needs it.
# Call B: the ResNet service beside eight trainings in turns under gshare's default, with
# batch_cap "crowded" (trainings that start beside three or more capped at 25 %) and "always"
# (all eight capped), then the no-room LLM service with a training arriving (item 3).
# CASES8, CAP_PCT (default 25) and SETS (default "noroom", share_items.sh sets) change what
# runs.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin
nvidia-smi --query-gpu=name,memory.used,memory.total,clocks.sm,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
mkdir -p "$OUT/b1"
OUT=$OUT/b1/n8 PARTS=service SERVICE_BATCH=12 TRAININGS=8 PAUSE_PERIOD=3 SERVICE_SECONDS=30 \
  SERVICE_CASES="${CASES8:-gsmps gsmpscrowd gsmpscap}" CAP_PCT="${CAP_PCT:-25}" CROWD=3 \
  timeout 290 bash test/bench/share_paths.sh dist > "$OUT/b1/n8.log" 2>&1
OUT=$OUT/b2 timeout 250 bash test/bench/share_items.sh dist ${SETS:-noroom}
{ echo "== b1"; grep -hE '^(service|phases)' "$OUT/b1/n8.log"
  find "$OUT/b1" -name 'service_census.*' -exec grep -h '#behind' {} +
  echo "== b2"; cat "$OUT/b2/summary.txt"; } > "$OUT/summary.txt" 2>&1
tar -C "$OUT" -czf "$OUT/call_all.tgz" b1 b2 && rm -rf "$OUT/b1" "$OUT/b2"
cat "$OUT/summary.txt"
