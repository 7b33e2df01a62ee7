#!/usr/bin/env bash
# Call Y (the daemon and shim of 7f665fb): the ResNet service beside eight trainings in turns
# again, under gshare's default and with every training capped at 25 % (batch_cap "always"),
# then the LLM decode service alone, bare and as gshare's MPS client, with its KV pool at 15 %
# and at 50 % of the GPU: whether the MPS floor of its TPOT grows with the memory it holds.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin
mkdir -p "$OUT/y"
nvidia-smi --query-gpu=name,memory.used,memory.total,clocks.sm,compute_mode --format=csv > "$OUT/y/gpu.txt" 2>&1
OUT=$OUT/y/n8 PARTS=service SERVICE_BATCH=12 TRAININGS=8 PAUSE_PERIOD=3 SERVICE_SECONDS=30 \
  SERVICE_CASES="gsmps gsmpscap" CAP_PCT=25 \
  timeout 185 bash test/bench/share_paths.sh dist > "$OUT/y/n8.log" 2>&1
grep -hE '^(service|phases)' "$OUT/y/n8.log" | sed "s/^/n=8 /" > "$OUT/summary.txt"
for u in 0.15 0.5; do
  SERVICE=llm LLM_RATE=2.5 LLM_UTIL=$u SERVICE_SECONDS=20 CASES="alone gshare0" MPS_MODE=auto \
    OUT=$OUT/y/util$u timeout 85 bash test/bench/priority.sh dist > "$OUT/y/util$u.log" 2>&1
  grep -hE '^case=' "$OUT/y/util$u.log" | sed "s/^/util=$u /" >> "$OUT/summary.txt"
done
tar -C "$OUT" -czf "$OUT/callY_all.tgz" y && rm -rf "$OUT/y"
cat "$OUT/summary.txt"
