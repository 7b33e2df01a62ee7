#!/usr/bin/env bash
# Call V (the daemon and shim of 7f665fb; mps_floor.* of this stop): what being an MPS client
# costs a chain of small kernels (bare, MPS, MPS with 1 and 32 connections, gshare isolated and
# as its server's client), then the ResNet service beside three trainings under gshare (the
# backlog cap's release on the GPU) and the same time-sliced and under MPS (peers3).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin
mkdir -p "$OUT/v"
nvidia-smi --query-gpu=name,memory.used,memory.total,clocks.sm,compute_mode --format=csv > "$OUT/v/gpu.txt" 2>&1
OUT=$OUT/v timeout 220 bash test/bench/mps_floor.sh dist > "$OUT/v/mps_floor.log" 2>&1
OUT=$OUT/v/items timeout 290 bash test/bench/share_items.sh dist service3 peers3 >/dev/null 2>&1
{ cat "$OUT/v/mps_floor/summary.txt"; cat "$OUT/v/items/summary.txt"; } > "$OUT/summary.txt"
tar -C "$OUT" -czf "$OUT/callV_all.tgz" v && rm -rf "$OUT/v"
cat "$OUT/summary.txt"
