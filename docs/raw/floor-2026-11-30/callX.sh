#!/usr/bin/env bash
# Call X (the daemon and shim of 7f665fb): the ResNet service beside eight, then three trainings,
# in turns (stopped and continued every 3 s), under gshare's default (SM partition, no cap),
# under gshare with every training capped at 25 % of the threads (batch_cap "always"), and under
# MPS with the same cap and client priority: calls V and W found MPS's cap ahead of gshare's
# default beside three and eight.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin
mkdir -p "$OUT/x"
nvidia-smi --query-gpu=name,memory.used,memory.total,clocks.sm,compute_mode --format=csv > "$OUT/x/gpu.txt" 2>&1
for n in 8 3; do
  OUT=$OUT/x/n$n PARTS=service SERVICE_BATCH=12 TRAININGS=$n PAUSE_PERIOD=3 SERVICE_SECONDS=30 \
    SERVICE_CASES="gsmps gsmpscap mpscap" CAP_PCT=25 \
    timeout $((n == 8 ? 280 : 230)) bash test/bench/share_paths.sh dist > "$OUT/x/n$n.log" 2>&1
  grep -hE '^(service|phases)' "$OUT/x/n$n.log" | sed "s/^/n=$n /"
done > "$OUT/summary.txt"
tar -C "$OUT" -czf "$OUT/callX_all.tgz" x && rm -rf "$OUT/x"
cat "$OUT/summary.txt"
