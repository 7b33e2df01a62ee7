#!/usr/bin/env bash
# Call L (bf972ea binaries): item 1's SM partition curve, measured in turns, with the service's
# own GPU time and its wait split (phase_stats.py), and the GPU's memory clock, HBM temperature
# and compute processes sampled (priority.sh's gpu_samples.csv, gpu_apps.csv).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin
vmstat -t 1 >"$OUT/vmstat.txt" 2>&1 &
vm=$!
run() { SM_PCT=$1 OUT=$OUT/$2 timeout 150 bash test/bench/share_items.sh dist "$3"; }
run 50 p50_1 service1
run 70 p70_1 service1
run 60 p60_1 service1
run 50 p50_3 service3
run 70 p70_3 service3
run 50 p50_8 service8
kill $vm
for d in "$OUT"/p*; do echo "== $d"; cat "$d/summary.txt"; done >"$OUT/summary.txt"
cat "$OUT/summary.txt"
