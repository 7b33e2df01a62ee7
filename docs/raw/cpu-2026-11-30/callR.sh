#!/usr/bin/env bash
# Call R (810eaa3's daemon and shim): item 1 again beside one, three and eight trainings with
# one training's peers (time-slicing, MPS capped) in the same call, and the no-room LLM service
# (item 3). No pinning: call Q found the VM's 16 CPUs one thread per core, and no training
# thread on the service's CPU.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin
OUT=$OUT/r timeout 560 bash test/bench/share_items.sh dist service1 peers1 service3 service8 noroom \
  >/dev/null 2>&1
cp "$OUT/r/summary.txt" "$OUT/summary.txt"
tar -C "$OUT" -czf "$OUT/callR_all.tgz" r && rm -rf "$OUT/r"
cat "$OUT/summary.txt"
