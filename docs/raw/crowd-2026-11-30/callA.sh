#!/usr/bin/env bash
# Runs on 31d252f with crowded.patch (this folder) applied: the gsmpscrowd case needs it.
# Call A: one decode step of the LLM service's model profiled bare, as a client of a private MPS
# and of gshare's (which kernels make the client's TPOT floor), then the ResNet service beside
# eight trainings in turns under gshare's default and with batch_cap "crowded" (the trainings
# that start beside three or more capped at 25 %), back to back.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin
nvidia-smi --query-gpu=name,memory.used,memory.total,clocks.sm,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
OUT=$OUT/a1 timeout 340 bash test/bench/share_items.sh dist decodeprof
mkdir -p "$OUT/a2"
OUT=$OUT/a2/n8 PARTS=service SERVICE_BATCH=12 TRAININGS=8 PAUSE_PERIOD=3 SERVICE_SECONDS=30 \
  SERVICE_CASES="gsmps gsmpscrowd" CAP_PCT=25 CROWD=3 \
  timeout 200 bash test/bench/share_paths.sh dist > "$OUT/a2/n8.log" 2>&1
{ echo "== a1"; cat "$OUT/a1/summary.txt"; echo "== a2"; grep -hE '^(service|phases)' "$OUT/a2/n8.log"
  grep -rh "capped\|% of the threads" "$OUT/a2" --include=daemon.log | sort | uniq -c | head -5
  find "$OUT/a2" -name 'service_census.*' -exec grep -h '#behind' {} + ; } > "$OUT/summary.txt" 2>&1
tar -C "$OUT" -czf "$OUT/callA_all.tgz" a1 a2 && rm -rf "$OUT/a1" "$OUT/a2"
cat "$OUT/summary.txt"
