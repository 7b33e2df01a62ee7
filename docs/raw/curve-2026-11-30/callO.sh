#!/usr/bin/env bash
# Call O (e40e695 binaries, bench scripts of the commit that added this file): a training
# arriving beside the ResNet service, uncapped (the default) and capped for its life; item 1
# beside one and three trainings in turns, with time-slicing and MPS beside one.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin
vmstat -t 1 >"$OUT/vmstat.txt" 2>&1 &
vm=$!
OUT=$OUT/o timeout 520 bash test/bench/share_items.sh dist arrive1 service1 service3 peers1
kill $vm
cp "$OUT/o/summary.txt" "$OUT/summary.txt"
tar -C "$OUT" -czf "$OUT/callO_all.tgz" o vmstat.txt && rm -rf "$OUT/o" "$OUT/vmstat.txt"
cat "$OUT/summary.txt"
