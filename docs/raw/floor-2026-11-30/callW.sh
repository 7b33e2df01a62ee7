#!/usr/bin/env bash
# Call W (the daemon and shim of 7f665fb; mps_floor.* of this stop with its `io` pass and wide
# shape): what being an MPS client costs latency-bound and bandwidth-bound kernels and a decode
# step's token copies, then the ResNet service beside eight trainings under gshare and the same
# time-sliced and under MPS (peers8).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin
mkdir -p "$OUT/w"
nvidia-smi --query-gpu=name,memory.used,memory.total,clocks.sm,compute_mode --format=csv > "$OUT/w/gpu.txt" 2>&1
CASES="bare mps gsiso gsmps" OUT=$OUT/w timeout 200 bash test/bench/mps_floor.sh dist > "$OUT/w/mps_floor.log" 2>&1
OUT=$OUT/w/items timeout 310 bash test/bench/share_items.sh dist service8 peers8 >/dev/null 2>&1
{ cat "$OUT/w/mps_floor/summary.txt"; cat "$OUT/w/items/summary.txt"; } > "$OUT/summary.txt"
tar -C "$OUT" -czf "$OUT/callW_all.tgz" w && rm -rf "$OUT/w"
cat "$OUT/summary.txt"
